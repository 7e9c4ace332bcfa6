"""Building the evidence report: candidates → aligned passages → exclusions → shares.

1. **Candidates** (docs/report.md, "Sources and their cost"): every document holding at least
   ``min_chunks`` of the query's chunks in the containment search (:mod:`coderiv.ranking.containment`,
   which finds the sources of partial copies), at most ``max_candidates`` of them, most chunks
   first; its greedy cover (the documents that together hold most of the query); and the
   ranking measure's top ``top`` documents (whole-document likeness: versions and revisions).
2. **Aligned passages**: each candidate is re-read from the indexed collection and aligned with
   the query (:func:`coderiv.overlap.align.align_sources`: seeds, extension, filtering; one
   passage per copied passage across changed, inserted and deleted words), each passage with
   the words identical on both sides and those that differ: no hash or term-statistics false
   match survives.
3. **Exclusions**, applied to the query's words: quotations and a bibliography *that look like
   one* (:mod:`coderiv.text.exclusion_rules`), template text and passages common to many
   documents (:mod:`coderiv.report.exclusions`); then aligned passages left with fewer than
   ``min_words`` counted words are small matches and do not count. Excluded passages stay in
   the report, greyed, with the reason.
4. **Versions** of one source (chunk similarity both ways at least ``version_percent``) are
   grouped under the member matching most words (then most identical words); the group counts
   every word any member matches, and lists every version the index's version groups know.
5. **Shares**: each query word counts once. Sources are taken greedily, the one explaining
   most words not yet credited first, so the words a source alone explains are credited to it
   and shared ones to the source that explains more; the shares add up to the overall figure.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from coderiv.errors import CoderivError, InputError
from coderiv.index.reader import IndexReader
from coderiv.overlap.align import REUSE_KINDS, AlignedPassage, AlignSettings, WordSpan, align_sources, align_texts
from coderiv.overlap.matching import NormalizedText, normalize
from coderiv.overlap.pairwise import ShingleScores, chunk_set
from coderiv.progress import Progress
from coderiv.ranking.containment import ChunkSearcher, PreparedChunks, open_with_chunks
from coderiv.ranking.results import QueryResult
from coderiv.ranking.searchers import QueryOptions, chunk_searcher, make_searcher
from coderiv.report.exclusions import is_common, template_spans
from coderiv.report.model import PassageSpan, Report, ReportExclusion, ReportOptions, ReportPassage, ReportSource, ReportVersion
from coderiv.report.window_candidates import WINDOW_MEASURE, window_candidates
from coderiv.text.exclusion_rules import cited_quotes, reference_entries
from coderiv.text.exclusions import KINDS, Span, is_restructuredtext, merge_spans, word_bounds
from coderiv.text.reading import QueryDocument
from coderiv.text.sources import DocumentTexts

#: Fewest words an aligned passage's seeds must cover to be looked at: passages under the
#: report's ``min_words`` (but at least this long) are shown as small matches, greyed. Shorter
#: ones are left out even with ``min_words=0``: 3- and 4-word runs ("of the request") are shared
#: by most documents and made every source's share noisy (docs/evaluation.md).
ALIGN_FLOOR_WORDS = 5

#: A passage's run of more than this many differing query words in a row is not counted for
#: its source: an edit changes a word or a few, a longer run is the writer's own text between
#: two copied stretches (the alignment joins copies up to 20-30 words apart).
MAX_COUNTED_CHANGE = 8
#: ... and in a paraphrased passage that is largely copied (at least :data:`COPIED_SHARE` of its
#: words identical), a longer run: there a paragraph of the student's own between copied ones (20
#: words and more without one identical word) was joined in by the sentence seeds and is not a
#: paraphrase of the text it faces. A paraphrase proper (fewer identical words: a translation, a
#: reordered rewording) and a summary count all their words: their changed runs are the rewording.
MAX_PARAPHRASE_CHANGE = 15
COPIED_SHARE = 0.3


def _longest_counted_change(p: AlignedPassage | ReportPassage) -> int | None:
    """The longest run of changed words a passage counts (None: any; see :data:`MAX_COUNTED_CHANGE`)."""
    if p.reuse in ("verbatim", "edited"):
        return MAX_COUNTED_CHANGE
    if p.reuse == "paraphrased" and p.identical_share >= COPIED_SHARE:
        return MAX_PARAPHRASE_CHANGE
    return None

#: Exclusions whose passages keep their source in the list (share 0 when nothing else counts);
#: small and common matches do not (they would list every document sharing a phrase).
SHOWN_EXCLUDED = frozenset({"quote", "bibliography", "template"})

#: Highlight colours of the sources, in rank order (distinct on screen and in print; reused
#: cyclically beyond twelve sources).
PALETTE = (
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4",
    "#f032e6", "#9a6324", "#469990", "#808000", "#000075", "#bfef45",
)


@dataclass
class _Words:
    """The query's words: bounds, and the exclusion kind of each (0: counted, k: KINDS[k-1])."""

    starts: np.ndarray
    ends: np.ndarray
    kind: np.ndarray

    def range(self, start: int, end: int) -> tuple[int, int]:
        """Indexes [i0, i1) of the words wholly inside characters [start, end)."""
        i0 = int(np.searchsorted(self.starts, start, "left"))
        i1 = int(np.searchsorted(self.ends, end, "right"))
        return i0, max(i0, i1)

    def mark(self, spans: list[Span]) -> None:
        """Attribute to each span's kind the words starting inside it (first kind in KINDS wins)."""
        for span in sorted(spans, key=lambda s: -KINDS.index(s.kind)):
            i0 = int(np.searchsorted(self.starts, span.start, "left"))
            i1 = int(np.searchsorted(self.starts, span.end, "left"))
            self.kind[i0:i1] = KINDS.index(span.kind) + 1


