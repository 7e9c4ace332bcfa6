"""Effectiveness evaluation (SPEC §4): P(s), R(20), HFM, separation and Sep./HFM.

A query's documents are ranked by absolute percentage over the **full** collection: documents
that share nothing with the query score 0% and are not returned. For a query with relevant set
R, s = |R|:

- P(s): relevant documents among the first s returned, divided by s (R-precision);
- R(20): relevant documents among the first 20 returned (all returned, if fewer), divided by s;
- HFM: the highest percentage of a non-relevant document (0 when none scores);
- Sep.: the lowest percentage of a relevant document (0 for one that is not returned) − HFM.

Averages are over queries, and Sep./HFM is mean Sep. / mean HFM. Ties are ranked by document
number (= sorted id order, :func:`coderiv.ranking.search.top_k`), exactly as ``coderiv query`` shows them.
Percentages are rounded to :data:`PERCENT_DECIMALS` decimals first, so that floating-point noise
does not decide a tie (a copy of the query may compute as 99.99999999999999%, the query itself
as 100%). A TREC run (:func:`write_run`) keeps coderiv's order for trec_eval, which breaks ties
by docno descending, by nudging tied scores apart (:func:`run_scores`): it evaluates to the same
P(s) and R(20), and HFM and Sep. within 0.0001 points.

Methods are pluggable: a **method factory** takes an :class:`~coderiv.index.reader.IndexReader` and returns a
function ``query doc id -> percentages of every document, in document-number order``.
:func:`register_method` adds one by name; :func:`register_family` adds a parameterised family
(``"fingerprint:anchor,g=4"`` resolves through the family ``"fingerprint"``); every ranking
measure of :data:`coderiv.ranking.measures.MEASURES` is registered here under its own name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np

from coderiv.errors import CoderivError, InputError
from coderiv.evaluation.methods import PercentagesFn, get_method
from coderiv.index.reader import IndexReader
from coderiv.output import json_percent
from coderiv.progress import Progress
from coderiv.ranking.kernel import top_k

RECALL_DEPTH = 20
PERCENT_DECIMALS = 8


# -- metrics ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class QueryMetrics:
    """SPEC §4's metrics for one query, with what the plot needs (relevant percentages)."""

    query_id: str
    relevant: int  # s = |R|
    returned: int  # documents scoring above 0%
    precision: float  # P(s)
    recall: float  # R(20)
    hfm: float
    lowest_relevant: float
    relevant_percents: tuple[float, ...] = ()

    @property
    def sep(self) -> float:
        return self.lowest_relevant - self.hfm

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query_id,
            "relevant": self.relevant,
            "returned": self.returned,
            "precision_s": self.precision,
            "recall_20": self.recall,
            "hfm": json_percent(self.hfm),
            "lowest_relevant": json_percent(self.lowest_relevant),
            "sep": json_percent(self.sep),
        }


def query_metrics(
    query_id: str, percents: np.ndarray, relevant: np.ndarray, unscored_relevant: int = 0
) -> QueryMetrics:
    """Metrics of one query from every candidate's percentage and a relevance mask.

    ``percents`` and ``relevant`` are aligned; position breaks ties (document number, or rank
    in a run file). ``unscored_relevant`` counts relevant documents outside the arrays (absent
    from the run or the index): they are relevant, at 0%, never returned.
    """
    percents = np.asarray(percents, np.float64)
    relevant = np.asarray(relevant, bool)
    s = int(relevant.sum()) + unscored_relevant
    if s == 0:
        raise CoderivError(f"query {query_id} has no relevant document")
    ranking = top_k(percents, None)
    hits = relevant[ranking]
    false = percents[~relevant]
    rel = percents[relevant]
    lowest = 0.0 if unscored_relevant or len(rel) == 0 else float(rel.min())
    return QueryMetrics(
        query_id=query_id,
        relevant=s,
        returned=len(ranking),
        precision=int(hits[:s].sum()) / s,
        recall=int(hits[:RECALL_DEPTH].sum()) / s,
        hfm=float(max(false.max(initial=0.0), 0.0)),
        lowest_relevant=lowest,
        relevant_percents=tuple(sorted(rel.tolist(), reverse=True)) + (0.0,) * unscored_relevant,
    )


class _Mean:
    """A :class:`MethodResult` attribute: the mean over its queries of their
    :class:`QueryMetrics` attribute of the same name (0 without queries)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, result: None, owner: type) -> _Mean: ...

    @overload
    def __get__(self, result: MethodResult, owner: type) -> float: ...

    def __get__(self, result: MethodResult | None, owner: type) -> float | _Mean:
        if result is None:
            return self
        return float(np.mean([getattr(q, self.name) for q in result.queries])) if result.queries else 0.0


@dataclass
class MethodResult:
    """One method's per-query metrics and their averages (Sep./HFM = mean Sep. / mean HFM)."""

    method: str
    queries: list[QueryMetrics]
    rankings: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    precision = _Mean()
    recall = _Mean()
    hfm = _Mean()
    sep = _Mean()

    @property
    def ratio(self) -> float | None:
        """Mean Sep. / mean HFM; None when the mean HFM is 0 (no false match at all)."""
        return self.sep / self.hfm if self.hfm > 0 else None

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "method": self.method,
            "queries": len(self.queries),
            "precision_s": self.precision,
            "recall_20": self.recall,
            "hfm": json_percent(self.hfm),
            "sep": json_percent(self.sep),
            "sep_over_hfm": self.ratio,
        }
        if per_query:
            data["per_query"] = [q.to_dict() for q in self.queries]
        return data


