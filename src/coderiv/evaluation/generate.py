"""The plagiarized-document generator (paper 001 §4.1; SPEC §9).

A case is composed of random whole paragraphs of an *own* document (the part the plagiarist
wrote, ``own_share`` of the words, 40% by default) and of k *source* documents (the rest,
shared equally), shuffled. Paragraphs are taken from each donor in random order until its share
is reached, so whole paragraphs may push a donor above its share, as in the paper. The
expected similarity to each donor is the share of that donor's words used:
100 · words used / words in the donor. Words are those of the analyser before stopping
(:meth:`coderiv.text.analysis.Analyzer.words`).

The size of a case: the own document gives up to half of its words; the whole case is then
own words / own_share words long, and each source gives its share of that (all of itself if it
is too short). Output records have the fields of the dev collection's ``cases.jsonl``.

Donors are drawn without replacement from the collection shuffled with the seed, and only the
documents drawn are read (:func:`generate_from_texts`): a few hundred for a hundred cases, not
the whole collection. Their text is the visible text every reading path gives
(:func:`coderiv.text.extract.document_text`: reStructuredText rendered, HTML stripped), so a
case is made of the same text the index and the evaluation read.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from coderiv.errors import CoderivError, InputError
from coderiv.progress import Progress
from coderiv.text.analysis import Analyzer, split_paragraphs
from coderiv.text.collection import RawDocument
from coderiv.text.extract import document_text

#: ``texts(ids)``: the visible texts of those documents, read in one pass (unreadable ones left out).
Texts = Callable[[list[str]], dict[str, str]]

#: Share of a case's words written by the plagiarist (paper 001's example: 40%).
DEFAULT_OWN_SHARE = 0.4
DEFAULT_SOURCES = 3
#: Donors need at least this many paragraphs and words.
MIN_PARAGRAPHS = 2
MIN_WORDS = 60
#: A unit a case copies whole: paragraphs joined until they have this many words.
MIN_UNIT_WORDS = 20


@dataclass(frozen=True)
class Donor:
    """A document usable in a case: its id and paragraphs with their word counts."""

    doc_id: str
    paragraphs: list[str]
    words: list[int]

    @property
    def total(self) -> int:
        return sum(self.words)


def as_donor(doc_id: str, text: str, analyzer: Analyzer) -> Donor | None:
    """The document as a donor, or None if it has fewer than :data:`MIN_PARAGRAPHS` paragraphs
    or :data:`MIN_WORDS` words."""
    kept = _units([(p, len(analyzer.words(p))) for p in split_paragraphs(text)])
    if len(kept) >= MIN_PARAGRAPHS and sum(c for _, c in kept) >= MIN_WORDS:
        return Donor(doc_id, [p for p, _ in kept], [c for _, c in kept])
    return None


def _units(paragraphs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Paragraphs with their word counts, each of fewer than :data:`MIN_UNIT_WORDS` words joined
    to the ones after it (the last to the one before): a heading goes with its text, a list with
    its items, as the reStructuredText source held them before rendering split them apart."""
    units: list[tuple[str, int]] = []
    pending: list[str] = []
    words = 0
    for text, count in paragraphs:
        if count == 0:
            continue
        pending.append(text)
        words += count
        if words >= MIN_UNIT_WORDS:
            units.append(("\n\n".join(pending), words))
            pending, words = [], 0
    if pending:
        if units:
            last, last_words = units.pop()
            units.append(("\n\n".join([last, *pending]), last_words + words))
        else:
            units.append(("\n\n".join(pending), words))
    return units


def donors(documents: Iterable[RawDocument], analyzer: Analyzer | None = None) -> list[Donor]:
    """The documents with at least :data:`MIN_PARAGRAPHS` paragraphs and :data:`MIN_WORDS` words."""
    analyzer = analyzer or Analyzer()
    out = []
    for doc in documents:
        try:
            text = document_text(doc.data, doc.doc_id)
        except CoderivError:  # binary, unreadable, or a format whose extra is missing: no donor
            continue
        donor = as_donor(doc.doc_id, text, analyzer)
        if donor is not None:
            out.append(donor)
    return out


