"""Candidates for reworded reuse: the query's windows ranked one by one (issue 40 item 2).

The report's other candidates come from 5-word chunks (a copy's words in their order) and from
one whole-document ranking; a paraphrased, shuffled or summarised passage keeps few 5-word
chunks of its source, and a whole thesis ranked at once names documents like the thesis, not the
one a page of it was reworded from. Source retrieval at PAN did what this does: it cut the
suspicious document into pieces and sent each piece as a query of its own (Potthast et al.,
"Overview of the 5th International Competition on Plagiarism Detection", PAN 2013; Suchomel,
Kasprzak & Brandejs, "Diverse Queries and Feature Type Selection for Plagiarism Discovery", PAN
2013: one query per paragraph-sized chunk). Here each window of :data:`WINDOW_WORDS` words is
ranked by cosine over the terms store (tf-idf: the words that survive a rewording, weighted by
rarity), and its top :data:`WINDOW_TOP` documents join the candidates, the best first, at most
:data:`MAX_WINDOW_CANDIDATES` of them; a long query is sampled at :data:`MAX_WINDOWS` windows,
evenly, so the cost stays bounded.
"""

from __future__ import annotations

from collections.abc import Collection

from coderiv.index.reader import IndexReader
from coderiv.ranking.searchers import QueryOptions, make_searcher
from coderiv.report.model import MAX_WINDOW_CANDIDATES
from coderiv.text.exclusions import word_bounds

#: Words a window holds: a paragraph, the size of PAN's shortest obfuscated cases.
WINDOW_WORDS = 60
#: Documents each window adds (its best).
WINDOW_TOP = 2
#: Windows ranked at most (a thesis of 30,000 words is sampled, not ranked 500 times).
MAX_WINDOWS = 120
#: The measure a window is ranked by.
WINDOW_MEASURE = "cosine"


def window_candidates(
    index: IndexReader, query_text: str, skip: Collection[str], have: Collection[str],
    limit: int = MAX_WINDOW_CANDIDATES,
) -> list[str]:
    """Documents the query's windows rank first, not in ``have`` nor ``skip``, at most ``limit``,
    the highest percentage a window gave them first."""
    if limit <= 0:
        return []
    starts, ends = word_bounds(query_text)
    n = len(starts)
    if n == 0:
        return []
    count = max(1, n // WINDOW_WORDS)
    step = max(1, count // MAX_WINDOWS)
    searcher = make_searcher(index, "ranking", QueryOptions(WINDOW_MEASURE))
    best: dict[str, float] = {}
    for w in range(0, count, step):
        first, last = w * WINDOW_WORDS, min(n, (w + 1) * WINDOW_WORDS) - 1
        if w == count - 1:
            last = n - 1  # the tail joins the last window
        prepared = searcher.prepare(query_text[int(starts[first]) : int(ends[last])])
        if prepared.length == 0:
            continue
        for match in searcher.rank(prepared, WINDOW_TOP + len(skip)).matches:
            if match.doc_id not in skip and match.doc_id not in have:
                best[match.doc_id] = max(best.get(match.doc_id, 0.0), match.percent)
    return sorted(best, key=lambda d: (-best[d], d))[:limit]
