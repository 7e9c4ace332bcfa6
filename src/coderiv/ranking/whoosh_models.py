"""coderiv's eight measures as whoosh ``WeightingModel`` objects, for users of whoosh indexes.

coderiv's own index is numpy because whoosh's matchers take seconds for one
whole-document query (a document query has hundreds of terms); but a user who already keeps a
whoosh index can rank it with the same measures, computed by the same formula functions
(:mod:`coderiv.ranking.measures`)::

    from whoosh import index
    from coderiv.ranking.whoosh_models import coderiv_schema, document_query, weighting_for

    ix = index.create_in(folder, coderiv_schema())          # id, content, length
    ... writer.add_document(id=..., content=text, length=len(analyzer.terms(text)))
    weighting, query = weighting_for("identity5", text), document_query(text)
    with ix.searcher(weighting=weighting) as searcher:
        hits = searcher.search(query, limit=10)
        own = weighting.self_score(searcher)                # 100 % = hit.score / own

Three whoosh traps are handled here: ``Term.matcher()`` never passes the query term frequency to
``scorer()``, so the weighting carries a term → f_qt table; whoosh stores field lengths in one
lossy byte, so exact lengths f_d live in a numeric column and the length factor is applied in
``final()``; an ``Or`` of hundreds of terms uses ``Or.ARRAY_MATCHER`` (ten times faster).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from coderiv.extras import require

require("whoosh", "whoosh", "the whoosh WeightingModels (coderiv.ranking.whoosh_models)")

from whoosh import fields, query  # noqa: E402
from whoosh.analysis import Token, Tokenizer  # noqa: E402
from whoosh.scoring import BaseScorer, WeightingModel  # noqa: E402

from coderiv.ranking.measures import Measure, cosine_normalization, get_measure, self_score  # noqa: E402
from coderiv.text.analysis import AnalysisSettings, Analyzer  # noqa: E402
from coderiv.weights import posting_norms  # noqa: E402

LENGTH_FIELD = "length"
CONTENT_FIELD = "content"


class CoderivTokenizer(Tokenizer):
    """A whoosh tokenizer yielding coderiv's terms (SPEC §1), so both indexes agree exactly."""

    def __init__(self, settings: AnalysisSettings | None = None) -> None:
        self.settings = settings or AnalysisSettings()
        self._analyzer = Analyzer(self.settings)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CoderivTokenizer) and other.settings == self.settings

    def __hash__(self) -> int:
        return hash(self.settings)

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Any:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for pos, term in enumerate(self._analyzer.terms(value) if tokenize else [value]):
            token.text = term
            token.boost = 1.0
            token.stopped = False
            if positions:
                token.pos = start_pos + pos
            yield token


def coderiv_schema(settings: AnalysisSettings | None = None) -> fields.Schema:
    """A whoosh schema with coderiv analysis: ``id`` (stored), ``content``, exact ``length``."""
    return fields.Schema(
        id=fields.ID(stored=True, unique=True),
        content=fields.TEXT(analyzer=CoderivTokenizer(settings), phrase=False),
        length=fields.NUMERIC(int, bits=64, sortable=True, stored=True),
    )


def document_query(text: str, settings: AnalysisSettings | None = None, field: str = CONTENT_FIELD) -> query.Or:
    """An ``Or`` of every distinct query term, with the array matcher fit for long queries."""
    terms = sorted(set(Analyzer(settings).terms(text)))
    disjunction = query.Or([query.Term(field, t) for t in terms])
    disjunction.matcher_type = query.Or.ARRAY_MATCHER
    return disjunction


class _TermScorer(BaseScorer):
    def __init__(self, measure: Measure, f_qt: float, f_t: float, n_docs: float) -> None:
        self._measure, self._f_qt, self._f_t, self._n = measure, f_qt, f_t, n_docs

    def score(self, matcher: Any) -> float:
        f_dt = np.array([matcher.weight()])
        return float(self._measure.term(f_dt, np.array([self._f_qt]), np.array([self._f_t]), self._n)[0])


class CoderivWeighting(WeightingModel):
    """A coderiv measure as a whoosh weighting model for one query document.

    ``query_counts`` is f_qt per term and ``query_length`` is f_q (every term of the query,
    those absent from the collection included, as SPEC §3 says).
    """

    use_final = True

    def __init__(self, measure: str, query_counts: dict[str, int], query_length: int,
                 field: str = CONTENT_FIELD, length_field: str = LENGTH_FIELD) -> None:
        self.measure = get_measure(measure)
        self.query_counts = dict(query_counts)
        self.query_length = query_length
        self.field = field
        self.length_field = length_field
        self._lengths: dict[int, Any] = {}
        self._norms: dict[int, np.ndarray] = {}

    @staticmethod
    def _text(text: str | bytes) -> str:
        return text.decode("utf-8") if isinstance(text, bytes) else text

    def scorer(self, searcher: Any, fieldname: str, text: str | bytes, qf: int = 1) -> BaseScorer:
        parent = searcher.get_parent()
        term = self._text(text)
        f_t = parent.doc_frequency(fieldname, term)
        return _TermScorer(self.measure, float(self.query_counts.get(term, qf)), float(f_t), float(parent.doc_count_all()))

    def _length_column(self, searcher: Any) -> Any:
        key = id(searcher)
        if key not in self._lengths:
            self._lengths[key] = searcher.reader().column_reader(self.length_field)
        return self._lengths[key]

    def _doc_norms(self, searcher: Any) -> np.ndarray:
        """W_d of every document (cosine), computed once per searcher from the postings."""
        key = id(searcher)
        if key not in self._norms:
            reader = searcher.reader()
            n = reader.doc_count_all()
            docs: list[int] = []
            f_dts: list[float] = []
            f_ts: list[int] = []
            for text in reader.lexicon(self.field):
                f_t = reader.doc_frequency(self.field, text)
                for docnum, f_dt in reader.postings(self.field, text).items_as("weight"):
                    docs.append(docnum)
                    f_dts.append(f_dt)
                    f_ts.append(f_t)
            self._norms[key] = posting_norms(np.array(docs, np.int64), np.array(f_dts), np.array(f_ts), n)
        return self._norms[key]

    def final(self, searcher: Any, docnum: int, score: float) -> float:
        f_d = np.array([float(self._length_column(searcher)[docnum])])
        norm = self._doc_norms(searcher)[docnum : docnum + 1] if self.measure.doc is cosine_normalization else np.ones(1)
        return float(score * self.measure.doc(f_d, float(self.query_length), norm)[0])

    def self_score(self, searcher: Any) -> float:
        """S(q,q) over the query terms present in the whoosh index (100 % of a percentage)."""
        reader = searcher.reader()
        present = [(f, reader.doc_frequency(self.field, t)) for t, f in self.query_counts.items()]
        present = [(f, df) for f, df in present if df > 0]
        f_qt = np.array([f for f, _ in present], np.float64)
        f_t = np.array([df for _, df in present], np.float64)
        return self_score(self.measure, f_qt, f_t, reader.doc_count_all(), self.query_length)


def weighting_for(measure: str, text: str, settings: AnalysisSettings | None = None) -> CoderivWeighting:
    """The weighting model for ranking a whoosh index against the document ``text``."""
    terms = Analyzer(settings).terms(text)
    return CoderivWeighting(measure, Counter(terms), len(terms))
