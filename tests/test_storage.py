"""Index storage under faults: a full disk, leftovers of dead writers."""

from __future__ import annotations

import gc
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from coderiv import Index
from tests.support.files import write_docs

SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB tmpfs (needs root and a kernel that lets this process mount; skipped otherwise)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    gc.collect()  # indexes opened by the test map files on the tmpfs
    subprocess.run(["umount", "--lazy", str(mount)], capture_output=True, timeout=30)


def _texts(n: int, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    vocabulary = [f"w{k}" for k in range(20000)]
    return {f"doc{i:05d}.txt": " ".join(rng.choices(vocabulary, k=400)) for i in range(n)}


def test_a_full_disk_is_a_one_line_error_and_the_index_survives(tmp_path, small_disk):
    small, large = tmp_path / "small", tmp_path / "large"
    write_docs(small, _texts(20, 1))
    write_docs(large, _texts(1500, 2))
    index = small_disk / "i"
    Index.update_from(small, index, workers=1)
    before = Index.open(index).doc_ids
    done = subprocess.run(
        [sys.executable, "-m", "coderiv.cli.main", "index", str(large), "--index", str(index), "--quiet"],
        env={**os.environ, "PYTHONPATH": SRC}, capture_output=True, timeout=300,
    )
    errors = [line for line in done.stderr.decode().splitlines() if not line.startswith("<frozen runpy>")]
    assert done.returncode == 1
    assert errors == [f"Error: cannot write the index at {index}: disk full; the index was left as it was before"] or (
        len(errors) == 1 and errors[0].startswith(f"Error: cannot write the index at {index}: disk full (")
    )
    assert Index.open(index).doc_ids == before and Index.open(index).verify() == []
    report = Index.update_from(small, index, workers=1)  # space freed: leftovers are removed
    assert report.n_docs == 20
    assert not list(index.glob("tmp-*"))


def test_leftovers_of_a_dead_writer_are_removed_by_the_next_run(tmp_path):
    write_docs(tmp_path / "c", {"a.txt": "some words here"})
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    (tmp_path / "i" / "tmp-dead").mkdir()
    (tmp_path / "i" / "tmp-dead" / "big.npy").write_bytes(b"x" * 1000)
    write_docs(tmp_path / "c", {"b.txt": "other words"})
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert not list((tmp_path / "i").glob("tmp-*"))