# -- topics: queries and relevance judgements ---------------------------------------------------
def _fields(line: str) -> list[str]:
    return line.rstrip("\r\n").split("\t") if "\t" in line else line.split()


def _data_lines(path: str | Path) -> Iterable[tuple[int, list[str]]]:
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, [f.strip() for f in _fields(line)]


def read_queries(path: str | Path) -> dict[str, str]:
    """``query_id<TAB>doc_id`` lines (the corpora's queries.tsv) -> {query id: doc id}."""
    queries: dict[str, str] = {}
    for number, fields in _data_lines(path):
        if len(fields) != 2:
            raise InputError(f"{path}:{number}: expected 'query_id<TAB>doc_id', got {len(fields)} fields")
        if fields[0] in queries:
            raise InputError(f"{path}:{number}: query {fields[0]} given twice")
        queries[fields[0]] = fields[1]
    if not queries:
        raise InputError(f"{path}: no queries")
    return queries


def read_qrels(path: str | Path) -> dict[str, set[str]]:
    """Relevance judgements -> {query id: relevant doc ids}.

    Accepts the corpora's ``qid doc rel`` and TREC's ``qid iteration doc rel``; a document is
    relevant when ``rel > 0``.
    """
    qrels: dict[str, set[str]] = {}
    for number, fields in _data_lines(path):
        if len(fields) not in (3, 4):
            raise InputError(f"{path}:{number}: expected 'qid docid rel' or 'qid 0 docid rel', got {len(fields)} fields")
        qid, doc, rel = fields[0], fields[-2], fields[-1]
        try:
            grade = int(rel)
        except ValueError:
            raise InputError(f"{path}:{number}: relevance {rel!r} is not an integer") from None
        judged = qrels.setdefault(qid, set())
        if grade > 0:
            judged.add(doc)
    return qrels


def write_qrels(path: str | Path, qrels: Mapping[str, Iterable[str]]) -> None:
    """TREC qrels (``qid 0 docid 1``), readable by trec_eval."""
    lines = [f"{qid} 0 {doc} 1" for qid in qrels for doc in sorted(qrels[qid])]
    Path(path).write_text("".join(line + "\n" for line in lines), "utf-8")


# -- TREC run files -----------------------------------------------------------------------------
Run = dict[str, list[tuple[str, float]]]


#: Relative gap between consecutive scores of a run file where coderiv's ranking has a tie:
#: two float32 steps, so that trec_eval (doubles) and pytrec_eval (floats) both see them apart.
RUN_TIE_GAP = 2.5e-7


def run_scores(percents: Iterable[float]) -> list[float]:
    """The scores a TREC run gives a ranking (percentages, best first, in coderiv's order):
    strictly decreasing, so that trec_eval ranks the documents as coderiv does.

    coderiv breaks a tie by document id ascending, trec_eval by docno *descending*, so equal
    scores would come back in the opposite order (P(s) 0.8 against 1.0 on a dev query with an
    exact tie). Each score is the percentage rounded to :data:`PERCENT_DECIMALS` decimals, except
    that it is kept at least :data:`RUN_TIE_GAP` (relative) below the previous one: only tied (or
    nearly tied) documents move, each by at most its place in the tie times 0.000025 points at
    100%.
    """
    scores: list[float] = []
    for value in percents:
        score = round(float(value), PERCENT_DECIMALS)
        if scores and score > scores[-1] * (1 - RUN_TIE_GAP):
            score = scores[-1] * (1 - RUN_TIE_GAP)
        scores.append(score)
    return scores


def write_run(path: str | Path, run: Mapping[str, list[tuple[str, float]]], tag: str) -> None:
    """A TREC run (``qid Q0 docid rank score tag``), best first; scores are the percentages,
    made strictly decreasing where coderiv's ranking has ties (:func:`run_scores`)."""
    if any(c.isspace() for c in tag):
        raise InputError(f"run tag {tag!r} contains white space")
    with open(path, "w", encoding="utf-8") as out:
        for qid, ranking in run.items():
            scores = run_scores(score for _, score in ranking)
            for rank, ((doc, _), score) in enumerate(zip(ranking, scores), 1):
                if any(c.isspace() for c in doc):
                    raise InputError(f"document id {doc!r} contains white space; a TREC run cannot hold it")
                out.write(f"{qid} Q0 {doc} {rank} {score:.15g} {tag}\n")


