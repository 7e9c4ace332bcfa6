"""A sharded index: a folder of normal coderiv indexes over a partition of the collection, with
the collection-wide statistics every measure needs, so that a sharded index answers exactly as
one index over the whole collection would.

Layout of a sharded index folder::

    SHARDS.json             the live set (written aside, fsynced, renamed: the atomic commit)
    set-000002/
      shard-000/ …          normal indexes (their own generations and checksums)
      global/terms_keys.npy, terms_df.npy         every term of the collection and its f_t
      global/shard-000.norms.npy, .max_unit.npy   W_d and the cosine bound, from global f_t and N
      global/shard-000.cosine_class_norms.npy, .cosine_class_limits.npy   per-document cosine bounds (same)
      global/shard-000.numbers.npy                each document's number in the whole collection

A document goes to shard ``blake2b(id) mod K``: stable across runs, machines and Python versions.
A build writes every shard (in this process, or one task per shard on Dask workers that see the
source and the index folder), then merges the term tables once (global f_t, N) and computes
each shard's W_d with them in a second pass. Only then is ``SHARDS.json`` replaced: a crash at
any point leaves the previous set whole and queryable. Every build writes a complete new set;
when the live set has the same shard count, analysis and stores, the new set starts from hard
links to the live shards' files and each shard is *updated* (only its added or changed documents
are analysed, as for one index), then the collection-wide statistics are merged again.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import heapq
import json
import os
import shutil
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from coderiv._version import __version__
from coderiv.errors import CoderivError, CorruptIndexError, IndexNotFoundError
from coderiv.index.cosine_bounds import load_class_norms
from coderiv.index.format import counts as counts_module
from coderiv.index.format.counts import CountValues
from coderiv.index.format.postings import Postings, SplitNumbers, group_by_key, narrow
from coderiv.index.format.storage import MANIFEST, fsync_path, newest_readable_manifest, write_lock
from coderiv.index.index import DocumentFacts, Index, UpdateReport
from coderiv.keys.kinds import StoreSpec
from coderiv.progress import Progress
from coderiv.text.analysis import AnalysisSettings, Analyzer
from coderiv.text.extract import Markup

if TYPE_CHECKING:  # the build's modules are imported by the functions that build (a query never does)
    from coderiv.index.builder.analysis_workers import Skipped
    from coderiv.text.collection import RawDocument
    from coderiv.text.sources import DocumentTexts

SHARDS_MANIFEST = "SHARDS.json"
#: ``<index>/pairs-view/<set>/``: the generation folder of a sharded index's :class:`ShardView`
VIEW_DIR = "pairs-view"
FORMAT = "coderiv-shards"
#: 2 records a CRC-32 of every collection-wide table (``global/``), checked at open
FORMAT_VERSION = 2

T = TypeVar("T")


def shard_of(doc_id: str, k: int) -> int:
    """The shard of a document among ``k``: a stable hash of its id (BLAKE2b, 64 bits) mod k."""
    digest = hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % k


def is_sharded(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds a sharded index."""
    return (Path(path) / SHARDS_MANIFEST).is_file()


def _shard_folder(set_dir: Path, shard: int) -> Path:
    return set_dir / f"shard-{shard:03d}"


