"""Progress of long work (coderiv.progress): every long library call says its total and unit
first, then advances to exactly that total; the command line draws it only on a terminal."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from coderiv.cli.options import TerminalBar
from coderiv.evaluation.evaluate import Topics, evaluate_method
from coderiv.index.index import Index
from coderiv.keys.kinds import StoreSpec
from coderiv.pairs.counting import block_count, plan_blocks
from coderiv.pairs.eligibility import key_view
from coderiv.pairs.run import compute_pairs
from coderiv.progress import Counter
from coderiv.text.collection import iter_collection, stored_size
from tests.support.files import write_docs

DOCS = {"a.txt": "alpha bravo charlie delta echo", "b.txt": "alpha bravo charlie delta echo foxtrot", "c/d.txt": "golf"}


def test_indexing_a_folder_counts_its_bytes_against_their_sum(tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "docs", DOCS)
    (folder / ".hidden").write_text("not a document")
    assert stored_size(folder) == 30 + 38 + 4  # the three documents, not the hidden file
    counter = Counter()
    Index.update_from(folder, tmp_path / "idx", workers=1, progress=counter)
    # the source's bytes read, then the stores written (one: terms)
    assert (counter.stage("B"), counter.stage("stores written"), counter.starts) == ((72, 72), (1, 1), 2)


def test_indexing_an_archive_counts_compressed_bytes_against_its_size(tmp_path: Path) -> None:
    archive = tmp_path / "docs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in {**DOCS, "big.txt": "word " * 20000}.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    size = archive.stat().st_size
    assert stored_size(archive) == size
    # the compressed bytes read before each document add up to the whole file
    assert sum(doc.stored for doc in iter_collection(archive)) == size
    counter = Counter()
    Index.update_from(archive, tmp_path / "idx", workers=1, progress=counter)
    assert counter.stage("B") == (size, size)


def test_pairs_count_blocks_and_evaluation_counts_queries(tmp_path: Path) -> None:
    chunks = StoreSpec.create("chunks", n=5)
    Index.update_from(write_docs(tmp_path / "docs", DOCS), tmp_path / "idx", stores=[chunks], workers=1)
    index = Index.open(tmp_path / "idx")
    counter = Counter()
    compute_pairs(index, "chunks", progress=counter)  # the set methods' product counts documents
    assert (counter.total, counter.unit, counter.done) == (3, "documents", 3)
    counter = Counter()
    compute_pairs(index, "identity5", progress=counter)  # the block path counts blocks
    assert (counter.total, counter.unit, counter.done) == (1, "blocks", 1)
    # block_count says how many blocks plan_blocks cuts, for any budget
    store = index.store(chunks.name)
    view = key_view(store, 100, None)
    import numpy as np

    positions = np.flatnonzero(view.used)
    for budget in (1, 2, 3, 1000):
        assert block_count(store, positions, budget) == len(list(plan_blocks(store, positions, None, None, budget)))
    counter = Counter()
    topics = Topics({"Q1": "a.txt", "Q2": "b.txt"}, {"Q1": {"b.txt"}, "Q2": {"a.txt"}})
    evaluate_method(index, "identity5", topics, progress=counter)
    assert (counter.total, counter.unit, counter.done) == (2, "queries", 2)


def test_the_bar_stays_silent_off_a_terminal(capsys) -> None:
    bar = TerminalBar(quiet=False, desc="indexing")
    assert not bar.enabled  # pytest's stderr is not a terminal
    with bar:
        bar.start(100, "B")
        bar.advance(50)
    assert capsys.readouterr().err == ""