def build_report(
    index: IndexReader,
    query_text: str,
    label: str = "query",
    options: ReportOptions | None = None,
    texts: DocumentTexts | None = None,
) -> Report:
    """The evidence report of the document ``query_text`` against ``index`` (module docstring).

    The index needs a chunk store (:func:`coderiv.ranking.containment.open_with_chunks` adds
    it); ``texts`` re-reads candidates from the indexed collection (by default from
    ``index.source``). On a sharded index every search is the sharded one, with one index's
    answers (:mod:`coderiv.ranking.sharded`), so the report is one index's.
    """
    options = options or ReportOptions()
    if options.top < 1:
        raise InputError(f"top must be at least 1 (got {options.top})")
    containment = chunk_searcher(index)
    prepared = containment.prepare(query_text)
    if prepared.length == 0:
        raise InputError(f"{label} has no words after analysis ({index.settings.describe()})")
    found = _candidates(index, containment, prepared, query_text, options)
    query = normalize(query_text)
    words, spans = _query_words(query_text, query, label, options)
    doc_texts = (texts or index.source_texts()).get(found.ids) if found.ids else {}
    passages, covers = _aligned(found.ids, query_text, doc_texts, words, options, containment)
    # a source whose matches are all excluded (quoted, in the bibliography, in a template) is
    # listed too, with share 0: excluded text stays visible as a match, with its source
    matched = [d for d in found.ids if covers[d].any() or any(p.excluded in SHOWN_EXCLUDED for p in passages[d])]
    groups = _group(matched, doc_texts, index, options) if options.group_versions else [[d] for d in matched]
    containment_percent = containment.percentages(prepared)

    def best_first(d: str) -> tuple[int, int, float, float]:
        """Most words matched, then most identical words, then containment, then the ranking
        measure's whole-document likeness: the release the text was copied from."""
        same = sum(p.same_words for p in passages[d] if p.excluded is None)
        return -int(covers[d].sum()), -same, -float(containment_percent[index.number(d)]), -found.ranking.get(d, 0.0)

    groups = [sorted(members, key=best_first) for members in groups]  # best member first (stable)
    credited, picked = _credit(groups, covers, len(words.starts))
    known = _known_versions(index) if options.group_versions else {}
    sources = [
        _source(rank, members, cover, credit, passages, covers, doc_texts, words,
                float(containment_percent[index.number(members[0])]), found.ranking.get(members[0]), known)
        for rank, (members, cover, credit) in enumerate(picked, start=1)
    ]
    exclusions = _exclusions(spans, passages, credited, words)
    excluded_words = {kind: int(np.count_nonzero(words.kind == k + 1)) for k, kind in enumerate(KINDS)}
    note = None
    if not found.ids:
        note = "no document of the collection shares a chunk or a term with the query"
    elif not sources:
        note = "no candidate shares a counted aligned passage with the query"
    total = len(words.starts)
    return Report(
        label=label,
        query_text=query_text,
        total_words=total,
        covered_words=int(credited.sum()),
        overall=_percent(int(credited.sum()), total),
        sources=sources,
        exclusions=exclusions,
        excluded_words=excluded_words,
        options=options,
        index=str(index.root),
        documents=index.n_docs,
        candidates=len(found.ids),
        searches=found.searches,
        note=note,
        words_by_reuse=_by_reuse(sources, credited, words),
    )


