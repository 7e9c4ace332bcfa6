"""Building a sharded index (:mod:`coderiv.index.format.shard_set`): every shard written (in this
process, or one task per shard on Dask workers that see the source and the index folder), the
term tables merged once (global f_t, N), each shard's W_d computed with them in a second pass.
Only then is ``SHARDS.json`` replaced: a crash at any point leaves the previous set whole and
queryable. Every build writes a complete new set; when the live set has the same shard count,
analysis and stores, the new set starts from hard links to the live shards' files and each shard
is *updated* (only its added or changed documents are analysed, as for one index), then the
collection-wide statistics are merged again."""

from __future__ import annotations

import datetime as _dt
import heapq
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from coderiv._version import __version__
from coderiv.errors import CoderivError
from coderiv.index.builder.generation import UpdateReport
from coderiv.index.format.recorded import RecordedLayout, recorded_layout
from coderiv.index.format.shard_set import (
    FORMAT,
    FORMAT_VERSION,
    SHARDS_MANIFEST,
    global_checksums,
    global_table,
    shard_folder,
    shard_of,
)
from coderiv.index.format.storage import fsync_path, write_lock
from coderiv.index.index import Index
from coderiv.index.shards import ShardedIndex
from coderiv.keys.kinds import StoreSpec
from coderiv.text.analysis import AnalysisSettings
from coderiv.text.extract import Markup

if TYPE_CHECKING:  # the build's modules are imported by the functions that build
    from coderiv.index.builder.analysis_workers import Skipped
    from coderiv.text.collection import RawDocument

def _save(path: Path, array: np.ndarray) -> None:
    np.save(path, array)
    fsync_path(path)


# -- building -------------------------------------------------------------------------------------
def build_shard(
    source: str, set_dir: str, k: int, shard: int, settings: dict[str, Any], specs: list[dict[str, Any]], workers: int | None,
    markup: str = Markup.RENDER.value,
) -> UpdateReport | None:
    """Write shard ``shard`` of ``k``: the documents of ``source`` that hash to it (None when it
    gets none). Runs on a Dask worker or in this process; every shard lists the whole source
    (a folder's names, an archive's headers) but reads only its own documents."""
    from coderiv.text.remote import iter_source

    selected = 0

    def mine() -> Iterator[RawDocument]:
        nonlocal selected
        # a path or an fsspec URL, read by this worker: only this shard's documents are read
        for raw in iter_source(source, wanted=lambda doc_id: shard_of(doc_id, k) == shard):
            selected += 1
            yield raw

    out = shard_folder(Path(set_dir), shard)
    try:
        return Index.update_from(
            mine(), out, settings=AnalysisSettings.from_dict(settings),
            stores=[StoreSpec.from_dict(s) for s in specs], workers=workers, markup=Markup(markup),
        )
    except CoderivError:
        if selected == 0:
            shutil.rmtree(out, ignore_errors=True)
            return None
        raise


def finish_shard(set_dir: str, shard: int, n_docs: int) -> None:
    """Second pass over one shard: W_d and the cosine bound with the collection's f_t and N."""
    from coderiv.index.builder.cosine_statistics import cosine_statistics
    from coderiv.index.cosine_bounds import class_norms, save_class_norms

    folder = Path(set_dir)
    index = Index.open(shard_folder(folder, shard))
    keys = np.load(global_table(folder, "terms_keys.npy"), mmap_mode="r")
    df = np.load(global_table(folder, "terms_df.npy"), mmap_mode="r")
    store = index.terms
    f_t = np.asarray(df)[np.searchsorted(keys, np.asarray(store.keys))]
    norms, max_unit = cosine_statistics(store, index.n_docs, f_t=f_t, collection_size=n_docs)
    _save(global_table(folder, f"shard-{shard:03d}.norms.npy"), norms)
    _save(global_table(folder, f"shard-{shard:03d}.max_unit.npy"), max_unit)
    table, limits = class_norms(store, index.n_docs, norms, f_t=f_t, collection_size=n_docs)
    for path in save_class_norms(folder / "global", table, limits, prefix=f"shard-{shard:03d}."):
        fsync_path(path)


Runner = Callable[[Callable[..., Any], Sequence[tuple[Any, ...]]], list[Any]]


def run_here(function: Callable[..., Any], calls: Sequence[tuple[Any, ...]]) -> list[Any]:
    """Run every call in this process, one after the other."""
    return [function(*args) for args in calls]