def _take(donor: Donor, target: float, rng: random.Random) -> list[int]:
    order = list(range(len(donor.paragraphs)))
    rng.shuffle(order)
    used, words = [], 0
    for i in order:
        if words >= target:
            break
        used.append(i)
        words += donor.words[i]
    return used


def make_case(case_id: str, own: Donor, sources: list[Donor], own_share: float, rng: random.Random) -> dict[str, Any]:
    """One case from an own document and its sources (see the module docstring)."""
    own_used = _take(own, own.total / 2, rng)
    own_words = sum(own.words[i] for i in own_used)
    total = own_words / own_share
    parts: list[tuple[Donor, str, list[int]]] = [(own, "own", own_used)]
    for source in sources:
        parts.append((source, "source", _take(source, total * (1 - own_share) / len(sources), rng)))
    pieces = [(donor.paragraphs[i]) for donor, _, used in parts for i in used]
    rng.shuffle(pieces)
    case_words = sum(sum(d.words[i] for i in used) for d, _, used in parts)
    records = []
    for donor, role, used in parts:
        words_used = sum(donor.words[i] for i in used)
        records.append({
            "doc_id": donor.doc_id,
            "role": role,
            "doc_words": donor.total,
            "words_used": words_used,
            "expected_percent": round(100 * words_used / donor.total, 2),
            "paragraphs_in_doc": len(donor.paragraphs),
            "paragraphs_used": len(used),
            "share_of_plagiarized_percent": round(100 * words_used / case_words, 2),
        })
    return {"case_id": case_id, "text": "\n\n".join(pieces) + "\n", "words": case_words, "sources": records}


def generate_from_texts(
    doc_ids: list[str],
    texts: Texts,
    count: int,
    n_sources: int = DEFAULT_SOURCES,
    own_share: float = DEFAULT_OWN_SHARE,
    seed: int = 0,
    progress: Progress | None = None,
) -> Iterator[dict[str, Any]]:
    """``count`` cases, each from n_sources + 1 donors: the documents of ``doc_ids`` shuffled
    with ``seed``, read by ``texts`` a batch at a time (only as many as the cases need) and
    dealt out in that order, each to one case at most until the collection is used up, then
    drawn again at random from those read (``progress`` follows the cases)."""
    if not 0 < own_share < 1:
        raise InputError(f"own share must be between 0 and 1, exclusive (got {own_share})")
    if n_sources < 1 or count < 1:
        raise InputError(f"need at least one source and one case (got {n_sources} sources, {count} cases)")
    rng = random.Random(seed)
    order = sorted(doc_ids)
    rng.shuffle(order)
    pool = _donor_stream(order, texts, count * (n_sources + 1))
    if progress is not None:
        progress.start(count, "cases")
    seen: list[Donor] = []  # every donor read so far: reused only once the collection is used up
    for number in range(1, count + 1):
        chosen = [d for d in (next(pool, None) for _ in range(n_sources + 1)) if d is not None]
        seen.extend(chosen)
        if len(chosen) < n_sources + 1:
            if len(seen) < n_sources + 1:
                raise InputError(
                    f"only {len(seen)} documents have {MIN_PARAGRAPHS}+ paragraphs and {MIN_WORDS}+ words; "
                    f"a case needs {n_sources + 1}"
                )
            chosen = rng.sample(seen, n_sources + 1)
        yield make_case(f"G{number:03d}", chosen[0], chosen[1:], own_share, rng)
        if progress is not None:
            progress.advance(1)


def _donor_stream(order: list[str], texts: Texts, needed: int) -> Iterator[Donor]:
    """The usable donors among ``order``, read in batches a little larger than still needed."""
    analyzer = Analyzer()
    at, given = 0, 0
    while at < len(order):
        batch = order[at:at + max(16, (needed - given) * 5 // 4)]
        at += len(batch)
        read = texts(batch)
        for doc_id in batch:
            donor = as_donor(doc_id, read[doc_id], analyzer) if doc_id in read else None
            if donor is not None:
                given += 1
                yield donor
