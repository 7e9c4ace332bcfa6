"""Collections for the n-to-n pair tests: an index with every pair method's store, random
documents with revisions among them, an edit of such a collection, and a table read by id."""

from __future__ import annotations

import random
from pathlib import Path

from coderiv import Index
from coderiv.pairs.methods import METHODS
from coderiv.pairs.table import PairTable
from tests.support.files import write_docs

ALL_STORES = [m.store for m in METHODS.values()]


def build(folder: Path, docs: dict[str, str], tmp: Path) -> Index:
    write_docs(folder, docs)
    Index.update_from(folder, tmp / "idx", stores=ALL_STORES, workers=1)
    return Index.open(tmp / "idx")


def rows_by_id(table: PairTable) -> dict[str, list[tuple[str, float]]]:
    """The table as {doc id: [(similar id, percent), ...]}, independent of document numbers."""
    return {d: [(other, pct) for _, pct, other in table.similar(d)] for d in table.doc_ids}


def random_docs(rng: random.Random, n_docs: int, vocab: int = 40, length: int = 30) -> dict[str, str]:
    """``n_docs`` documents ``dNN.txt`` of ``length`` words from a ``vocab``-word vocabulary;
    about 40% are revisions of an earlier one (a few words inserted), so pairs share keys."""
    words = [f"w{i}x" for i in range(vocab)]
    docs = {}
    for i in range(n_docs):
        if i and rng.random() < 0.4:  # a revision of an earlier document
            base = docs[f"d{rng.randrange(i):02d}.txt"].split()
            cut = rng.randrange(len(base))
            text = base[:cut] + [rng.choice(words) for _ in range(rng.randrange(1, 8))] + base[cut:]
        else:
            text = [rng.choice(words) for _ in range(length)]
        docs[f"d{i:02d}.txt"] = " ".join(text)
    return docs


def edit_docs(folder: Path, rng: random.Random) -> None:
    """Edit the collection in ``folder`` for an incremental run: 2 documents deleted, 2
    rewritten (another's text plus two words), 3 new ones made of halves of existing ones."""
    files = sorted(folder.glob("*.txt"))
    for path in rng.sample(files, 2):
        path.unlink()
    for path in rng.sample(sorted(folder.glob("*.txt")), 2):
        other = rng.choice(files)
        if other.exists():
            path.write_text(other.read_text() + " zz1 zz2", "utf-8")
    for i in range(3):
        base = rng.choice(sorted(folder.glob("*.txt"))).read_text().split()
        (folder / f"new{i}.txt").write_text(" ".join(base[: len(base) // 2 + i] + ["fresh", f"n{i}x"]), "utf-8")