@dataclass
class _Candidates:
    """Step 1's result: the candidates in order, the ranking measure's percentages of its own
    candidates, and the searches that found them."""

    ids: list[str]
    ranking: dict[str, float]
    searches: list[str]


def _candidates(
    index: IndexReader, containment: ChunkSearcher, prepared: PreparedChunks, query_text: str, options: ReportOptions,
) -> _Candidates:
    """Step 1: every document holding ``min_chunks`` of the query's chunks (at most
    ``max_candidates``, most first), the containment search's greedy cover (as many), the
    ranking measure's top ``top``, then what the query's windows rank first (at most
    ``window_candidates``: :mod:`coderiv.report.window_candidates`), each without the excluded
    documents, merged in that order."""
    skip = set(options.exclude_docs)
    cap = max(options.max_candidates, 1)
    floor = 100.0 * (max(options.min_chunks, 1) - 0.5) / max(len(prepared.keys), 1)
    held = containment.rank(prepared, cap + len(skip), min_percent=floor).matches
    candidates = [m.doc_id for m in held if m.doc_id not in skip][:cap]
    covering = [d for d, _ in containment.cover(prepared, cap + len(skip)) if d not in skip]
    candidates += [d for d in covering[:cap] if d not in candidates]
    searches = [containment.method, f"{containment.method} cover"]
    ranking: dict[str, float] = {}
    if options.measure is not None:
        result = _ranked(index, query_text, options.measure, options.top + len(skip))
        ranking = {m.doc_id: m.percent for m in result.matches if m.doc_id not in skip}
        ranking = dict(list(ranking.items())[: options.top])
        candidates += [d for d in ranking if d not in candidates]
        searches.append(options.measure)
    if options.window_candidates:
        candidates += window_candidates(index, query_text, skip, set(candidates), options.window_candidates)
        searches.append(f"{WINDOW_MEASURE} windows")
    return _Candidates(candidates, ranking, searches)


def _query_words(query_text: str, query: NormalizedText, label: str, options: ReportOptions) -> tuple[_Words, list[Span]]:
    """Step 3's text exclusions: the query's words, marked with the quotation, bibliography and
    template spans that exclude them, and those spans."""
    starts, ends = word_bounds(query_text)
    words = _Words(starts, ends, np.zeros(len(starts), np.int64))
    spans: list[Span] = []
    if options.exclude_quotes:
        spans += cited_quotes(query_text, rest=is_restructuredtext(label))
    if options.exclude_bibliography:
        spans += reference_entries(query_text)
    spans += template_spans(query, options.templates, options.min_chars)
    words.mark(spans)
    return words, spans


