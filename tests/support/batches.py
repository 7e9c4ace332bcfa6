"""The analysis workers' batch path checked against each document analysed alone."""

from __future__ import annotations

from coderiv.index.builder.analysis_workers import AnalyzedEntry, _Worker
from coderiv.text.collection import RawDocument


def assert_batch_equals_one_by_one(worker: _Worker, texts: list[str]) -> None:
    """``worker.run_batch`` of the texts gives, document by document, what ``worker.run`` of
    each alone gives: the same kind of result, length, stores, keys and values."""
    docs = [RawDocument(f"d{i}.txt", t.encode("utf-8", "surrogatepass")) for i, t in enumerate(texts)]
    for batched, alone in zip(worker.run_batch(docs), [worker.run(d) for d in docs], strict=True):
        assert type(batched) is type(alone)
        if isinstance(batched, AnalyzedEntry):
            assert isinstance(alone, AnalyzedEntry)
            assert batched.length == alone.length
            assert batched.stores.keys() == alone.stores.keys()
            for name, (keys, values) in alone.stores.items():
                assert batched.stores[name][0].tolist() == keys.tolist()
                assert batched.stores[name][1].tolist() == values.tolist()
        else:
            assert batched == alone