def dask_runner(client: Any) -> Runner:
    """Run every call as a task on the workers of a ``distributed.Client`` (a task whose worker
    dies is rerun elsewhere by Dask; a task's failure is raised here)."""

    def run(function: Callable[..., Any], calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        futures = [client.submit(function, *args, pure=False) for args in calls]
        return list(client.gather(futures))

    return run


@dataclass
class ShardedReport:
    """What a sharded build did: documents in each shard, what changed (an update of the live
    set) and the files it could not index."""

    shards: int
    shard_documents: list[int]
    skipped: list[Skipped] = field(default_factory=list)
    lossy: list[str] = field(default_factory=list)
    #: whether the live set was updated (else the new set was built from scratch)
    updated: bool = False
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0

    @property
    def n_docs(self) -> int:
        return sum(self.shard_documents)


def build_sharded(
    source: str | os.PathLike[str], path: str | os.PathLike[str], shards: int, settings: AnalysisSettings | None = None,
    stores: list[StoreSpec] | None = None, workers: int | None = None, runner: Runner | None = None,
    markup: Markup | None = None, dask_address: str | None = None,
) -> ShardedReport:
    """Build a sharded index of ``source`` at ``path`` with ``shards`` shards, each written by
    ``runner`` (default: in this process; :func:`dask_runner` for a cluster, whose tasks analyse
    with one process each), or on the Dask cluster at ``dask_address`` (``local``: a
    LocalCluster of ``workers`` processes), whose workers are first checked to run this coderiv
    version (and to have fsspec for a source given by URL). The previous set stays live until
    the new one is complete.
    ``markup`` (None: the set's record) is recorded in the set's manifest and each shard's;
    another than the live set's builds the set anew."""
    from coderiv.text.remote import source_name

    if dask_address is not None:
        from coderiv.system.cluster import check_workers, dask_client
        from coderiv.text.remote import is_url

        with dask_client(dask_address, workers) as client:
            check_workers(client, ("fsspec",) if is_url(source) else ())
            return build_sharded(source, path, shards, settings, stores, workers, dask_runner(client), markup)
    if shards < 1:
        raise CoderivError("--shards must be at least 1")
    root = Path(path)
    if (root / "CURRENT").exists():
        raise CoderivError(f"{root} holds a single index; give a new folder for a sharded one")
    source_path = source_name(source)
    assert source_path is not None
    run = runner or run_here
    task_workers = workers if runner is None else 1
    with write_lock(root):
        live = _updatable_set(root, shards, settings, stores, markup)
        if live is not None:
            settings = live.settings
            specs = live.specs
            markup = live.markup
        else:
            recorded = recorded_layout(root) or RecordedLayout(None, [], Markup.RENDER)  # a damaged set is rebuilt alike
            settings = settings or recorded.settings
            specs = [s.to_dict() for s in (stores if stores is not None else recorded.stores)]
            markup = markup or recorded.markup
        settings = settings or AnalysisSettings()
        previous = [p for p in root.glob("set-*") if p.is_dir()]
        number = max((int(p.name[4:]) for p in previous if p.name[4:].isdigit()), default=0) + 1
        set_dir = root / f"set-{number:06d}"
        shutil.rmtree(set_dir, ignore_errors=True)
        set_dir.mkdir(parents=True)
        try:
            if live is not None:
                for s in range(shards):
                    if (live.set_dir / shard_folder(live.set_dir, s).name).is_dir():
                        _link_shard(shard_folder(live.set_dir, s), shard_folder(set_dir, s))
            calls = [
                (source_path, str(set_dir), shards, s, settings.to_dict(), specs, task_workers, markup.value) for s in range(shards)
            ]
            reports: list[UpdateReport | None] = run(build_shard, calls)
            built = [s for s, r in enumerate(reports) if r is not None]
            if not built:
                raise CoderivError(f"no indexable documents in {source}")
            counts = _merge_statistics(set_dir, built)
            n_docs = sum(counts.values())
            run(finish_shard, [(str(set_dir), s, n_docs) for s in built])
            report = ShardedReport(shards, [counts.get(s, 0) for s in range(shards)], updated=live is not None)
            for s, r in enumerate(reports):
                if r is not None:
                    report.skipped.extend(r.skipped)
                    report.lossy.extend(r.lossy)
                    report.added += len(r.added)
                    report.changed += len(r.changed)
                    report.removed += len(r.removed)
                    report.unchanged += r.unchanged
                elif live is not None:
                    report.removed += live.shard_documents[s]  # every document of the shard is gone
            _commit(root, set_dir, {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "coderiv_version": __version__,
                "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "set": set_dir.name,
                "shards": shards,
                "shard_documents": report.shard_documents,
                "documents": n_docs,
                "source": source_path,
                "analysis": settings.to_dict(),
                "reading": {"markup": markup.value},
            })
        except BaseException:
            shutil.rmtree(set_dir, ignore_errors=True)
            raise
        for old in previous:
            shutil.rmtree(old, ignore_errors=True)
        return report


@dataclass(frozen=True)
class _LiveSet:
    """What an update of a sharded index keeps from its live set."""

    set_dir: Path
    settings: AnalysisSettings
    specs: list[dict[str, Any]]
    shard_documents: list[int]
    markup: Markup


def _updatable_set(
    root: Path, shards: int, settings: AnalysisSettings | None, stores: list[StoreSpec] | None, markup: Markup | None = None
) -> _LiveSet | None:
    """The live set, when the asked-for build can update it: same shard count, analysis settings
    and markup reading (None keeps the live ones) and stores (None keeps them). Otherwise (or if
    it does not open) None: the new set is built from scratch."""
    try:
        index = ShardedIndex(root)
    except (CoderivError, OSError, KeyError, TypeError, ValueError):
        return None
    if index.k != shards or (settings is not None and settings.to_dict() != index.settings.to_dict()):
        return None
    if markup is not None and markup is not index.markup:
        return None
    recorded = next(iter(index.shards.values())).manifest["stores"] if index.shards else {}
    specs = [meta["spec"] for name, meta in sorted(recorded.items()) if name != "terms"]
    if stores is not None and sorted(json.dumps(s.to_dict(), sort_keys=True) for s in stores) != sorted(
        json.dumps(s, sort_keys=True) for s in specs
    ):
        return None
    return _LiveSet(index.set_dir, index.settings, specs, list(index.manifest["shard_documents"]), index.markup)


def _link_shard(live: Path, new: Path) -> None:
    """A new shard folder sharing the live shard's generation files by hard links (generations
    are never written in place: an update writes a new one beside them) and copying the rest
    (CURRENT, lock), so the update below leaves the live set untouched."""
    for folder, _, names in os.walk(live):
        target = new / Path(folder).relative_to(live)
        target.mkdir(parents=True, exist_ok=True)
        in_generation = Path(folder).relative_to(live).parts[:1] != ()
        for name in names:
            if in_generation:
                os.link(Path(folder) / name, target / name)
            elif name != "lock":
                shutil.copy2(Path(folder) / name, target / name)


#: term keys merged per range of the key space (keys are uniform 64-bit hashes, so each range
#: holds about 1/MERGE_RANGES of every shard's keys): the merge holds one range of all shards
MERGE_RANGES = 64


def merge_term_tables(tables: Sequence[tuple[np.ndarray, np.ndarray]], ranges: int = MERGE_RANGES) -> tuple[np.ndarray, np.ndarray]:
    """The union of several shards' sorted unique term keys and, for each key, the sum of its
    document counts (``tables``: each shard's keys and postings offsets ``ptr``, memory-mapped:
    a key's count is its postings' length). Merged range by range
    of the 64-bit key space, so the working memory is about 1/``ranges`` of all shards' keys
    (plus the result), not K times the collection's vocabulary."""
    bounds = [(2**64 * i) // ranges for i in range(ranges + 1)]
    keys_out: list[np.ndarray] = []
    df_out: list[np.ndarray] = []
    for low, high in zip(bounds, bounds[1:]):
        parts, counts = [], []
        for keys, ptr in tables:
            start = int(np.searchsorted(keys, np.uint64(low)))
            stop = len(keys) if high >= 2**64 else int(np.searchsorted(keys, np.uint64(high)))
            parts.append(np.asarray(keys[start:stop], np.uint64))
            counts.append(np.diff(np.asarray(ptr[start : stop + 1], np.int64)))
        merged, inverse = np.unique(np.concatenate(parts), return_inverse=True)
        keys_out.append(merged)
        df_out.append(np.bincount(inverse.ravel(), weights=np.concatenate(counts), minlength=len(merged)).astype(np.int64))
    return np.concatenate(keys_out), np.concatenate(df_out)


def _merge_statistics(set_dir: Path, built: list[int]) -> dict[int, int]:
    """The collection's term table (keys, f_t) and every document's global number, written once;
    returns each shard's document count."""
    indexes = {s: Index.open(shard_folder(set_dir, s)) for s in built}
    (set_dir / "global").mkdir()
    keys, df = merge_term_tables([(ix.terms.keys, ix.terms.ptr) for ix in indexes.values()])
    _save(global_table(set_dir, "terms_keys.npy"), keys)
    _save(global_table(set_dir, "terms_df.npy"), df)
    numbers = global_numbers({s: ix.doc_ids for s, ix in indexes.items()})
    for s, shard_numbers in numbers.items():
        _save(global_table(set_dir, f"shard-{s:03d}.numbers.npy"), shard_numbers)
    return {s: ix.n_docs for s, ix in indexes.items()}


def global_numbers(ids: dict[int, Sequence[str]]) -> dict[int, np.ndarray]:
    """Each shard's documents' numbers in the whole collection (their ranks in sorted id order),
    from every shard's ids sorted as an index numbers them: one k-way merge, no list of all ids."""
    numbers = {s: np.empty(len(shard_ids), np.int64) for s, shard_ids in ids.items()}

    def stream(shard: int, shard_ids: Sequence[str]) -> Iterator[tuple[str, int, int]]:
        return ((doc_id, shard, j) for j, doc_id in enumerate(shard_ids))

    for number, (_, s, j) in enumerate(heapq.merge(*(stream(s, shard_ids) for s, shard_ids in ids.items()))):
        numbers[s][j] = number
    return numbers


def _commit(root: Path, set_dir: Path, manifest: dict[str, Any]) -> None:
    """Publish ``set_dir``: the tables' checksums recorded, the manifest written aside, fsynced
    and renamed over the old."""
    manifest = {**manifest, "global_crc32": global_checksums(set_dir)}
    fsync_path(set_dir / "global")
    fsync_path(set_dir)
    fsync_path(root)
    tmp = root / (SHARDS_MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True), "utf-8")
    fsync_path(tmp)
    os.replace(tmp, root / SHARDS_MANIFEST)
    fsync_path(root)