def _aligned(
    candidates: list[str], query_text: str, doc_texts: dict[str, str], words: _Words,
    options: ReportOptions, containment: ChunkSearcher,
) -> tuple[dict[str, list[ReportPassage]], dict[str, np.ndarray]]:
    """Step 2: each candidate's aligned passages, classified by the exclusions, and the counted
    query words they cover."""
    settings = AlignSettings(min_words=ALIGN_FLOOR_WORDS)
    found = align_sources(query_text, {d: doc_texts[d] for d in candidates}, settings)
    found = {d: found[d] + _inner(found[d], query_text, doc_texts[d], words, settings) for d in candidates}
    passages = {d: _classify(found[d], d, query_text, words, options, containment) for d in candidates}
    return passages, {d: _coverage(passages[d], words) for d in candidates}


def _credit(
    groups: list[list[str]], covers: dict[str, np.ndarray], n_words: int,
) -> tuple[np.ndarray, list[tuple[list[str], np.ndarray, np.ndarray]]]:
    """Step 5: sources taken greedily (most words not yet credited first); each group's members
    (best first), the words it covers and those credited to it; and every credited word."""
    credited = np.zeros(n_words, bool)
    picked: list[tuple[list[str], np.ndarray, np.ndarray]] = []
    pending = [(members, np.logical_or.reduce([covers[d] for d in members])) for members in groups]
    while pending:
        gains = [int(np.count_nonzero(cover & ~credited)) for _, cover in pending]
        best = max(range(len(pending)), key=lambda i: (gains[i], int(np.count_nonzero(pending[i][1])), -i))
        members, cover = pending.pop(best)
        credit = cover & ~credited
        credited |= cover
        picked.append((members, cover, credit))
    return credited, picked


def _source(
    rank: int, members: list[str], cover: np.ndarray, credit: np.ndarray, passages: dict[str, list[ReportPassage]],
    covers: dict[str, np.ndarray], doc_texts: dict[str, str], words: _Words, containment_percent: float,
    ranking_percent: float | None, known: dict[str, frozenset[str]],
) -> ReportSource:
    """One source of the report: its best member, its versions (those aligned, then every other
    one the index's version groups know), share and passages (each with the words of it that
    are credited to this source)."""
    head = members[0]
    total = len(words.starts)
    versions = [ReportVersion(d, int(covers[d].sum())) for d in members[1:]]
    others = set().union(*(known.get(d, frozenset()) for d in members)) - set(members)
    versions += [ReportVersion(d, 0, verified=False) for d in sorted(others)]
    source_passages = [replace(p, credited_words=int(credit[slice(*words.range(p.query_start, p.query_end))].sum()))
                       for d in members for p in passages[d]]
    return ReportSource(
        rank=rank,
        doc_id=head,
        color=PALETTE[(rank - 1) % len(PALETTE)],
        share=_percent(int(credit.sum()), total),
        credited_words=int(credit.sum()),
        matched_words=int(cover.sum()),
        matched_percent=_percent(int(cover.sum()), total),
        containment_percent=containment_percent,
        ranking_percent=ranking_percent,
        versions=versions,
        passages=sorted(source_passages, key=lambda p: (p.doc_id != head, p.query_start, p.doc_id)),
        text=doc_texts[head],
    )


def _ranked(index: IndexReader, text: str, measure: str, top: int) -> QueryResult:
    """The ranked list of ``text`` by ``measure``."""
    searcher = make_searcher(index, "ranking", QueryOptions(measure))
    return searcher.rank(searcher.prepare(text), top)


def _percent(part: int, total: int) -> float:
    return 100.0 * part / total if total else 0.0


