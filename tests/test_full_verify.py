"""A full verify (``Index.verify``, ``coderiv info --checksums``): a file covered by the block
table is checked by recomputing its blocks' CRC-32s, the table itself (and every file of an
older generation, which recorded one) by SHA-256; any damaged byte is found and named."""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from coderiv import Index
from coderiv.errors import CorruptIndexError
from coderiv.index.format import integrity
from coderiv.index.format.storage import read_manifest, verify_files
from tests.support.files import write_docs

SMALL_BLOCK = 256


def _build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index of 30 documents written with 256-byte blocks (its manifest records the size);
    its live generation."""
    monkeypatch.setattr(integrity, "BLOCK", SMALL_BLOCK)
    rng = np.random.default_rng(11)
    docs = {f"d{i:02d}.txt": " ".join(f"w{int(w)}" for w in rng.zipf(1.3, 150) % 400) for i in range(30)}
    write_docs(tmp_path / "c", docs)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    return next((tmp_path / "i").glob("gen-*"))


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x10
    path.write_bytes(bytes(data))


def _verify(generation: Path) -> list[str]:
    return verify_files(generation, read_manifest(generation), full=True)


def test_the_manifest_records_block_crcs_only_and_a_sha256_of_the_table(tmp_path, monkeypatch):
    generation = _build(tmp_path, monkeypatch)
    manifest = read_manifest(generation)
    files = manifest["files"]
    table = (generation / integrity.BLOCKS_FILE).read_bytes()
    assert manifest["block_bytes"] == SMALL_BLOCK
    assert files[integrity.BLOCKS_FILE] == {"bytes": len(table), "sha256": hashlib.sha256(table).hexdigest()}
    covered = {rel: meta for rel, meta in files.items() if rel != integrity.BLOCKS_FILE}
    assert covered and all(set(meta) == {"bytes", "first_block"} for meta in covered.values())
    data = (generation / "doc_lengths.npy").read_bytes()
    first = covered["doc_lengths.npy"]["first_block"]
    crcs = np.frombuffer(table, "<u4")[first : first + -(-len(data) // SMALL_BLOCK)]
    assert crcs.tolist() == [zlib.crc32(data[a : a + SMALL_BLOCK]) for a in range(0, len(data), SMALL_BLOCK)]
    assert _verify(generation) == []


@pytest.mark.parametrize("where", ["header", "middle", "last partial block"])
def test_a_flipped_byte_of_a_store_file_is_named_with_its_block(tmp_path, monkeypatch, where):
    generation = _build(tmp_path, monkeypatch)
    path = generation / "store-0" / "docs.npy"
    size = path.stat().st_size
    assert size % SMALL_BLOCK and size > 4 * SMALL_BLOCK  # several blocks, the last one partial
    at = {"header": 20, "middle": size // 2, "last partial block": size - 1}[where]  # 20: inside "{'descr': ..."
    _flip(path, at)
    assert _verify(generation) == [f"store-0/docs.npy: checksum mismatch in block {at // SMALL_BLOCK}"]


def test_a_flipped_byte_anywhere_in_any_file_is_found(tmp_path, monkeypatch):
    generation = _build(tmp_path, monkeypatch)
    for rel in read_manifest(generation)["files"]:
        path = generation / rel
        original = path.read_bytes()
        for at in sorted({0, len(original) // 3, len(original) - 1}):
            _flip(path, at)
            want = "checksum mismatch" if rel == integrity.BLOCKS_FILE else f"checksum mismatch in block {at // SMALL_BLOCK}"
            assert _verify(generation) == [f"{rel}: {want}"], (rel, at)
            path.write_bytes(original)
    assert _verify(generation) == []


def test_a_truncated_file_is_found(tmp_path, monkeypatch):
    generation = _build(tmp_path, monkeypatch)
    path = generation / "store-0" / "vals.npy"
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[:-1])
    assert _verify(generation) == [f"store-0/vals.npy: {size - 1} bytes, manifest says {size}"]


def test_a_damaged_block_table_is_one_problem(tmp_path, monkeypatch):
    """The files it covers are not compared with a table that fails its SHA-256 (every one would
    seem damaged): the table's problem is reported once."""
    generation = _build(tmp_path, monkeypatch)
    _flip(generation / integrity.BLOCKS_FILE, 4)
    assert _verify(generation) == [f"{integrity.BLOCKS_FILE}: checksum mismatch"]


def test_an_index_of_an_older_format_is_refused_then_rebuilt(tmp_path, monkeypatch):
    """Only format 8 is read: a format 6 generation (a SHA-256 of every file) opens as a one-line
    error naming ``coderiv index --rebuild``, and the next update rebuilds it from its source with
    the analysis it records (the same bytes as a fresh build's stores)."""
    generation = _build(tmp_path, monkeypatch)
    manifest = read_manifest(generation)
    manifest["format_version"] = 6
    for rel, meta in manifest["files"].items():
        meta["sha256"] = hashlib.sha256((generation / rel).read_bytes()).hexdigest()
    (generation / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True), "utf-8")
    refused = r"^index format 6 is not this coderiv's format 8; rebuild the index with 'coderiv index --rebuild'$"
    with pytest.raises(CorruptIndexError, match=refused):
        Index.open(tmp_path / "i")
    report = Index.update_from(manifest["source"], tmp_path / "i", workers=1)
    assert report.rebuilt is not None and report.rebuilt.startswith("the index was damaged")
    rebuilt = Index.open(tmp_path / "i")
    assert rebuilt.manifest["format_version"] == 8 and rebuilt.verify() == []
    assert rebuilt.settings.to_dict() == manifest["analysis"]


def test_first_bad_block(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(bytes(range(250)) * 3)  # 750 bytes: blocks of 256, 256 and 238
    crcs = integrity.block_crcs(path, SMALL_BLOCK)
    data = path.read_bytes()
    assert crcs.tolist() == [zlib.crc32(data[:256]), zlib.crc32(data[256:512]), zlib.crc32(data[512:])]
    assert integrity.first_bad_block(path, crcs, SMALL_BLOCK) is None
    changed = crcs.copy()
    changed[1] ^= 1
    changed[2] ^= 1
    assert integrity.first_bad_block(path, changed, SMALL_BLOCK) == 1
    assert integrity.first_bad_block(path, crcs[:2], SMALL_BLOCK) == 2  # a table too short for the file
