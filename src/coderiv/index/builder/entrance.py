"""The one entrance to building or updating an index, whatever its kind: one index, or K shards
written here or on a Dask cluster. ``coderiv index`` and the library ask this function; it
decides how (an existing sharded index stays sharded), checks the options that do not apply,
and refuses a full rebuild of a large index unless it was asked for."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coderiv.errors import CoderivError
from coderiv.index.builder.generation import UpdateReport
from coderiv.index.builder.sharded import ShardedReport, build_sharded
from coderiv.index.index import Index
from coderiv.index.reader import shard_count
from coderiv.keys.kinds import StoreSpec
from coderiv.progress import Progress
from coderiv.text.analysis import AnalysisSettings
from coderiv.text.extract import Markup

if TYPE_CHECKING:
    from coderiv.text.collection import Source


def build_index(
    source: Source, path: str | os.PathLike[str], *,
    stop: bool | None = None, stem: bool | None = None, language: str | None = None,  # the analysis
    stores: list[StoreSpec] | None = None, workers: int | None = None, shards: int | None = None, dask_address: str | None = None,
    hidden: bool | None = None, follow_symlinks: bool | None = None, markup: Markup | None = None,  # reading the source
    rebuild: bool = False, progress: Progress | None = None, announce: Callable[[str], Any] | None = None,
) -> UpdateReport | ShardedReport:
    """Build the index of ``source`` at ``path``, or bring it up to date.

    ``shards`` (None: as the index at ``path`` is, one index for a new one) builds K shards, on
    the Dask cluster at ``dask_address`` when given. Analysis flags left as None keep the
    index's settings; a change that re-analyses every document of a large index
    (:attr:`~coderiv.index.index.UpdatePlan.needs_confirmation`) is refused in one line unless
    ``rebuild``; ``announce`` is told of a full rebuild first. ``progress`` follows the bytes
    read of one index (a sharded set is written shard by shard)."""
    if shards is None:
        shards = shard_count(path)  # an update of a sharded index keeps its shards
    if dask_address is not None and shards is None:
        raise CoderivError("--dask applies to sharded builds: add --shards K")
    if shards is not None:
        if hidden or follow_symlinks:
            raise CoderivError("--hidden and --follow-symlinks apply to one index, not to --shards")
        source_path = source if isinstance(source, (str, os.PathLike)) else None
        if source_path is None:
            raise CoderivError("a sharded index is built from a folder, an archive or a URL, not from a stream of documents")
        settings = AnalysisSettings.from_flags(stop, stem, language)
        return build_sharded(source_path, path, shards, settings, stores, workers, markup=markup, dask_address=dask_address)
    plan = Index.plan_update(path, stop, stem, language, stores, markup)
    if plan.needs_confirmation and not rebuild:
        raise CoderivError(
            f"{plan.rebuild}: this re-analyses all {plan.documents} documents of {Path(path)}; add --rebuild to go ahead"
        )
    if plan.rebuild and announce is not None:
        announce(f"full rebuild of {plan.documents} documents: {plan.rebuild}")
    return Index.update_from(
        source, path, settings=plan.settings, stores=stores, workers=workers, progress=progress,
        hidden=hidden, follow_symlinks=follow_symlinks, markup=plan.markup,
    )