def _inner(
    found: list[AlignedPassage], query_text: str, source_text: str, words: _Words, settings: AlignSettings,
) -> list[AlignedPassage]:
    """Passages inside a passage's long runs of differing query words (more than
    :data:`MAX_COUNTED_CHANGE`), aligned again with the source: a paragraph copied twice in a
    row is one passage whose second copy faces other source text; aligning the run alone finds
    the copy (own text inserted between copied stretches finds nothing). The run is aligned by
    word n-grams only: the sentence seeds would join its repeated copies into one passage again,
    whose inner run would stay uncounted (a paragraph pasted three times counted twice)."""
    settings = replace(settings, reworded=False)
    out = []
    for p in found:
        longest = _longest_counted_change(p)
        for span in p.a_spans if longest is not None else ():  # a summary's changed runs are its rewording
            i0, i1 = words.range(span.start, span.end)
            if span.kind == "changed" and longest is not None and i1 - i0 > longest:
                out += [_shifted(q, span.start) for q in align_texts(query_text[span.start : span.end], source_text, settings)]
    return out


def _shifted(p: AlignedPassage, offset: int) -> AlignedPassage:
    """``p`` with its query side moved ``offset`` characters on."""
    return replace(
        p, a_start=p.a_start + offset, a_end=p.a_end + offset,
        a_spans=tuple(WordSpan(w.start + offset, w.end + offset, w.kind) for w in p.a_spans),
    )


def _spans(spans: tuple[WordSpan, ...]) -> tuple[PassageSpan, ...]:
    return tuple(PassageSpan(w.start, w.end, w.kind) for w in spans)


def _classify(
    found: list[AlignedPassage], doc_id: str, query_text: str, words: _Words, options: ReportOptions,
    containment: ChunkSearcher,
) -> list[ReportPassage]:
    """The aligned passages of one candidate with their word counts and the exclusion dropping each."""
    counted = np.concatenate(([0], np.cumsum(words.kind == 0)))
    out = []
    for number, p in enumerate(sorted(found, key=lambda p: (p.a_start, p.a_end)), start=1):
        text = query_text[p.a_start : p.a_end]
        i0, i1 = words.range(p.a_start, p.a_end)
        n_counted = int(counted[i1] - counted[i0])
        excluded: str | None = None
        if i1 > i0 and n_counted == 0:
            excluded = KINDS[int(np.bincount(words.kind[i0:i1]).argmax()) - 1]
        elif options.common_docs is not None and is_common(containment, text, options.common_docs):
            excluded = "common"
        elif n_counted < max(options.min_words, 1):
            excluded = "small"
        out.append(ReportPassage(
            number, doc_id, p.a_start, p.a_end, p.b_start, p.b_end, i1 - i0, n_counted, excluded, text,
            same_words=p.same_words, source_words=p.b_words, query_spans=_spans(p.a_spans), source_spans=_spans(p.b_spans),
            reuse=p.reuse,
        ))
    return out


def _known_versions(index: IndexReader) -> dict[str, frozenset[str]]:
    """Each document's versions from the index's ``chunks`` pair table (``coderiv groups
    --mutual``), when it has an up-to-date one; else none (the verified members only)."""
    from coderiv.pairs.groups import version_sets
    from coderiv.pairs.table import PairTable

    stored = index.stored_pairs_index()
    if stored is None:
        return {}
    try:
        return version_sets(PairTable.open(stored, "chunks"))
    except CoderivError:
        return {}


def _by_reuse(sources: list[ReportSource], credited: np.ndarray, words: _Words) -> dict[str, int]:
    """The credited words by the kind of the first counted passage that holds them (the most
    identical kind first, sources in rank order)."""
    order: dict[str, int] = {kind: k + 1 for k, kind in enumerate(REUSE_KINDS)}
    kind_of = np.zeros(len(credited), np.int64)
    for source in sources:
        counted = [p for p in source.passages if p.excluded is None and p.credited_words]
        for p in sorted(counted, key=lambda p: order[p.reuse]):
            i0, i1 = words.range(p.query_start, p.query_end)
            take = credited[i0:i1] & (kind_of[i0:i1] == 0)
            kind_of[i0:i1][take] = order[p.reuse]
    return {kind: int(np.count_nonzero(kind_of == k + 1)) for k, kind in enumerate(REUSE_KINDS)}


