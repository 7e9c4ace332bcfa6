"""Evaluating methods over a sharded index (:mod:`coderiv.index.shards`): the ranking measures
and the fingerprint methods, whose every percentage on a sharded index is bitwise one index's
(:mod:`coderiv.ranking.sharded`), so the metrics are exactly one index's too. Methods that need
one index (containment, passages, verified) are refused with one line."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

from coderiv.errors import CoderivError
from coderiv.evaluation.evaluate import MethodResult, Topics, evaluate_method
from coderiv.evaluation.methods import PercentagesFn, fingerprint_params, percentages_with
from coderiv.index.shards import ShardedIndex
from coderiv.progress import Progress
from coderiv.ranking.fanout import Fanout
from coderiv.ranking.measures import MEASURES
from coderiv.ranking.sharded import ShardedFingerprintSearcher, ShardedMeasureSearcher


class ShardedCollection:
    """A sharded index as evaluation reads it: documents numbered in sorted id order (the
    collection's order, as one index numbers them)."""

    def __init__(self, index: ShardedIndex) -> None:
        self.index = index

    @property
    def root(self) -> Path:
        return self.index.root

    @property
    def n_docs(self) -> int:
        return self.index.n_docs

    @property
    def doc_ids(self) -> list[str]:
        return self.index.doc_ids

    @cached_property
    def doc_numbers(self) -> dict[str, int]:
        return {doc_id: i for i, doc_id in enumerate(self.index.doc_ids)}


def sharded_percentages(index: ShardedIndex, method: str, fanout: Fanout | None = None) -> PercentagesFn:
    """``doc_id -> every document's percentage`` of ``method`` over the sharded index."""
    if method in MEASURES:
        return percentages_with(ShardedMeasureSearcher(index, method, fanout=fanout))
    prefix, sep, params = method.partition(":")
    if prefix == "fingerprint" and sep:
        store, full_query = fingerprint_params(params)
        return percentages_with(ShardedFingerprintSearcher(index, store, full_query, fanout=fanout))
    raise CoderivError(f"method {method} needs a single index; on a sharded one: the ranking measures and fingerprint:...")


def evaluate_sharded(
    index: ShardedIndex,
    methods: list[str],
    topics: Topics,
    keep_rankings: bool = False,
    progress: Callable[[str], Progress | None] | None = None,
    warn: Callable[[str], Any] | None = None,
) -> list[MethodResult]:
    """Every method over a sharded index, as :func:`~coderiv.evaluation.variants.evaluate_variants`
    does over one index as built."""
    collection = ShardedCollection(index)
    makers = {name: sharded_percentages(index, name) for name in methods}  # refuse before any query runs
    for warning in topics.check(collection):
        if warn is not None:
            warn(warning)
    results = []
    for name in methods:
        stage = progress(f"evaluating {name}") if progress else None
        results.append(evaluate_method(collection, name, topics, keep_rankings, name, stage, makers[name]))
    return results
