"""Stoplists per language (issue 28 item 10): the shipped lists load, ``--language`` picks one,
an index records it, and a query analysed with another language is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from coderiv.cli.main import main
from coderiv.errors import UnknownNameError
from coderiv.index.index import Index
from coderiv.keys.kinds import term_keys
from coderiv.text.analysis import AnalysisSettings, Analyzer, default_stoplist, stoplist, stoplist_languages

GERMAN = "Der Fluss und die Otter sind wieder da, aber nicht mehr für lange. Die Reiher nisten im Erlenbruch."
MAJOR = ["czech", "danish", "dutch", "english", "finnish", "french", "german", "hungarian", "italian",
         "norwegian", "polish", "portuguese", "russian", "slovak", "spanish", "swedish"]


def test_every_major_language_has_a_stoplist_of_its_own() -> None:
    assert set(MAJOR) <= set(stoplist_languages())
    lists = {language: stoplist(language) for language in MAJOR}
    assert all(len(words) >= 90 for words in lists.values())
    assert len({frozenset(words) for words in lists.values()}) == len(MAJOR)  # no two alike
    assert {"und", "der", "nicht", "für"} <= lists["german"] and "fluss" not in lists["german"]
    assert {"že", "který"} <= lists["czech"] and {"и", "не"} <= lists["russian"]
    assert stoplist("english") is default_stoplist()
    assert stoplist("arabic") is default_stoplist()  # a stemming language without a list keeps English's


def test_german_stopwords_removed_under_german_only() -> None:
    german = Analyzer(AnalysisSettings(stop=True, stem=False, language="german"))
    assert german.terms(GERMAN) == ["fluss", "otter", "mehr", "lange", "reiher", "nisten", "erlenbruch"]
    english = Analyzer(AnalysisSettings(stop=True, stem=False))
    assert len(english.terms(GERMAN)) == 18  # the English list stops none of the 18 German words


def test_language_alone_picks_the_stoplist_and_a_stemmer_if_snowball_has_one() -> None:
    settings = AnalysisSettings.from_flags(None, None, "de")
    assert settings == AnalysisSettings(stop=True, stem=True, language="german")
    assert Analyzer(settings).terms(GERMAN) == ["fluss", "ott", "mehr", "lang", "reih", "nist", "erlenbruch"]
    assert AnalysisSettings.from_flags(None, None, "slovak") == AnalysisSettings(stop=True, stem=False, language="slovak")
    assert AnalysisSettings.from_flags(None, None, "slovak").describe() == "stopping (slovak), no stemming"  # type: ignore[union-attr]
    with pytest.raises(UnknownNameError, match="Snowball has no stemmer for it: add --no-stem"):
        AnalysisSettings(stem=True, language="slovak")
    with pytest.raises(UnknownNameError, match="language must be one of"):
        AnalysisSettings(language="klingon")


def test_manifest_records_the_language_and_english_reads_as_before() -> None:
    assert AnalysisSettings().to_dict()["language"] is None  # as every earlier version wrote it
    assert AnalysisSettings().to_dict()["stoplist"] == "9fba36de2b792a6b"  # what main wrote: existing indexes open
    german = AnalysisSettings(stop=True, stem=False, language="german").to_dict()
    assert german["language"] == "german" and german["stoplist"] != AnalysisSettings().to_dict()["stoplist"]
    assert AnalysisSettings.from_dict(german) == AnalysisSettings(stop=True, stem=False, language="german")


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_index_in_german_and_a_query_in_french_is_refused(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fluss.txt").write_text(GERMAN)
    (docs / "wald.txt").write_text("Im Wald stehen Eichen und Buchen, aber keine Fichten mehr.")
    code, _ = _cli("index", str(docs), "--index", str(tmp_path / "idx"), "--language", "german", "--no-stem", "-q")
    assert code == 0
    index = Index.open(tmp_path / "idx")
    assert index.settings == AnalysisSettings(stop=True, stem=False, language="german")
    stored = {tuple(sorted(int(k) for k in index.terms.doc_keys(doc)[0])) for doc in range(2)}
    expected = [
        ["fluss", "otter", "mehr", "lange", "reiher", "nisten", "erlenbruch"],
        ["wald", "stehen", "eichen", "buchen", "fichten", "mehr"],
    ]
    assert stored == {tuple(sorted(int(k) for k in term_keys(terms))) for terms in expected}  # "und", "die", "für"... stopped
    query = tmp_path / "q.txt"
    query.write_text("Die Otter sind wieder da.")
    code, output = _cli("query", "--index", str(tmp_path / "idx"), str(query), "--format", "json")
    assert code == 0 and "fluss.txt" in output
    code, output = _cli("query", "--index", str(tmp_path / "idx"), str(query), "--language", "french", "--no-stem")
    assert code != 0
    assert output.strip().splitlines() == [
        "Error: query analysis (stopping (french), no stemming) differs from the index's "
        "(stopping (german), no stemming); query with the index's settings or rebuild it"
    ]
