"""Open only what is read (issue 27): an index maps its stores' files at open but reads none of
them; a store is loaded (headers parsed, first blocks checked) on its first use, so a query of
the terms holds no page of the chunk store. Damage is checked as it is read: a damaged block a
query reads is the one-line error, damage in a store the query never reads does not change its
answer, and ``coderiv info --checksums`` still finds it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from coderiv import Index, Searcher
from coderiv.cli.main import main
from coderiv.errors import CorruptIndexError
from coderiv.index.format import integrity
from coderiv.ranking.containment import chunk_store_spec
from tests.support.files import write_docs
from tests.support.resident import HAS_SMAPS, mapped, resident_kb

pytestmark = pytest.mark.skipif(not HAS_SMAPS, reason="needs Linux's /proc/self/smaps")
CHUNKS = chunk_store_spec().name


def _build(tmp_path: Path) -> tuple[Path, Path]:
    """30 documents of 400 words over 2,000 (d00 copies half of d01), with the chunk store the
    report reads: (index, the query file d00.txt)."""
    rng = np.random.default_rng(27)
    docs = {f"d{i:02d}.txt": " ".join(f"w{int(w)}" for w in rng.integers(0, 2000, 400)) for i in range(30)}
    docs["d00.txt"] = " ".join(docs["d01.txt"].split()[:200] + docs["d00.txt"].split()[200:])
    folder = write_docs(tmp_path / "c", docs)
    Index.update_from(folder, tmp_path / "i", stores=[chunk_store_spec()], workers=1)
    return tmp_path / "i", folder / "d00.txt"


def _store_files(index: Index, name: str) -> list[Path]:
    return sorted((index.generation / index.manifest["stores"][name]["dir"]).glob("*.npy"))


def test_a_query_of_the_terms_reads_no_page_of_the_chunk_store(tmp_path):
    root, query = _build(tmp_path)
    index = Index.open(root)
    assert index.loaded_stores() == []  # the open loads no store
    chunk_files, term_files = _store_files(index, CHUNKS), _store_files(index, "terms")
    assert len(chunk_files) == 9 and all(mapped(p) for p in chunk_files)  # a presence, split store: mapped at open (a snapshot), not read
    result = Searcher(index).search(query.read_text("utf-8"), top=3)
    assert [m.doc_id for m in result.matches[:2]] == ["d00.txt", "d01.txt"] and round(result.matches[0].percent, 6) == 100.0
    assert index.loaded_stores() == ["terms"]
    assert {p.name: resident_kb(p) for p in chunk_files} == {p.name: 0 for p in chunk_files}
    assert resident_kb(next(p for p in term_files if p.name == "docs.npy")) > 0  # the measure sees what is read
    index.store(CHUNKS)  # its first use loads it: each file's first block (the .npy header's) is checked
    assert index.loaded_stores() == sorted(["terms", CHUNKS])
    assert resident_kb(next(p for p in chunk_files if p.name == "keys.npy")) > 0


def _damage(path: Path, header: int = 128) -> None:
    """Flip 8 bytes in the middle of ``path`` (its data, past a .npy header): the size is kept."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    assert middle > header
    for offset in range(middle, middle + 8):
        data[offset] ^= 0x5A
    path.write_bytes(bytes(data))


def _query(root: Path, query: Path, *method: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["query", str(query), "--index", str(root), "-q", "--format", "tsv", "-k", "5", *method])
    return result.exit_code, result.output


def test_a_damaged_block_the_query_reads_is_one_line(tmp_path):
    root, query = _build(tmp_path)
    index = Index.open(root)
    docs = index.generation / index.manifest["stores"]["terms"]["dir"] / "docs.npy"
    assert docs.stat().st_size < 1 << 16  # one block: its whole file is checked at its first read
    _damage(docs)
    code, output = _query(root, query)
    assert code != 0
    assert output.strip().splitlines() == ["Error: index damaged: store-0/docs.npy block 0; rebuild with coderiv index"]


def test_damage_in_a_store_no_query_reads_leaves_the_answer_and_verify_finds_it(tmp_path):
    root, query = _build(tmp_path)
    want = _query(root, query)
    assert want[0] == 0 and want[1].splitlines()[1].split("\t")[1:3] == ["1", "100.0000"]
    index = Index.open(root)
    keys = index.generation / index.manifest["stores"][CHUNKS]["dir"] / "keys.npy"
    rel = keys.relative_to(index.generation).as_posix()
    _damage(keys)
    assert _query(root, query) == want  # the terms' query never reads the chunk store: checked as read
    code, output = _query(root, query, "--method", "containment")  # which reads it
    assert code != 0 and output.strip().splitlines() == [f"Error: index damaged: {rel} block 0; rebuild with coderiv index"]
    checked = CliRunner().invoke(main, ["info", "--index", str(root), "--checksums", "--format", "json"])
    assert checked.exit_code != 0
    assert checked.output.strip().splitlines() == [f"Error: index at {root} is damaged: {rel}: checksum mismatch in block 0"]
    assert json.loads((index.generation / "manifest.json").read_text("utf-8"))["files"][rel]["bytes"] == keys.stat().st_size


def test_the_document_ids_are_read_on_first_use_and_checked_then(tmp_path, monkeypatch):
    """Built with 64-byte blocks (doc_ids.bin, 239 bytes, spans four): the open checks only the
    first block and decodes nothing; damage in a later block is named at the ids' first use."""
    monkeypatch.setattr(integrity, "BLOCK", 64)
    root, query = _build(tmp_path)
    index = Index.open(root)
    assert "doc_ids" not in vars(index) and index.n_docs == 30  # the count is the manifest's
    assert index.doc_ids[:3] == ["d00.txt", "d01.txt", "d02.txt"] and len(index.doc_ids) == 30
    ids = index.generation / "doc_ids.bin"
    assert ids.stat().st_size == 239
    _damage(ids, header=64)  # bytes 119-126: block 1
    damaged = Index.open(root)  # opens: block 0 is intact, the ids are not read
    assert damaged.n_docs == 30
    with pytest.raises(CorruptIndexError, match=r"^index damaged: doc_ids.bin block 1; rebuild with coderiv index$"):
        len(damaged.doc_ids)
    code, output = _query(root, query)
    assert code != 0 and output.strip().splitlines() == ["Error: index damaged: doc_ids.bin block 1; rebuild with coderiv index"]
