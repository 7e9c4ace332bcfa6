"""Index format 8: a report-ready index's chunk store has split keys and offsets, its manifest
record says so, and a layout this coderiv does not know is one line of damage."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from coderiv.cli.main import main
from coderiv.errors import CorruptIndexError
from coderiv.index.format.generation import FORMAT_VERSION
from coderiv.index.index import Index
from coderiv.ranking.containment import chunk_store_spec
from tests.support.files import write_docs

CHUNKS = chunk_store_spec().name
#: Three documents; b.txt copies a.txt's first seven words, so their five chunks of five words
#: (7 − 5 + 1 = 3 of them) are in two documents and every other chunk in one.
DOCS = {
    "a.txt": "one two three four five six seven eight nine",
    "b.txt": "one two three four five six seven ten eleven",
    "c.txt": "twelve thirteen fourteen fifteen sixteen seventeen",
}


@pytest.fixture
def index_root(tmp_path: Path) -> Path:
    src = write_docs(tmp_path / "src", DOCS)
    result = CliRunner().invoke(main, ["index", str(src), "--index", str(tmp_path / "i"), "-q", "--workers", "1", "--report-ready"])
    assert result.exit_code == 0, result.output
    return tmp_path / "i"


def test_the_chunk_store_is_split_and_reads_as_its_chunks(index_root: Path) -> None:
    index = Index.open(index_root)
    assert index.manifest["format_version"] == FORMAT_VERSION == 8
    records = index.manifest["stores"]
    assert records[CHUNKS]["layout"] == "split" and records["terms"]["layout"] == "plain"
    store = index.store(CHUNKS)
    assert store.is_split and not index.terms.is_split
    # 5 + 5 + 2 chunks, 3 of them shared: 9 keys, 12 postings; the shared ones have f_t = 2
    assert store.n_keys == 9 and store.n_postings == 12
    assert sorted(store.doc_freqs.tolist()) == [1] * 6 + [2] * 3
    assert np.all(np.diff(store.keys.astype(np.int64)) > 0) and store.keys.dtype == np.uint32
    folder = index.generation / records[CHUNKS]["dir"]
    assert np.array_equal(np.load(folder / "keys.npy"), store.keys & 0xFFFF)  # the low bits on disk
    # a's chunks: found in a (and, for the three shared, in b)
    a_keys, _ = store.doc_keys(index.doc_ids.index("a.txt"))
    at = store.lookup(a_keys)
    assert (at >= 0).all() and sorted(store.doc_freqs[at].tolist()) == [1, 1, 2, 2, 2]


def test_a_layout_this_coderiv_cannot_read_is_one_line_of_damage(index_root: Path, tmp_path: Path) -> None:
    manifest_path = Index.open(index_root).generation / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    manifest["stores"][CHUNKS]["layout"] = "packed"
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    with pytest.raises(CorruptIndexError, match=r"has layout 'packed', which this coderiv cannot read; rebuild it") as caught:
        Index.open(index_root).store(CHUNKS)
    assert "\n" not in str(caught.value)
    (tmp_path / "q.txt").write_text(DOCS["a.txt"], "utf-8")
    result = CliRunner().invoke(main, ["report", str(tmp_path / "q.txt"), "--index", str(index_root), "-q"])
    assert result.exit_code == 1 and "layout 'packed'" in result.output and "Traceback" not in result.output
