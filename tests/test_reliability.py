"""An interrupted or failing writer never blocks, hides or corrupts the index; hostile names and
bytes stay inert. Fault tests start coderiv as a subprocess and kill it by its PID only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coderiv import Index, Searcher, StoreSpec
from coderiv.cli.main import main
from coderiv.errors import CoderivError, CorruptIndexError
from coderiv.index.format import storage
from coderiv.system import inherited_locks
from tests.support.faults import SRC, WORDS, slow_collection
from tests.support.files import write_docs
from tests.support.processes import alive, children_of, signal_and_reap, wait_for


def start_index(source: Path, index: Path, stderr: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    with open(stderr, "wb") as errors:
        return subprocess.Popen(
            [sys.executable, "-m", "coderiv.cli.main", "index", str(source), "--index", str(index), "--workers", "2", "-q"],
            stdout=subprocess.DEVNULL, stderr=errors, env=env, start_new_session=True,
        )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table from /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.faults
def test_a_killed_writer_leaves_no_worker_and_no_lock(tmp_path: Path, signum: int) -> None:
    source = slow_collection(tmp_path / "c")
    proc = start_index(source, tmp_path / "i", tmp_path / "stderr")
    workers = wait_for(lambda: children_of(proc.pid) if len(children_of(proc.pid)) >= 2 else None)
    time.sleep(0.3)  # the workers are busy analysing
    signal_and_reap(proc, signum if workers else signal.SIGKILL)
    assert workers, "the worker pool did not start"
    assert wait_for(lambda: not any(alive(w) for w in workers), 10), "orphan workers survived their parent"
    if signum != signal.SIGKILL:
        assert proc.returncode == 128 + signum
        message = f"{signal.Signals(signum).name}: any index being written was left as it was before"
        assert message in (tmp_path / "stderr").read_text()
    # the next writer is not blocked, and leaves no leftovers
    report = Index.update_from(source, tmp_path / "i", workers=1)
    assert report.n_docs == 240
    assert sorted(p.name for p in (tmp_path / "i").iterdir() if p.name.startswith("tmp-")) == []


DOCS = {f"d{i}.txt": " ".join(WORDS[i:] + WORDS[:i]) + f" unique{i} words here" for i in range(8)}


def test_an_update_never_carries_damage_forward(tmp_path: Path) -> None:
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    generation = Index.open(tmp_path / "i").generation
    keys = next(generation.rglob("keys.npy"))
    data = bytearray(keys.read_bytes())
    data[-64:] = bytes(64)  # zero the last 64 bytes of the terms store's keys
    keys.write_bytes(bytes(data))
    with pytest.raises(CorruptIndexError, match="index damaged: store-0/keys.npy block 0"):  # checked as read
        Searcher(Index.open(tmp_path / "i")).search(DOCS["d1.txt"], top=3)
    write_docs(tmp_path / "c", {"d0.txt": DOCS["d0.txt"] + " and one more sentence"})
    report = Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert report.rebuilt is not None and report.rebuilt.startswith("the index was damaged")
    index = Index.open(tmp_path / "i")
    assert index.verify() == []
    Index.update_from(tmp_path / "c", tmp_path / "fresh", workers=1)
    fresh = Index.open(tmp_path / "fresh")
    for text in DOCS.values():  # every answer equals a fresh build's
        got, want = Searcher(index).search(text, top=8), Searcher(fresh).search(text, top=8)
        assert [(m.doc_id, m.score) for m in got.matches] == [(m.doc_id, m.score) for m in want.matches]


def test_rebuilding_a_damaged_index_keeps_its_stores_and_analysis(tmp_path: Path) -> None:
    write_docs(tmp_path / "c", DOCS)
    stores = [StoreSpec.create("fingerprint", strategy="anchor", g=2)]
    from coderiv.text.analysis import AnalysisSettings

    Index.update_from(tmp_path / "c", tmp_path / "i", settings=AnalysisSettings(stem=True), stores=stores, workers=1)
    (tmp_path / "i" / "CURRENT").write_bytes(b"\xff\xfe not a name")
    with pytest.raises(CorruptIndexError, match="its CURRENT file is damaged"):
        Index.open(tmp_path / "i")
    report = Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert report.rebuilt == "the index was damaged; rebuilt with the analysis and stores it recorded"
    index = Index.open(tmp_path / "i")
    assert index.settings.stem is True
    assert sorted(index.specs) == sorted(["terms", stores[0].name])


@pytest.mark.parametrize("pointer", ["gen-000001/../../../other/gen-000001", "../gen-000001", "gen-1", "gen-0000001"])
def test_current_must_name_a_generation_of_this_index(tmp_path: Path, pointer: str) -> None:
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    (tmp_path / "i" / "CURRENT").write_text(pointer + "\n")
    with pytest.raises(CorruptIndexError, match=r"names a missing generation"):
        Index.open(tmp_path / "i")


def test_current_or_lock_replaced_by_a_folder_is_a_clear_error(tmp_path: Path, runner) -> None:
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    (tmp_path / "i" / "lock").unlink()
    (tmp_path / "i" / "lock").mkdir()
    result = runner.invoke(main, ["index", str(tmp_path / "c"), "--index", str(tmp_path / "i"), "-q"])
    assert (result.exit_code, result.output.strip()) == (
        1, f"Error: index at {tmp_path / 'i'}: its lock is not a file; remove it and run 'coderiv index' again",
    )
    (tmp_path / "i" / "lock").rmdir()
    (tmp_path / "i" / "CURRENT").unlink()
    (tmp_path / "i" / "CURRENT").mkdir()
    result = runner.invoke(main, ["query", str(tmp_path / "c" / "d1.txt"), "--index", str(tmp_path / "i")])
    assert result.exit_code == 1 and "its CURRENT is not a file" in result.output


def test_leftovers_of_an_interrupted_writer_are_removed(tmp_path: Path) -> None:
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    (tmp_path / "i" / "tmp-abandoned").mkdir()
    (tmp_path / "i" / "tmp-abandoned" / "big.npy").write_bytes(b"x" * 1000)
    (tmp_path / "i" / "CURRENT.tmp").write_text("gen-000009\n")
    with storage.write_lock(tmp_path / "i"):
        assert not (tmp_path / "i" / "tmp-abandoned").exists() and not (tmp_path / "i" / "CURRENT.tmp").exists()


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    with storage.write_lock(tmp_path / "i"):
        assert len(inherited_locks.HELD_LOCK_FDS) == 1
        with pytest.raises(CoderivError, match="another coderiv process is writing the index"):
            with storage.write_lock(tmp_path / "i"):
                pass
    assert inherited_locks.HELD_LOCK_FDS == set()


def test_hostile_names_cannot_forge_rows_or_drive_the_terminal(tmp_path: Path, runner) -> None:
    text = "river delta marsh wetland estuary sediment"
    write_docs(tmp_path / "c", {"evil\n   9   100.0%  forged.txt": text, "\x1b]0;owned\x07\x1b[31mred.txt": text, "plain.txt": text})
    assert runner.invoke(main, ["index", str(tmp_path / "c"), "--index", str(tmp_path / "i"), "-q"]).exit_code == 0
    for fmt in ("table", "tsv"):
        result = runner.invoke(main, ["query", str(tmp_path / "c" / "plain.txt"), "--index", str(tmp_path / "i"), "--format", fmt])
        assert result.exit_code == 0
        assert "\x1b" not in result.output and "\x07" not in result.output
        rows = [line for line in result.output.splitlines() if "forged" in line]
        assert len(rows) == 1 and "evil\\n   9   100.0%  forged.txt" in rows[0]
        assert "\\x1b]0;owned\\x07\\x1b[31mred.txt" in result.output
    data = runner.invoke(main, ["query", str(tmp_path / "c" / "plain.txt"), "--index", str(tmp_path / "i"), "--format", "json"])
    assert "evil\\n   9   100.0%  forged.txt" in data.output  # JSON escapes by itself


@pytest.mark.parametrize("table", ["doc_lengths.npy", "doc_norms.npy", "term_max_unit.npy"])
def test_a_flipped_byte_in_a_table_every_query_reads_is_caught(tmp_path: Path, table: str) -> None:
    """A wrong document length or norm is a plausible number that only a checksum tells from the
    right one: the query gave a silently different answer (benchmarks/faults.py found it). The
    open reads none of it; the first read checks its blocks."""
    write_docs(tmp_path / "c", DOCS)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    path = Index.open(tmp_path / "i").generation / table
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01  # one bit of the last entry: still a plausible value
    path.write_bytes(bytes(data))
    # a file's first block is checked at open (here the whole table); later blocks when read (test_integrity)
    with pytest.raises(CorruptIndexError, match=f"index damaged: {table} block 0; rebuild with coderiv index"):
        Searcher(Index.open(tmp_path / "i")).search(DOCS["d1.txt"], top=3, measure="cosine")