def _coverage(passages: list[ReportPassage], words: _Words) -> np.ndarray:
    """Counted query words inside the counted passages, but for a stretch of more than
    :data:`MAX_COUNTED_CHANGE` differing words in a row of a verbatim or edited passage (text
    inserted between two copied stretches, not an edit of the copy), of more than
    :data:`MAX_PARAPHRASE_CHANGE` of a largely copied paraphrased one; a paraphrase proper and a
    summary count all their words, whatever their identical ones (:func:`_longest_counted_change`)."""
    mark = np.zeros(len(words.starts) + 1, np.int64)
    for p in passages:
        if p.excluded is None:
            i0, i1 = words.range(p.query_start, p.query_end)
            mark[i0] += 1
            mark[i1] -= 1
            longest = _longest_counted_change(p)
            for span in p.query_spans if longest is not None else ():
                j0, j1 = words.range(span.start, span.end)
                if span.kind == "changed" and longest is not None and j1 - j0 > longest:
                    mark[j0] -= 1
                    mark[j1] += 1
    covered: np.ndarray = (np.cumsum(mark)[:-1] > 0) & (words.kind == 0)
    return covered


def _group(doc_ids: list[str], texts: dict[str, str], index: IndexReader, options: ReportOptions) -> list[list[str]]:
    """Documents grouped as versions of one another (union of pairs whose chunk similarity is at
    least ``version_percent`` both ways), each group in the candidates' order."""
    chunks = {d: chunk_set(index.analyzer.terms(texts[d])) for d in doc_ids}
    parent = {d: d for d in doc_ids}

    def root(d: str) -> str:
        while parent[d] != d:
            d = parent[d]
        return d

    for i, a in enumerate(doc_ids):
        for b in doc_ids[i + 1 :]:
            ca, cb = chunks[a], chunks[b]
            scores = ShingleScores(len(ca), len(cb), len(np.intersect1d(ca, cb, assume_unique=True)))
            if min(scores.a_in_b, scores.b_in_a) * 100 >= options.version_percent and root(a) != root(b):
                parent[root(b)] = root(a)
    groups: dict[str, list[str]] = {}
    for d in doc_ids:
        groups.setdefault(root(d), []).append(d)
    return list(groups.values())


def _exclusions(
    spans: list[Span], passages: dict[str, list[ReportPassage]], credited: np.ndarray, words: _Words
) -> list[ReportExclusion]:
    """Every exclusion with the words it removed: the text spans, then the query spans of common
    and small passages (their words not counted through another passage are attributed to them)."""
    dropped: list[Span] = []
    for kind in ("common", "small"):
        dropped += merge_spans([
            Span(p.query_start, p.query_end, kind, "found in many documents" if kind == "common" else "small match")
            for ps in passages.values() for p in ps if p.excluded == kind
        ])
    for span in dropped:
        i0, i1 = words.range(span.start, span.end)
        free = np.flatnonzero((words.kind[i0:i1] == 0) & ~credited[i0:i1]) + i0
        words.kind[free] = KINDS.index(span.kind) + 1
    out = []
    for span in sorted(merge_spans(spans) + dropped, key=lambda s: (s.start, s.end)):
        i0 = int(np.searchsorted(words.starts, span.start, "left"))
        i1 = int(np.searchsorted(words.starts, span.end, "left"))
        n = int(np.count_nonzero(words.kind[i0:i1] == KINDS.index(span.kind) + 1))
        if n == 0 and span.kind in ("common", "small"):
            continue  # its words are counted through another passage
        out.append(ReportExclusion(span.kind, span.start, span.end, n, span.reason))
    return out



def report_document(
    index_path: str | os.PathLike[str] | None,
    query: QueryDocument,
    options: ReportOptions | None = None,
    announce: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> Report:
    """``coderiv report``: open the index (adding its chunk store if it lacks one, see
    :func:`coderiv.ranking.containment.open_with_chunks`) and build the report of ``query``."""
    index = open_with_chunks(index_path, announce=announce, progress=progress)
    return build_report(index, query.text, query.label, options)