def _global(set_dir: Path, name: str) -> Path:
    return set_dir / "global" / name



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

    out = _shard_folder(Path(set_dir), shard)
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
    index = Index.open(_shard_folder(folder, shard))
    keys = np.load(_global(folder, "terms_keys.npy"), mmap_mode="r")
    df = np.load(_global(folder, "terms_df.npy"), mmap_mode="r")
    store = index.terms
    f_t = np.asarray(df)[np.searchsorted(keys, np.asarray(store.keys))]
    norms, max_unit = cosine_statistics(store, index.n_docs, f_t=f_t, collection_size=n_docs)
    _save(_global(folder, f"shard-{shard:03d}.norms.npy"), norms)
    _save(_global(folder, f"shard-{shard:03d}.max_unit.npy"), max_unit)
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
    source: str | os.PathLike[str],
    path: str | os.PathLike[str],
    shards: int,
    settings: AnalysisSettings | None = None,
    stores: list[StoreSpec] | None = None,
    workers: int | None = None,
    runner: Runner | None = None,
    markup: Markup | None = None,
) -> ShardedReport:
    """Build a sharded index of ``source`` at ``path`` with ``shards`` shards, each written by
    ``runner`` (default: in this process; :func:`dask_runner` for a cluster, whose tasks analyse
    with one process each). The previous set stays live until the new one is complete.
    ``markup`` (None: the set's record) is recorded in the set's manifest and each shard's;
    another than the live set's builds the set anew."""
    from coderiv.text.remote import source_name

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
            recorded_settings, recorded_specs = _recorded_layout(root)  # a damaged set is rebuilt alike
            settings = settings or recorded_settings
            specs = [s.to_dict() for s in stores] if stores is not None else recorded_specs
            markup = markup or _recorded_markup(root)
        settings = settings or AnalysisSettings()
        previous = [p for p in root.glob("set-*") if p.is_dir()]
        number = max((int(p.name[4:]) for p in previous if p.name[4:].isdigit()), default=0) + 1
        set_dir = root / f"set-{number:06d}"
        shutil.rmtree(set_dir, ignore_errors=True)
        set_dir.mkdir(parents=True)
        try:
            if live is not None:
                for s in range(shards):
                    if (live.set_dir / _shard_folder(live.set_dir, s).name).is_dir():
                        _link_shard(_shard_folder(live.set_dir, s), _shard_folder(set_dir, s))
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


def _recorded_layout(root: Path) -> tuple[AnalysisSettings | None, list[dict[str, Any]]]:
    """The analysis and extra stores the live set at ``root`` was built with, read from its
    manifests even when the set no longer opens (so that rebuilding a damaged sharded index
    keeps its stemming and stores, as one index does); (None, []) when nothing says."""
    try:
        manifest = json.loads((root / SHARDS_MANIFEST).read_text("utf-8"))
        settings = AnalysisSettings.from_dict(manifest["analysis"])
        set_dir = root / manifest["set"]
    except (OSError, ValueError, KeyError, TypeError, CoderivError):
        return None, []
    for folder in sorted(set_dir.glob("shard-*")):
        shard_manifest = newest_readable_manifest(folder)
        if shard_manifest is not None and isinstance(shard_manifest.get("stores"), dict):
            return settings, [meta["spec"] for name, meta in sorted(shard_manifest["stores"].items()) if name != "terms"]
    return settings, []


def _recorded_markup(root: Path) -> Markup:
    """The markup reading the sharded index at ``root`` records (rendering when none says)."""
    try:
        return Markup.recorded(json.loads((root / SHARDS_MANIFEST).read_text("utf-8")).get("reading"))
    except (OSError, ValueError, AttributeError, CoderivError):
        return Markup.RENDER


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


def build_sharded_on(
    source: str | os.PathLike[str],
    path: str | os.PathLike[str],
    shards: int,
    settings: AnalysisSettings | None = None,
    stores: list[StoreSpec] | None = None,
    workers: int | None = None,
    dask_address: str | None = None,
    markup: Markup | None = None,
) -> ShardedReport:
    """:func:`build_sharded` in this process, or on the Dask cluster at ``dask_address``
    (``local``: a LocalCluster of ``workers`` processes), whose workers are first checked to
    run this coderiv version (and to have fsspec for a source given by URL)."""
    if dask_address is None:
        return build_sharded(source, path, shards, settings, stores, workers, markup=markup)
    from coderiv.system.cluster import check_workers, dask_client
    from coderiv.text.remote import is_url

    with dask_client(dask_address, workers) as client:
        check_workers(client, ("fsspec",) if is_url(source) else ())
        return build_sharded(source, path, shards, settings, stores, workers, dask_runner(client), markup)


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
    indexes = {s: Index.open(_shard_folder(set_dir, s)) for s in built}
    (set_dir / "global").mkdir()
    keys, df = merge_term_tables([(ix.terms.keys, ix.terms.ptr) for ix in indexes.values()])
    _save(_global(set_dir, "terms_keys.npy"), keys)
    _save(_global(set_dir, "terms_df.npy"), df)
    numbers = global_numbers({s: ix.doc_ids for s, ix in indexes.items()})
    for s, shard_numbers in numbers.items():
        _save(_global(set_dir, f"shard-{s:03d}.numbers.npy"), shard_numbers)
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


