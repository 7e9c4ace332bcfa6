"""The persistent index: documents, their analysis settings, and one postings store per key kind.

>>> from coderiv import Index
>>> report = Index.update_from("corpus/", ".coderiv")      # build, or bring up to date
>>> index = Index.open(".coderiv")
>>> index.n_docs, index.settings.describe()

Updating re-analyses only added or changed documents (by SHA-256 of their bytes), drops deleted
ones, and gives exactly the index a full rebuild would give: documents are numbered in sorted
id order and every array is rebuilt from the per-document (forward) postings.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

import numpy as np

from coderiv.errors import AnalysisMismatchError, CoderivError, CorruptIndexError
from coderiv.index.builder.generation import UpdateReport, write_failure, write_generation
from coderiv.index.cosine_bounds import LIMITS_FILE, NORMS_FILE, load_class_norms
from coderiv.index.format.generation import FORMAT, FORMAT_VERSION, MODIFIED_FILE, store_is_presence, store_is_split
from coderiv.index.format.integrity import BLOCKS_FILE, BlockTable, Checked, FileGuard, Mapped, load_npy, map_file, premapped
from coderiv.index.format.postings import Postings
from coderiv.index.format.recorded import RecordedLayout, recorded_layout, recorded_markup
from coderiv.index.format.storage import (
    MANIFEST,
    current_generation,
    file_sha256,
    newest_readable_manifest,
    read_manifest,
    verify_files,
    was_an_index,
    write_lock,
)
from coderiv.keys.kinds import TERMS, StoreSpec
from coderiv.progress import Progress
from coderiv.text.analysis import AnalysisSettings, Analyzer
from coderiv.text.extract import Markup

if TYPE_CHECKING:
    from coderiv.text.collection import Source
    from coderiv.text.extracted_cache import ExtractedCache
    from coderiv.text.sources import DocumentTexts


DEFAULT_INDEX_DIR = ".coderiv"
INDEX_ENV = "CODERIV_INDEX"


T = TypeVar("T")


class DocumentFacts(NamedTuple):
    """What an index records of one document: its number in the collection (sorted id order),
    its length in terms after analysis and the SHA-256 of its bytes (hex)."""

    number: int
    length: int
    sha256: str


def _unrecorded(
    root: Path, stop: bool | None, stem: bool | None, stores: list[StoreSpec] | None
) -> RecordedLayout:
    """The layout to rebuild a damaged index whose settings nothing records any more: only what
    the caller states in full (never the defaults in silence: they may drop its stemming or
    stores and change every answer)."""
    if stop is None or stem is None:
        raise CorruptIndexError(
            f"the index at {root} is damaged and its analysis settings cannot be read: rebuild it by giving them all "
            "(--stop or --no-stop, --stem or --no-stem, --language, and each --fingerprint store it should keep), "
            "or remove the folder to start anew"
        )
    return RecordedLayout(AnalysisSettings.from_flags(stop, stem, None) or AnalysisSettings(), list(stores or []), Markup.RENDER)


def resolve_index_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where the index lives: ``explicit``, else ``$CODERIV_INDEX``, else ``./.coderiv``."""
    if explicit:
        return Path(explicit)
    return Path(os.environ.get(INDEX_ENV) or DEFAULT_INDEX_DIR)


#: A full rebuild of an index of at least this many documents is only done when asked for
#: (``coderiv index --rebuild``): it re-reads and re-analyses the whole collection.
CONFIRM_REBUILD_DOCS = 1000


@dataclass(frozen=True)
class UpdatePlan:
    """What :meth:`Index.update_from` is about to do, said before it is done.

    ``settings`` are the analysis settings the index will have: the flags given, and for every
    flag not given the existing index's setting (never the default: ``--no-stem`` on a
    ``--no-stop --stem`` index keeps stopping off). ``rebuild`` says why the whole index will be
    re-analysed (None: an incremental update, or a new index); ``documents`` is how many the
    existing index holds.
    """

    settings: AnalysisSettings
    rebuild: str | None
    documents: int
    #: how the index will read reStructuredText and Markdown (given, else the index's record)
    markup: Markup = Markup.RENDER

    @property
    def needs_confirmation(self) -> bool:
        """A full rebuild of a large index (:data:`CONFIRM_REBUILD_DOCS` documents or more)."""
        return self.rebuild is not None and self.documents >= CONFIRM_REBUILD_DOCS