def read_run(path: str | Path) -> tuple[str, Run]:
    """A TREC run -> (its tag, {qid: [(doc, score)] ordered by score desc, then rank}), each
    document once."""
    rows: dict[str, list[tuple[float, int, str]]] = {}
    tags: set[str] = set()
    for number, fields in _data_lines(path):
        if len(fields) != 6:
            raise InputError(f"{path}:{number}: expected 'qid Q0 docid rank score tag', got {len(fields)} fields")
        qid, _, doc, rank, score, tag = fields
        try:
            rows.setdefault(qid, []).append((-float(score), int(rank), doc))
        except ValueError:
            raise InputError(f"{path}:{number}: rank {rank!r} or score {score!r} is not a number") from None
        tags.add(tag)
    if len(tags) > 1:
        raise InputError(f"{path}: holds several runs ({', '.join(sorted(tags))}); give one run per file")
    run: Run = {}
    for qid, ranked in rows.items():
        best: dict[str, float] = {}  # a document listed twice counts once, at its best score
        for neg, _, doc in sorted(ranked):
            best.setdefault(doc, -neg)
        run[qid] = list(best.items())
    return (tags.pop() if tags else Path(path).stem), run


# -- evaluating ---------------------------------------------------------------------------------
@dataclass
class Topics:
    """Queries (query id -> query doc id) and their relevant documents, checked for use."""

    queries: dict[str, str]
    qrels: dict[str, set[str]]
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, queries: str | Path, qrels: str | Path) -> Topics:
        """Read both files; queries without any relevant document are left out (with a warning)."""
        q = read_queries(queries)
        r = read_qrels(qrels)
        missing = [qid for qid in q if not r.get(qid)]
        topics = cls({qid: d for qid, d in q.items() if r.get(qid)}, {qid: r[qid] for qid in q if r.get(qid)})
        if missing:
            topics.warnings.append(f"{len(missing)} queries without relevant documents left out: {', '.join(missing[:5])}")
        if not topics.queries:
            raise InputError(f"no query of {queries} has a relevant document in {qrels}")
        return topics

    def check(self, index: IndexReader) -> list[str]:
        """Refuse query documents missing from ``index``; warn of relevant ones missing (0%)."""
        numbers = index.doc_numbers
        absent = [f"{qid} ({doc})" for qid, doc in self.queries.items() if doc not in numbers]
        if absent:
            raise InputError(
                f"{len(absent)} query documents are not in the index at {index.root}: {', '.join(absent[:3])}"
            )
        unknown = sorted({d for docs in self.qrels.values() for d in docs if d not in numbers})
        if unknown:
            return [f"{len(unknown)} relevant documents are not in the index (counted at 0%): {', '.join(unknown[:3])}"]
        return []


def evaluate_method(
    index: IndexReader, method: str, topics: Topics, keep_rankings: bool = False, label: str | None = None,
    progress: Progress | None = None, percentages: PercentagesFn | None = None,
) -> MethodResult:
    """Run ``method`` for every query of ``topics`` over ``index`` and measure it (``progress``
    follows the queries); ``percentages`` computes the method's percentages where the method
    table cannot (a sharded index)."""
    if percentages is None:
        percentages = get_method(method)(index)
    numbers = index.doc_numbers
    result = MethodResult(label or method, [])
    if progress is not None:
        progress.start(len(topics.queries), "queries")
    for qid, doc in topics.queries.items():
        pct = np.round(np.asarray(percentages(doc), np.float64), PERCENT_DECIMALS)
        if pct.shape != (index.n_docs,):
            raise CoderivError(f"method {method} returned {pct.shape} percentages for {index.n_docs} documents")
        relevant = np.zeros(index.n_docs, bool)
        known = [numbers[d] for d in topics.qrels[qid] if d in numbers]
        relevant[known] = True
        unscored = len(topics.qrels[qid]) - len(known)
        result.queries.append(query_metrics(qid, pct, relevant, unscored))
        if keep_rankings:
            ranked = top_k(pct, None)
            result.rankings[qid] = [(index.doc_ids[d], float(pct[d])) for d in ranked.tolist()]
        if progress is not None:
            progress.advance(1)
    return result


def run_coverage_warning(run: Mapping[str, list[tuple[str, float]]], topics: Topics, method: str) -> str | None:
    """A warning when a run lists only some of the topics' queries: the others count as
    returning nothing (P(s) = R(20) = 0), and the averages are still over every query, where
    trec_eval without ``-c`` would average over the run's queries only."""
    covered = sum(1 for qid in topics.queries if run.get(qid))
    if covered == len(topics.queries):
        return None
    return (
        f"run {method} covers {covered} of {len(topics.queries)} queries: the {len(topics.queries) - covered} "
        f"missing count as returning nothing, and the averages are over all {len(topics.queries)}"
    )


def evaluate_run(run: Mapping[str, list[tuple[str, float]]], topics: Topics, method: str) -> MethodResult:
    """Measure a run read from a file: documents it does not list are at 0%."""
    result = MethodResult(method, [])
    for qid in topics.queries:
        ranking = run.get(qid, [])
        relevant_ids = topics.qrels[qid]
        percents = np.array([score for _, score in ranking], np.float64)
        relevant = np.array([doc in relevant_ids for doc, _ in ranking], bool)
        unscored = len(relevant_ids - {doc for doc, _ in ranking})
        result.queries.append(query_metrics(qid, percents, relevant, unscored))
    return result