def _file_crc32(path: Path) -> int:
    """CRC-32 of a whole file, read in 16 MiB pieces."""
    crc = 0
    with open(path, "rb") as handle:
        while piece := handle.read(16 << 20):
            crc = zlib.crc32(piece, crc)
    return crc


def global_checksums(set_dir: Path) -> dict[str, int]:
    """CRC-32 of every collection-wide table of a set (``global/``), by file name."""
    return {path.name: _file_crc32(path) for path in sorted((set_dir / "global").iterdir()) if path.is_file()}


def check_global_tables(set_dir: Path, recorded: Any) -> None:
    """Refuse (one line) a set whose collection-wide tables differ from their recorded CRC-32s.

    Every query of a sharded index reads them (f_t, N, W_d, the cosine bounds, the global
    numbers), and each shard's own block checksums do not cover them: checked whole at open,
    about 0.2 s a GB (CRC-32 at ~5 GB/s; a million documents hold some tens of MB)."""
    if not isinstance(recorded, dict):
        raise CorruptIndexError(f"sharded index at {set_dir.parent} records no checksums of its tables; rebuild it")
    found = global_checksums(set_dir)
    for name in sorted(set(found) | set(recorded)):
        if found.get(name) != recorded.get(name):
            what = "is missing" if name not in found else "is not recorded" if name not in recorded else "fails its checksum"
            raise CorruptIndexError(f"index damaged: global/{name} of {set_dir.parent} {what}; rebuild with coderiv index")


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


# -- reading ---------------------------------------------------------------------------------------
def live_set(root: Path) -> str | None:
    """The set ``SHARDS.json`` names now (None if it cannot be read)."""
    try:
        live: str = json.loads((root / SHARDS_MANIFEST).read_text("utf-8"))["set"]
        return live
    except (OSError, ValueError, KeyError, TypeError):
        return None


