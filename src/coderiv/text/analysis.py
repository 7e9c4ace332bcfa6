"""Text analysis (SPEC §1): words, case folding, stopping, stemming, sentences, paragraphs.

The same :class:`Analyzer` is applied to the collection and to every query; its settings are
recorded in the index (:meth:`AnalysisSettings.to_dict`) so that a query analysed differently is
refused instead of silently mismatching.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from coderiv.errors import AnalysisMismatchError, UnknownNameError

#: A word is a maximal run of Unicode letters and digits (``\w`` without the underscore).
WORD_RE = re.compile(r"[^\W_]+")
#: Same words, found faster: ``\w+`` on the text with underscores turned into spaces.
_FAST_WORD_RE = re.compile(r"\w+")
_PARAGRAPH_BREAK_RE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])(?:\s+|$)")


#: ISO 639-1 codes accepted for ``--language`` besides Snowball's names.
LANGUAGE_CODES = {
    "en": "english", "de": "german", "fr": "french", "es": "spanish", "pt": "portuguese", "it": "italian",
    "nl": "dutch", "cs": "czech", "sk": "slovak", "pl": "polish", "ru": "russian", "sv": "swedish",
    "da": "danish", "no": "norwegian", "nb": "norwegian", "fi": "finnish", "hu": "hungarian",
}


def _read_stoplist(path: str) -> frozenset[str]:
    text = resources.files("coderiv").joinpath(path).read_text("utf-8")
    return frozenset(
        unicodedata.normalize("NFC", w.strip()).casefold() for w in text.splitlines() if w.strip() and not w.startswith("#")
    )


@lru_cache(maxsize=1)
def default_stoplist() -> frozenset[str]:
    """The shipped English stoplist (``coderiv/data/stoplist_en.txt``)."""
    return _read_stoplist("data/stoplist_en.txt")


@lru_cache(maxsize=1)
def stoplist_languages() -> list[str]:
    """Languages with a shipped stoplist (``coderiv/data/stoplists/``, and English)."""
    folder = resources.files("coderiv").joinpath("data/stoplists")
    return sorted({"english"} | {entry.name[:-4] for entry in folder.iterdir() if entry.name.endswith(".txt")})


@cache
def stoplist(language: str) -> frozenset[str]:
    """The stoplist of ``language``; English's for a language without one of its own (a Snowball
    stemming language such as Arabic: what every version before the per-language lists did)."""
    if language == "english" or language not in stoplist_languages():
        return default_stoplist()
    return _read_stoplist(f"data/stoplists/{language}.txt")


def language_name(language: str) -> str:
    """Snowball's name for a language given by name or ISO 639-1 code (``de`` → ``german``)."""
    lowered = language.strip().lower()
    return LANGUAGE_CODES.get(lowered, lowered)


def stoplist_checksum(words: frozenset[str]) -> str:
    """A short, order-independent digest of a stoplist, stored in the index manifest."""
    return hashlib.sha256("\n".join(sorted(words)).encode()).hexdigest()[:16]


def _stemmer(language: str) -> Any:
    """The Snowball stemmer of ``language`` (the package, which imports every language's
    stemmer, is imported only by an index or query that stems)."""
    import snowballstemmer

    return snowballstemmer.stemmer(language)


def stemming_languages() -> list[str]:
    """Languages the Snowball stemmer knows."""
    import snowballstemmer  # its package imports every language's stemmer: only when stemming

    return sorted(snowballstemmer.algorithms())