def _rebuild_reason(
    old: Index, settings: AnalysisSettings, stores: list[StoreSpec] | None, markup: Markup | None = None
) -> str | None:
    """Why updating ``old`` with these settings, stores and markup reading rebuilds it entirely
    (or None)."""
    if settings.to_dict() != old.settings.to_dict():
        return f"analysis changed from {old.settings.describe()} to {settings.describe()}"
    if markup is not None and markup is not old.markup:
        return f"markup reading changed from {old.markup.value} to {markup.value}"
    added = sorted({s.name for s in stores or []} - set(old.specs))
    if added:
        return f"stores added: {added}"
    from coderiv.text.extract import EXTRACTION_VERSION

    if old.manifest.get("extraction", 1) != EXTRACTION_VERSION:
        return "documents are read differently now (PDF, Word, Markdown, reStructuredText…)"
    return None


class Index:
    """An opened, read-only index generation (memory-mapped arrays, every block checked against
    its checksum the first time it is read: :mod:`.integrity`)."""

    doc_lengths: Checked[np.ndarray] = Checked()
    doc_norms: Checked[np.ndarray] = Checked()
    term_max_unit: Checked[np.ndarray] = Checked()
    _sha256: Checked[np.ndarray] = Checked()
    #: modification times (POSIX seconds, NaN unknown); None in indexes made before them
    doc_modified: Checked[np.ndarray | None] = Checked()
    _raw_doc_lengths: np.ndarray
    _raw_doc_norms: np.ndarray

    def __init__(self, root: Path, generation: Path, manifest: dict[str, Any], mmap: bool = True) -> None:
        self.root = root
        self.generation = generation
        self.manifest = manifest
        self._mmap = mmap
        if manifest.get("format") != FORMAT:
            raise CorruptIndexError(f"{generation} is not a coderiv index")
        if manifest.get("format_version") != FORMAT_VERSION:
            raise CorruptIndexError(
                f"index format {manifest.get('format_version')} is not this coderiv's format "
                f"{FORMAT_VERSION}; rebuild the index with 'coderiv index --rebuild'"
            )
        try:  # taken now, never re-read by path: a writer may unlink this generation while it is open
            #: SHA-256 of this generation's manifest (what a pair table records it was computed from)
            self.manifest_sha256 = file_sha256(generation / MANIFEST)
        except OSError as exc:
            raise CorruptIndexError(f"index at {root} is damaged ({exc}); rebuild it") from exc
        problems = verify_files(generation, manifest, full=False, checksummed=(BLOCKS_FILE,))
        if problems:
            raise CorruptIndexError(f"index at {root} is damaged: {'; '.join(problems[:3])}; rebuild it")
        self.settings = AnalysisSettings.from_dict(manifest["analysis"])
        try:
            #: how this index read reStructuredText and Markdown: every query and re-read alike
            self.markup = Markup.recorded(manifest.get("reading"))
        except CoderivError as exc:
            raise CorruptIndexError(f"index at {root}: {exc}; rebuild it") from None
        self.specs = {name: StoreSpec.from_dict(d["spec"]) for name, d in manifest["stores"].items()}
        # Every file is opened (memory-mapped) now, read on first use: an open Index is a snapshot
        # that keeps working after a writer commits a newer generation and unlinks this one.
        try:
            self._ids_file = map_file(generation / "doc_ids.bin")  # read (whole) on first use: doc_ids
            self.doc_lengths = self._array("doc_lengths.npy")
            self.doc_norms = self._array("doc_norms.npy")
            self.term_max_unit = self._array("term_max_unit.npy")
            #: per-document norm classes bounding cosine (None in indexes written before them)
            self._cosine_classes: tuple[np.ndarray, np.ndarray] | None = (
                load_class_norms(generation, mmap=mmap) if NORMS_FILE in manifest.get("files", {}) else None
            )
            self._sha256 = self._array("doc_sha256.npy")
            # modification times (POSIX seconds, NaN unknown); absent from indexes made before them
            self.doc_modified = self._array(MODIFIED_FILE) if MODIFIED_FILE in manifest.get("files", {}) else None
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"index at {root} is damaged ({exc}); rebuild it") from exc
        table = BlockTable(generation, manifest)
        if not (len(self._raw_doc_lengths) == len(self._raw_doc_norms) == manifest["documents"]):
            raise CorruptIndexError(f"index at {root} has inconsistent document tables; rebuild it")
        self._guard_tables(table)
        self._table = table
        # A store is loaded on first use (a query of the terms never reads the chunk store), from
        # its files mapped now: mapping reads no page and keeps the files of this generation
        # readable after a writer unlinks them (:func:`.integrity.premapped`).
        try:
            self._store_files = {name: self._map_folder(meta["dir"]) for name, meta in manifest["stores"].items()}
        except OSError as exc:
            raise CorruptIndexError(f"index at {root} is damaged ({exc}); rebuild it") from exc
        self._stores: dict[str, Postings] = {}
        self._store_lock = threading.Lock()

    def _map_folder(self, folder: str) -> dict[Path, Mapped]:
        """Every file of ``folder`` (a store's), memory-mapped, none of its pages read."""
        prefix = folder + "/"
        return {self.generation / rel: map_file(self.generation / rel) for rel in self.manifest.get("files", {}) if rel.startswith(prefix)}

    def _guard_tables(self, table: BlockTable) -> None:
        """Check the document tables against the block checksums: each whole on its first use
        (a score reads them by document), the ids now (read whole at open)."""
        guards: dict[str, FileGuard] = {}
        for attribute, name in (
            ("doc_lengths", "doc_lengths.npy"), ("doc_norms", "doc_norms.npy"), ("term_max_unit", "term_max_unit.npy"),
            ("_sha256", "doc_sha256.npy"), ("doc_modified", MODIFIED_FILE),
        ):
            array = self.__dict__.get("_raw_" + attribute)
            if array is not None:
                guards[attribute] = table.guard(name, array)
        if self._cosine_classes is not None:
            guards["cosine_norms"] = table.guard(NORMS_FILE, self._cosine_classes[0])
            guards["cosine_limits"] = table.guard(LIMITS_FILE, self._cosine_classes[1])
        self._guards = guards
        self._ids_guard = table.guard("doc_ids.bin", np.frombuffer(self._ids_file, np.uint8))

    @property
    def cosine_classes(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Per document and class of terms, the share of W_d (None in indexes written before
        them), checked whole on first use."""
        guards = self.__dict__.get("_guards", {})
        for name in ("cosine_norms", "cosine_limits"):
            if name in guards:
                guards[name].whole()
        return cast("tuple[np.ndarray, np.ndarray] | None", self.__dict__.get("_cosine_classes"))

    @cosine_classes.setter
    def cosine_classes(self, tables: tuple[np.ndarray, np.ndarray] | None) -> None:
        for name in ("cosine_norms", "cosine_limits"):
            self.__dict__.get("_guards", {}).pop(name, None)
        self._cosine_classes = tables

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, mmap: bool = True) -> Index:
        """Open the live generation of the index at ``path`` (see :func:`resolve_index_path`)."""
        root = resolve_index_path(path)
        for attempt in range(3):
            generation = current_generation(root)
            try:
                return cls(root, generation, read_manifest(generation), mmap=mmap)
            except CorruptIndexError:
                # a writer may have switched generations and removed this one while we opened it
                if attempt == 2 or current_generation(root) == generation:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _array(self, name: str) -> np.ndarray:
        return load_npy(self.generation / name, self._mmap)

    # -- contents ----------------------------------------------------------------------------
    @cached_property
    def doc_ids(self) -> list[str]:
        """Every document id, in document-number order: ``doc_ids.bin`` checked whole and decoded
        on first use (a million ids are ~20 MB and 0.1 s, which an open does not pay)."""
        self._ids_guard.whole()
        try:
            blob = bytes(self._ids_file).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptIndexError(f"index at {self.root} is damaged ({exc}); rebuild it") from None
        ids = blob.split("\0") if blob else []
        if len(ids) != self.manifest["documents"]:
            raise CorruptIndexError(f"index at {self.root} has inconsistent document tables; rebuild it")
        return ids

    @property
    def n_docs(self) -> int:
        ids = self.__dict__.get("doc_ids")
        return len(ids) if ids is not None else int(self.manifest["documents"])

    @cached_property
    def analyzer(self) -> Analyzer:
        """The analyser every query of this index must go through."""
        return Analyzer(self.settings)

    @cached_property
    def doc_numbers(self) -> dict[str, int]:
        """Document id → internal number (position in sorted id order)."""
        return {doc_id: i for i, doc_id in enumerate(self.doc_ids)}

    def number(self, doc_id: str) -> int:
        """The internal number of ``doc_id``, or a one-line error if the index lacks it."""
        number = self.doc_numbers.get(doc_id)
        if number is None:
            raise CoderivError(f"no document {doc_id!r} in the index")
        return number

    def source_texts(self, preload: bool = False) -> DocumentTexts:
        """The indexed documents' visible texts, re-read from the recorded source on demand (markup
        read as the index read it)."""
        from coderiv.text.sources import DocumentTexts

        return DocumentTexts(self.source, preload=preload, markup=self.markup, cache=self.extracted_cache)

    @cached_property
    def extracted_cache(self) -> ExtractedCache | None:
        """The texts the build kept by content hash (``extracted.sqlite`` beside the
        generations; None when there is none): what re-reading a document takes instead of
        rendering it again (:mod:`coderiv.text.extracted_cache`)."""
        from coderiv.text.extracted_cache import ExtractedCache

        cache = ExtractedCache(self.root)
        return cache if cache.usable else None

    @cached_property
    def doc_sha256(self) -> list[str]:
        """SHA-256 of every document's bytes, as hex (change detection of incremental runs)."""
        return [bytes(row).hex() for row in np.asarray(self._sha256)]

    def store(self, name: str = "terms") -> Postings:
        """The postings store called ``name`` (``terms``, or a fingerprint/chunk store)."""
        if name not in self.specs:
            raise CoderivError(f"this index has no store {name!r}; it has {sorted(self.specs)!r}")
        store = self._stores.get(name)
        if store is None:
            with self._store_lock:
                store = self._stores.get(name)
                if store is None:
                    store = self._load_store(name)
                    self._stores[name] = store
        return store

    def _load_store(self, name: str) -> Postings:
        """The store ``name`` read from the files mapped at open: its arrays' headers parsed, its
        shapes and the blocks they read checked (:meth:`Postings.load`), nothing else read."""
        record = self.manifest["stores"][name]
        with premapped(self._store_files[name]):
            return Postings.load(
                self.generation / record["dir"], self.n_docs, self._mmap, self._table, store_is_presence(record), store_is_split(record)
            )

    def loaded_stores(self) -> list[str]:
        """The stores read so far (a store is loaded on its first use)."""
        return sorted(self._stores)

    @property
    def terms(self) -> Postings:
        return self.store("terms")

    def check_settings(self, settings: AnalysisSettings) -> None:
        """Refuse a query analysed with settings other than the index's."""
        if settings.to_dict() != self.settings.to_dict():
            raise AnalysisMismatchError(
                f"query analysis ({settings.describe()}) differs from the index's "
                f"({self.settings.describe()}); query with the index's settings or rebuild it"
            )

    def verify(self) -> list[str]:
        """Full check of every file: its blocks' CRC-32s against the block table (a SHA-256
        for the table itself and for files of older generations that recorded one)."""
        return verify_files(self.generation, self.manifest, full=True)

    @property
    def source(self) -> str | None:
        """The folder or archive the index was built from (absolute path)."""
        return self.manifest.get("source")

    def info(self) -> dict[str, Any]:
        """Statistics and settings, as ``coderiv info`` prints them."""
        terms = self.terms
        total_bytes = sum(meta["bytes"] for meta in self.manifest.get("files", {}).values())
        return {
            "index": str(self.root),
            "generation": self.generation.name,
            "format_version": self.manifest["format_version"],
            "created": self.manifest.get("created"),
            "coderiv_version": self.manifest.get("coderiv_version"),
            "source": self.source,
            "documents": self.n_docs,
            "analysis": self.settings.describe(),
            "markup": self.markup.value,
            "distinct_terms": terms.n_keys,
            "term_occurrences": int(np.asarray(self.doc_lengths).sum()),
            "postings": terms.n_postings,
            "source_bytes": self.manifest.get("source_bytes"),
            "index_bytes": total_bytes,
            "stores": {name: {"keys": d["keys"], "postings": d["postings"]} for name, d in self.manifest["stores"].items()},
            "skipped": self.manifest.get("skipped", []),
        }

    # -- the index interface (coderiv.index.reader.IndexReader) --------------------------------
    @property
    def version(self) -> str:
        """The live generation's name (``gen-000007``): what changes when the index is updated."""
        return self.generation.name

    def facts(self, doc_id: str) -> DocumentFacts | None:
        """``doc_id``'s number, length in terms and SHA-256 (None if the index lacks it)."""
        number = self.doc_numbers.get(doc_id)
        if number is None:
            return None
        return DocumentFacts(number, int(self.doc_lengths[number]), str(self.doc_sha256[number]))

    def pairs_index(self) -> Index:
        """The index the pair tables (:mod:`coderiv.pairs`) belong to: this one."""
        return self

    def stored_pairs_index(self) -> Index | None:
        """:meth:`pairs_index`, without writing anything (one index: always itself)."""
        return self

    def dispatch(self, on_single: Callable[[Index], T], on_sharded: Callable[[Any], T]) -> T:
        """``on_single(self)``: the one place a caller learns it holds one index (the searcher
        registry, :mod:`coderiv.ranking.searchers`, is its only user)."""
        return on_single(self)

    # -- building and updating ---------------------------------------------------------------
    @classmethod
    def plan_update(
        cls,
        path: str | os.PathLike[str] | None = None,
        stop: bool | None = None,
        stem: bool | None = None,
        language: str | None = None,
        stores: list[StoreSpec] | None = None,
        markup: Markup | None = None,
    ) -> UpdatePlan:
        """The settings an update with these analysis flags and markup reading (None: not given)
        will use, and whether it rebuilds the existing index at ``path`` (see :class:`UpdatePlan`)."""
        root = resolve_index_path(path)
        try:
            old: Index | None = cls.open(root)
        except CoderivError as exc:
            old = None  # none yet, or damaged: update_from builds it from scratch
            if was_an_index(root):
                recorded = recorded_layout(root)
                how = "the analysis and stores it recorded" if recorded else "the analysis given"
                base = (recorded or _unrecorded(root, stop, stem, stores)).settings or AnalysisSettings()
                settings = AnalysisSettings.from_flags(stop, stem, language, base) or base
                last = newest_readable_manifest(root) or {}
                documents = int(last.get("documents", 0))
                return UpdatePlan(
                    settings, f"the index was damaged ({exc}); rebuilt with {how}", documents, markup or recorded_markup(last)
                )
        if old is None:
            return UpdatePlan(AnalysisSettings.from_flags(stop, stem, language) or AnalysisSettings(), None, 0, markup or Markup.RENDER)
        settings = AnalysisSettings.from_flags(stop, stem, language, old.settings) or old.settings
        return UpdatePlan(settings, _rebuild_reason(old, settings, stores, markup), old.n_docs, markup or old.markup)

    @classmethod
    def update_from(
        cls,
        source: Source,
        path: str | os.PathLike[str] | None = None,
        settings: AnalysisSettings | None = None,
        stores: list[StoreSpec] | None = None,
        workers: int | None = None,
        progress: Progress | None = None,
        hidden: bool | None = None,
        follow_symlinks: bool | None = None,
        markup: Markup | None = None,
    ) -> UpdateReport:
        """Build the index of ``source`` (folder, tar, or iterable of RawDocument) at ``path``,
        or bring an existing one up to date.

        ``settings``/``stores`` and the reading options ``hidden``/``follow_symlinks``
        (:class:`ReadOptions`) left as None keep the existing index's (or the defaults for a new
        index). Settings that differ from the existing index's rebuild it entirely, as does another
        ``markup`` reading (:class:`Markup`; None keeps the index's); a changed reading option
        only adds or drops the documents it concerns.
        """
        from coderiv.text.collection import ReadOptions

        root = resolve_index_path(path)
        with write_lock(root):
            old: Index | None = None
            try:
                old = cls.open(root)
            except CoderivError:
                if (root / "CURRENT").exists():
                    old = None  # a damaged index is rebuilt from scratch, never patched
            report = UpdateReport()
            if old is not None:
                settings = settings or old.settings
                wanted = {s.name: s for s in [*old.specs.values(), *(stores or [])]}
                report.rebuilt = _rebuild_reason(old, settings, stores, markup)
            else:
                recorded = recorded_layout(root)
                if recorded is None and was_an_index(root) and settings is None:
                    recorded = _unrecorded(root, None, None, stores)
                if recorded is not None:
                    report.rebuilt = "the index was damaged; rebuilt with the analysis and stores it recorded"
                    settings = settings or recorded.settings
                settings = settings or AnalysisSettings()
                wanted = {s.name: s for s in [TERMS, *(recorded.stores if recorded else []), *(stores or [])]}
            if old is not None and report.rebuilt is None:
                damage = old.verify()  # an update copies the old arrays: never carry damage forward
                if damage:
                    report.rebuilt = f"the index was damaged ({damage[0]}); every document is read again"
            reuse = old if (old is not None and report.rebuilt is None) else None
            # reading options not given keep the index's (a damaged one's newest readable record)
            last = old.manifest if old is not None else newest_readable_manifest(root) if (root / "CURRENT").exists() else None
            reading = ReadOptions.from_flags(hidden, follow_symlinks, ReadOptions.from_dict((last or {}).get("reading")))
            markup = markup or (old.markup if old is not None else recorded_markup(last))
            specs = [wanted["terms"], *sorted((s for n, s in wanted.items() if n != "terms"), key=lambda s: s.name)]
            try:
                write_generation(root, source, settings, specs, reuse, report, workers, progress, reading, markup)
            except OSError as exc:  # disk full, quota, permissions: the previous generation is intact
                raise CoderivError(write_failure(root, exc)) from None
            return report