class ShardedIndex:
    """An opened sharded index: its shards (normal :class:`Index` objects whose ``doc_norms`` and
    ``term_max_unit`` are replaced by the collection-wide ones, and whose source is the
    collection's) and the global term table."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self.manifest = json.loads((root / SHARDS_MANIFEST).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"sharded index manifest {root / SHARDS_MANIFEST} is damaged ({exc})") from exc
        if self.manifest.get("format") != FORMAT or self.manifest.get("format_version") != FORMAT_VERSION:
            raise CorruptIndexError(f"{root} is not a coderiv sharded index of format {FORMAT_VERSION}; rebuild it")
        self.set_dir = root / self.manifest["set"]
        self.k: int = self.manifest["shards"]
        self.n_docs: int = self.manifest["documents"]
        self.settings = AnalysisSettings.from_dict(self.manifest["analysis"])
        try:
            #: how the shards read reStructuredText and Markdown (every query and re-read alike)
            self.markup = Markup.recorded(self.manifest.get("reading"))
        except CoderivError as exc:
            raise CorruptIndexError(f"sharded index at {root}: {exc}; rebuild it") from None
        #: shard number -> its index (empty shards are absent)
        self.shards: dict[int, Index] = {}
        #: shard number -> global document number of each of its documents
        self.numbers: dict[int, np.ndarray] = {}
        self._view: ShardView | None = None
        self._view_lock = threading.Lock()
        try:
            check_global_tables(self.set_dir, self.manifest.get("global_crc32"))
            self.term_keys = np.load(_global(self.set_dir, "terms_keys.npy"), mmap_mode="r")
            self.term_df = np.load(_global(self.set_dir, "terms_df.npy"), mmap_mode="r")
            for s, count in enumerate(self.manifest["shard_documents"]):
                if not count:
                    continue
                index = Index.open(_shard_folder(self.set_dir, s))
                index.manifest["source"] = self.manifest.get("source")  # a shard is written from a filtered stream
                index.doc_norms = np.load(_global(self.set_dir, f"shard-{s:03d}.norms.npy"), mmap_mode="r")
                index.term_max_unit = np.load(_global(self.set_dir, f"shard-{s:03d}.max_unit.npy"), mmap_mode="r")
                index.cosine_classes = load_class_norms(self.set_dir / "global", prefix=f"shard-{s:03d}.")
                self.numbers[s] = np.load(_global(self.set_dir, f"shard-{s:03d}.numbers.npy"), mmap_mode="r")
                if not (index.n_docs == count == len(index.doc_norms) == len(self.numbers[s])):
                    raise CorruptIndexError(f"shard {s} of {root} does not match its manifest; rebuild it")
                self.shards[s] = index
        except OSError as exc:
            raise CorruptIndexError(f"sharded index at {root} is damaged ({exc}); rebuild it") from exc

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ShardedIndex:
        """Open the live set; retried if a build commits and removes that set meanwhile."""
        root = Path(path)
        for attempt in range(3):
            live = live_set(root)
            try:
                return cls(root)
            except (CorruptIndexError, IndexNotFoundError):
                if attempt == 2 or live_set(root) == live:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @cached_property
    def analyzer(self) -> Analyzer:
        return Analyzer(self.settings)

    @property
    def source(self) -> str | None:
        source: str | None = self.manifest.get("source")
        return source

    def info(self) -> dict[str, Any]:
        """Statistics of the sharded index, as ``coderiv info`` prints them."""
        return {
            "index": str(self.root),
            "set": self.set_dir.name,
            "created": self.manifest.get("created"),
            "coderiv_version": self.manifest.get("coderiv_version"),
            "source": self.source,
            "documents": self.n_docs,
            "shards": self.k,
            "shard_documents": self.manifest["shard_documents"],
            "analysis": self.settings.describe(),
            "markup": self.markup.value,
            "distinct_terms": len(self.term_keys),
            "postings": sum(index.terms.n_postings for index in self.shards.values()),
            "index_bytes": sum(p.stat().st_size for p in self.set_dir.rglob("*") if p.is_file()),
        }

    def source_texts(self, preload: bool = False) -> DocumentTexts:
        """The indexed documents' visible texts, re-read from the recorded source on demand (markup
        read as the shards read it)."""
        from coderiv.text.sources import DocumentTexts

        return DocumentTexts(self.source, preload=preload, markup=self.markup)

    def locate(self, doc_id: str) -> tuple[Index, int]:
        """The shard holding ``doc_id`` and its number there (a one-line error if absent)."""
        index = self.shards.get(shard_of(doc_id, self.k))
        if index is None:
            raise CoderivError(f"no document {doc_id!r} in the index")
        return index, index.number(doc_id)

    @cached_property
    def doc_ids(self) -> list[str]:
        """Every document id in global number order (sorted ids, as one index numbers them)."""
        ids = [""] * self.n_docs
        for s, index in self.shards.items():
            for number, doc_id in zip(np.asarray(self.numbers[s]).tolist(), index.doc_ids):
                ids[number] = doc_id
        return ids

    @cached_property
    def doc_numbers(self) -> dict[str, int]:
        """Each document id's number in the whole collection (as :attr:`Index.doc_numbers`)."""
        return {doc_id: number for number, doc_id in enumerate(self.doc_ids)}

    # -- the index interface (coderiv.index.reader.IndexReader) --------------------------------
    @property
    def version(self) -> str:
        """The live set's name (``set-000003``): what changes when the index is rebuilt."""
        return str(self.set_dir.name)

    @cached_property
    def specs(self) -> dict[str, StoreSpec]:
        """The stores of the index (every shard holds the same ones)."""
        return dict(next(iter(self.shards.values())).specs)

    def number(self, doc_id: str) -> int:
        """A document's number in the whole collection (its rank in sorted id order; a
        one-line error if the index lacks it)."""
        _, local = self.locate(doc_id)
        return int(self.numbers[shard_of(doc_id, self.k)][local])

    def facts(self, doc_id: str) -> DocumentFacts | None:
        """``doc_id``'s number in the collection, length in terms and SHA-256 (None if absent)."""
        shard = self.shards.get(shard_of(doc_id, self.k))
        local = None if shard is None else shard.doc_numbers.get(doc_id)
        if shard is None or local is None:
            return None
        return DocumentFacts(self.number(doc_id), int(shard.doc_lengths[local]), str(shard.doc_sha256[local]))

    def pairs_index(self) -> Index:
        """The index the pair tables belong to: this index's :class:`ShardView` (its small
        generation folder written on first use; one view per open index)."""
        with self._view_lock:
            if self._view is None:
                self._view = ShardView(self)
            return self._view

    def stored_pairs_index(self) -> Index | None:
        """:meth:`pairs_index` once ``coderiv pairs`` has written the live set's view; None
        before (no pair table can exist yet, and nothing is written)."""
        if self._view is None and not (self.root / VIEW_DIR / self.version / MANIFEST).is_file():
            return None
        return self.pairs_index()

    def dispatch(self, on_single: Callable[[Index], T], on_sharded: Callable[[ShardedIndex], T]) -> T:
        """``on_sharded(self)``: the one place a caller learns it holds a sharded index (the
        searcher registry, :mod:`coderiv.ranking.searchers`, is its only user)."""
        return on_sharded(self)

    def with_store(
        self,
        spec: StoreSpec,
        *,
        announce: Callable[[str], Any] | None = None,
        progress: Progress | None = None,
        workers: int | None = None,
    ) -> ShardedIndex:
        """This index, or, if its shards lack the store ``spec``, the index reopened after its
        set was rebuilt with it (from the recorded source; the previous set stays live until
        the new one is whole). ``progress`` is not followed: the shards are written whole."""
        if spec.name in self.specs or self.source is None:
            return self
        if announce is not None:
            announce(f"adding the {spec.name} store: rebuilding the {self.k} shards of {self.root} from {self.source}")
        stores = [s for name, s in self.specs.items() if name != "terms"] + [spec]
        build_sharded(self.source, self.root, self.k, self.settings, stores, workers)
        return ShardedIndex.open(self.root)

    def verify(self) -> list[str]:
        """Full check of every shard's files against the checksums its manifest records."""
        return [f"shard {s}: {problem}" for s, index in self.shards.items() for problem in index.verify()]

    def term_frequencies(self, keys: np.ndarray) -> np.ndarray:
        """The collection's f_t of each key (0 where no document has it)."""
        keys = np.asarray(keys, np.uint64)
        pos = np.searchsorted(self.term_keys, keys)
        found = pos < len(self.term_keys)
        found[found] = self.term_keys[pos[found]] == keys[found]
        return np.where(found, np.asarray(self.term_df)[np.minimum(pos, max(len(self.term_keys) - 1, 0))], 0)