@dataclass(frozen=True)
class AnalysisSettings:
    """How text becomes terms: stopping (default on) and stemming (default off), as SPEC §1."""

    stop: bool = True
    stem: bool = False
    language: str = "english"

    def __post_init__(self) -> None:
        object.__setattr__(self, "language", language_name(self.language))
        if self.stem and self.language not in stemming_languages():
            raise UnknownNameError(
                f"stemming language must be one of {stemming_languages()!r} (got {self.language!r})"
                + ("; Snowball has no stemmer for it: add --no-stem" if self.language in stoplist_languages() else "")
            )
        if not self.stem and self.language not in stoplist_languages() and self.language not in stemming_languages():
            known = sorted(set(stoplist_languages() + stemming_languages()))
            raise UnknownNameError(f"language must be one of {known!r} (got {self.language!r})")

    def to_dict(self) -> dict[str, Any]:
        """The settings as stored in an index manifest. The language is recorded when it shapes
        the terms: when stemming, or when stopping with a language other than English (English
        without stemming records none, as every earlier version did)."""
        shaped = self.stem or (self.stop and self.language != "english")
        return {
            "stop": self.stop,
            "stem": self.stem,
            "language": self.language if shaped else None,
            "stoplist": stoplist_checksum(stoplist(self.language)) if self.stop else None,
            "words": WORD_RE.pattern,
            "case_folding": "casefold",
        }

    @classmethod
    def from_flags(
        cls, stop: bool | None, stem: bool | None, language: str | None, base: AnalysisSettings | None = None
    ) -> AnalysisSettings | None:
        """Settings from optional flags, unset ones taken from ``base`` (or the defaults); None
        when no flag is set, meaning "as the index says". A language alone picks its stoplist and
        turns stemming on when Snowball has a stemmer for it."""
        if stop is None and stem is None and language is None:
            return None
        base = base or cls()
        use_stem = base.stem if stem is None else stem
        if language is not None and stem is None:
            use_stem = language_name(language) in stemming_languages()
        return cls(
            stop=base.stop if stop is None else stop,
            stem=use_stem,
            language=language or base.language,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnalysisSettings:
        """Settings read back from a manifest; refuses a manifest made with another stoplist."""
        settings = cls(
            stop=bool(data["stop"]), stem=bool(data["stem"]), language=data.get("language") or "english"
        )
        if settings.to_dict() != data:
            raise AnalysisMismatchError(
                "the index was built with analysis settings this version of coderiv does not "
                f"reproduce ({data}); rebuild the index"
            )
        return settings

    def describe(self) -> str:
        """Human-readable form, e.g. ``stopping, no stemming`` (English) or ``stopping (german),
        stemming (german)``."""
        stop = "stopping" if self.stop else "no stopping"
        if self.stop and self.language != "english":
            stop += f" ({self.language})" if self.language in stoplist_languages() else " (english list)"
        stem = f"stemming ({self.language})" if self.stem else "no stemming"
        return f"{stop}, {stem}"


@dataclass
class AnalyzedDocument:
    """A document after analysis: its terms, and where its sentences and paragraphs start.

    ``sentence_starts`` and ``paragraph_starts`` are indexes into ``terms`` (sorted, first 0 when
    the document has any term); a sentence or paragraph whose words were all stopped is absent.
    """

    terms: list[str]
    sentence_starts: list[int] = field(default_factory=list)
    paragraph_starts: list[int] = field(default_factory=list)
    #: term → count, when only counts were computed (:meth:`Analyzer.counts`; ``terms`` is empty)
    counts: Counter[str] | None = None

    @property
    def length(self) -> int:
        """f_d: the number of term occurrences after stopping."""
        return len(self.terms) if self.counts is None else sum(self.counts.values())

    def term_counts(self) -> Counter[str]:
        """f_{d,t} for every term of the document."""
        return Counter(self.terms) if self.counts is None else self.counts


class Analyzer:
    """Turns text into terms by the given :class:`AnalysisSettings`."""

    def __init__(self, settings: AnalysisSettings | None = None) -> None:
        self.settings = settings or AnalysisSettings()
        self._stoplist = stoplist(self.settings.language) if self.settings.stop else frozenset()
        self._stemmer = _stemmer(self.settings.language) if self.settings.stem else None
        self._stems: dict[str, str] = {}

    @property
    def stoplist(self) -> frozenset[str]:
        """The words this analyser stops (empty without stopping)."""
        return self._stoplist

    def words(self, text: str) -> list[str]:
        """Case-folded words of ``text``, before stopping and stemming."""
        return _FAST_WORD_RE.findall(text.casefold().replace("_", " "))

    def _finish(self, words: list[str]) -> list[str]:
        stop = self._stoplist
        if stop:
            words = [w for w in words if w not in stop]
        if self._stemmer is not None:
            stems = self._stems
            missing = [w for w in set(words) if w not in stems]
            if missing:
                stems.update(zip(missing, self._stemmer.stemWords(missing)))
            words = [stems[w] for w in words]
        return words

    def terms(self, text: str) -> list[str]:
        """The terms of ``text`` in order: words, stopped and stemmed as the settings say."""
        return self._finish(self.words(text))

    def counts(self, text: str) -> AnalyzedDocument:
        """Only the term counts of ``text`` (no sequence): stopwords are dropped from the distinct
        words rather than from every occurrence, the fast path when only counts are indexed.
        A long text is read in pieces (:func:`text_pieces`), so memory holds one piece's words
        and the distinct words, never a string per word of the whole text."""
        counts: Counter[str] = Counter()
        for piece in text_pieces(text):
            counts.update(self.words(piece))
        for word in self._stoplist.intersection(counts):
            del counts[word]
        if self._stemmer is not None:
            stems = self._stems
            missing = [w for w in counts if w not in stems]
            if missing:
                stems.update(zip(missing, self._stemmer.stemWords(missing)))
            stemmed: Counter[str] = Counter()
            for word, count in counts.items():
                stemmed[stems[word]] += count
            counts = stemmed
        return AnalyzedDocument([], counts=counts)

    def analyze(self, text: str) -> AnalyzedDocument:
        """Terms with sentence and paragraph boundaries (for fingerprint strategies)."""
        terms: list[str] = []
        sentence_starts: list[int] = []
        paragraph_starts: list[int] = []
        for paragraph in _PARAGRAPH_BREAK_RE.split(text):
            para_start = len(terms)
            for sentence in _SENTENCE_END_RE.split(paragraph):
                sentence_terms = self.terms(sentence)
                if sentence_terms:
                    sentence_starts.append(len(terms))
                    terms.extend(sentence_terms)
            if len(terms) > para_start:
                paragraph_starts.append(para_start)
        return AnalyzedDocument(terms, sentence_starts, paragraph_starts)


#: Characters of text analysed at a time by :meth:`Analyzer.counts`.
PIECE_CHARS = 1 << 20


def text_pieces(text: str, size: int = PIECE_CHARS) -> Iterator[str]:
    """``text`` in consecutive pieces of about ``size`` characters, each ending just after a
    space or newline (or at the text's end), so no word spans two pieces. Case folding is per
    character and a space folds to itself, so the pieces' words are exactly the text's."""
    start = 0
    while start < len(text):
        end = start + size
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            if cut < start:  # no break in this stretch: the next one after it
                found = [i for i in (text.find(" ", end), text.find("\n", end)) if i >= 0]
                cut = min(found) if found else len(text) - 1
            end = cut + 1
        yield text[start:end]
        start = end


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs of ``text``: split at blank lines."""
    return [p for p in _PARAGRAPH_BREAK_RE.split(text) if p.strip()]
