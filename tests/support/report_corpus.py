"""A collection whose passages are known exactly: every paragraph is made of words found in no
other paragraph (``a1w0 a1w1 …``), so a query built from paragraphs shares exactly those
paragraphs with their documents, at offsets the tests compute from the texts."""

from __future__ import annotations

from pathlib import Path

from coderiv.index.index import Index
from coderiv.ranking.containment import chunk_store_spec
from tests.support.files import write_docs

WORDS = 20  # words per paragraph


def para(name: str, k: int, words: int = WORDS) -> str:
    """Paragraph k of document ``name``: ``words`` words no other paragraph has, one sentence."""
    return " ".join(f"{name}{k}w{i}" for i in range(words)) + "."


def doc(name: str, paragraphs: int = 3) -> str:
    return "\n\n".join(para(name, k) for k in range(paragraphs))


#: Sources: a, b, c (c repeats a's paragraph 1), a2 (a version of a: a with one more paragraph),
#: and four documents ending with the same licence paragraph (boilerplate).
LICENCE = para("lic", 0)
DOCS = {
    "a.txt": doc("a"),
    "b.txt": doc("b"),
    "c.txt": "\n\n".join([para("a", 1), para("c", 0), para("c", 1), para("c", 2), para("c", 3)]),
    "d.txt": doc("d") + "\n\n" + LICENCE,
    "e.txt": doc("e") + "\n\n" + LICENCE,
    "f.txt": doc("f") + "\n\n" + LICENCE,
    "g.txt": doc("g") + "\n\n" + LICENCE,
}


def build(tmp_path: Path, extra: dict[str, str] | None = None) -> Index:
    folder = write_docs(tmp_path / "docs", {**DOCS, **(extra or {})})
    Index.update_from(folder, tmp_path / "idx", stores=[chunk_store_spec()], workers=1)
    return Index.open(tmp_path / "idx")
