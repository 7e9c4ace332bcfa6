"""Verification of ranked candidates by exact passages, and its evaluation family."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest

from coderiv.errors import CoderivError, UnknownNameError
from coderiv.evaluation.evaluate import Topics, evaluate_method
from coderiv.evaluation.methods import get_method
from coderiv.index.index import Index
from coderiv.overlap.verify import DocumentTexts, verify_result
from coderiv.ranking.search import Searcher
from tests.support.files import write_docs

SENTENCE = "Configuration files are read from the project folder before any plugin is loaded."
QUERY = SENTENCE + "\n\n" + "Every option can be overridden on the command line with a flag of the same name."
COPY = "Intro paragraph that only this file has.\n\n" + SENTENCE  # 85-character passage copied
# The query's words shuffled: the same terms (a high ranked percentage), no shared passage.
SHUFFLED = " ".join(sorted(QUERY.replace(".", "").split(), key=str.lower))


def build(tmp_path: Path) -> Index:
    folder = write_docs(tmp_path / "docs", {
        "query.txt": QUERY, "copy.txt": COPY, "shuffled.txt": SHUFFLED, "other.txt": "Nothing in common here at all, zebra.",
    })
    Index.update_from(folder, tmp_path / "idx")
    return Index.open(tmp_path / "idx")


def test_false_match_falls_away(tmp_path: Path) -> None:
    index = build(tmp_path)
    result = Searcher(index).search(QUERY, top=3, label="q")
    checked = {v.match.doc_id: v for v in verify_result(result, QUERY, DocumentTexts(index.source))}
    assert checked["shuffled.txt"].match.percent > 20.0
    assert checked["shuffled.txt"].verified == 0.0 and checked["shuffled.txt"].passages == []
    assert checked["query.txt"].verified == pytest.approx(100.0)
    # copy.txt holds the query's first sentence: its 13 words of the query's 13 + 16 (an aligned
    # passage; the verified percentage counts words since issue 24, it counted characters)
    (p,) = checked["copy.txt"].passages
    assert (p.a_start, p.a_end) == (0, len(SENTENCE))
    assert COPY[p.b_start : p.b_end] == SENTENCE
    assert checked["copy.txt"].verified == pytest.approx(100 * 13 / 29)


def test_texts_from_an_archive_in_one_pass(tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "docs", {"a.txt": "alpha", "b/c.html": "<p>beta &amp; gamma</p>"})
    archive = tmp_path / "docs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder / "a.txt", "a.txt")
        tar.add(folder / "b" / "c.html", "b/c.html")
    texts = DocumentTexts(archive)
    got = texts.get(["b/c.html", "a.txt"])
    assert (got["b/c.html"].strip(), got["a.txt"]) == ("beta & gamma", "alpha")  # visible text, as indexed
    with pytest.raises(CoderivError, match="no longer in"):
        texts.get(["gone.txt"])
    with pytest.raises(CoderivError, match="is gone"):
        DocumentTexts(tmp_path / "missing")
    with pytest.raises(CoderivError, match="does not record"):
        DocumentTexts(None)  # an index built from an iterable of documents


def test_verified_evaluation_family(tmp_path: Path) -> None:
    index = build(tmp_path)
    topics = Topics({"1": "query.txt"}, {"1": {"query.txt", "copy.txt"}})
    ranked = evaluate_method(index, "identity5", topics).queries[0]
    verified = evaluate_method(index, "verified:identity5,top=3", topics).queries[0]
    assert ranked.hfm > 20.0  # the shuffled words look like a coderivative to term statistics
    assert verified.hfm == 0.0  # and share no passage
    assert verified.precision == 1.0
    pct = get_method("verified:identity5,top=1")(index)("query.txt")
    assert np.count_nonzero(pct) == 1 and pct.max() == pytest.approx(100.0)
    with pytest.raises(UnknownNameError):
        get_method("verified:bogus")


def test_verified_fingerprint_method(tmp_path: Path) -> None:
    from coderiv.keys.fingerprint import parse_fingerprint

    folder = write_docs(tmp_path / "docs", {"query.txt": QUERY, "copy.txt": COPY, "shuffled.txt": SHUFFLED})
    Index.update_from(folder, tmp_path / "idx", stores=[parse_fingerprint("full:g=1")])
    index = Index.open(tmp_path / "idx")
    base = get_method("fingerprint:full:g=1")(index)("query.txt")
    verified = get_method("verified:fingerprint:full:g=1,top=3")(index)("query.txt")
    shuffled = index.doc_numbers["shuffled.txt"]
    # One-word "phrases": the shuffled words share every minutia, and no passage.
    assert base[shuffled] == pytest.approx(100.0)
    assert verified[shuffled] == 0.0
    assert verified[index.doc_numbers["query.txt"]] == pytest.approx(100.0)


def test_verified_names() -> None:
    for bad in ["verified:bogus", "verified:identity5,top=0", "verified:verified:identity5"]:
        with pytest.raises(UnknownNameError):
            get_method(bad)
    get_method("verified:")  # the default measure, top 20