# -- one index's face, for the pairs engine ------------------------------------------------------
def merged_postings(index: ShardedIndex, name: str) -> Postings:
    """Store ``name`` of every shard as one store over the collection (global numbers); a
    presence store when every shard's is (its values read from no memory)."""
    stores = {s: shard.store(name) for s, shard in index.shards.items()}
    presence = all(store.is_presence for store in stores.values())
    keys, docs, vals = [], [], []
    for s, store in stores.items():
        counts = np.diff(np.asarray(store.ptr))
        keys.append(np.repeat(np.asarray(store.keys, np.uint64), counts))
        docs.append(np.asarray(index.numbers[s], np.int64)[np.asarray(store.docs, np.int64)])
        vals.append(np.ones(len(keys[-1]), np.uint8) if presence else store.vals[:])  # (group_by_key's 1s: a byte each)
    merged_keys, counts, merged_docs, merged_vals, maxvals = group_by_key(
        np.concatenate(keys), np.concatenate(docs), np.concatenate(vals)
    )
    ptr = np.zeros(len(merged_keys) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    if presence:
        values, maxvals = CountValues.presence(len(merged_docs)), counts_module.ones(len(merged_keys))
    else:
        values, maxvals = CountValues.encode(merged_vals), narrow(maxvals)
    return Postings(
        n_docs=index.n_docs, keys=merged_keys, ptr=ptr, docs=SplitNumbers.encode(merged_docs.astype(np.uint32)), vals=values,
        maxvals=maxvals,
    )


def _in_global_order(index: ShardedIndex, per_shard: dict[int, np.ndarray]) -> np.ndarray:
    first = next(iter(per_shard.values()))
    out = np.empty((index.n_docs, *first.shape[1:]), first.dtype)
    for s, values in per_shard.items():
        out[np.asarray(index.numbers[s])] = values
    return out


class ShardView(Index):
    """A sharded index as the pairs engine reads an :class:`Index` (read-only; the stores
    are merged on first use)."""

    def __init__(self, sharded: ShardedIndex) -> None:  # no Index.__init__: nothing to read from one generation
        self.sharded = sharded
        first = next(iter(sharded.shards.values()))
        self.root = sharded.root
        self._mmap = True
        self.settings = sharded.settings
        self.markup = sharded.markup
        self.specs = dict(first.specs)
        self.doc_ids = sharded.doc_ids
        self.doc_lengths = _in_global_order(sharded, {s: np.asarray(ix.doc_lengths) for s, ix in sharded.shards.items()})
        self._sha256 = _in_global_order(sharded, {s: np.asarray(ix._sha256) for s, ix in sharded.shards.items()})
        self.doc_modified = None
        self._stores = {}
        self.manifest = {
            "format": "coderiv-shard-view",
            "format_version": first.manifest.get("format_version"),
            "set": sharded.set_dir.name,
            "documents": sharded.n_docs,
            "analysis": sharded.settings.to_dict(),
            "reading": {"markup": sharded.markup.value},
            "stores": {name: {"spec": spec.to_dict()} for name, spec in self.specs.items()},
        }
        self.generation = self._write_generation()

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, mmap: bool = True) -> ShardView:
        if path is None or not is_sharded(path):
            raise CoderivError(f"{path} is not a sharded index")
        return cls(ShardedIndex.open(path))

    def _write_generation(self) -> Path:
        """``<index>/pairs-view/<set>/``: manifest, ids and hashes of the live set (written once,
        atomically; other sets' folders removed)."""
        base = self.root / VIEW_DIR
        folder = base / str(self.sharded.set_dir.name)
        if not (folder / MANIFEST).is_file():
            base.mkdir(exist_ok=True)
            staging = base / f".{folder.name}.{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            (staging / "doc_ids.bin").write_bytes("\0".join(self.doc_ids).encode("utf-8"))
            np.save(staging / "doc_sha256.npy", self._sha256)
            (staging / MANIFEST).write_text(json.dumps(self.manifest, sort_keys=True), "utf-8")
            for name in ("doc_ids.bin", "doc_sha256.npy", MANIFEST):
                fsync_path(staging / name)
            try:
                os.replace(staging, folder)
            except OSError:  # another process wrote it first
                shutil.rmtree(staging, ignore_errors=True)
            fsync_path(base)
        for other in base.iterdir():
            if other.name != folder.name and not other.name.startswith("."):
                shutil.rmtree(other, ignore_errors=True)
        return folder

    def store(self, name: str = "terms") -> Postings:
        if name not in self.specs:
            raise CoderivError(f"this index has no store {name!r}; it has {sorted(self.specs)!r}")
        if name not in self._stores:
            self._stores[name] = merged_postings(self.sharded, name)
        return self._stores[name]

    @property
    def source(self) -> str | None:
        return self.sharded.source

    def info(self) -> dict[str, Any]:
        return self.sharded.info()

    @property
    def version(self) -> str:
        return self.sharded.version

    def dispatch(self, on_single: Callable[[Index], T], on_sharded: Callable[[ShardedIndex], T]) -> T:
        """The sharded index's kind: a searcher of the view is the sharded index's (the view
        holds no scoring tables, only what the pairs engine reads)."""
        return self.sharded.dispatch(on_single, on_sharded)

    def with_store(
        self,
        spec: StoreSpec,
        *,
        announce: Callable[[str], Any] | None = None,
        progress: Progress | None = None,
        workers: int | None = None,
    ) -> Index:
        """The view of the sharded index with the store ``spec`` (its set rebuilt if needed)."""
        return self.sharded.with_store(spec, announce=announce, progress=progress, workers=workers).pairs_index()
