"""The stored pair table: every document's top-k similar documents, kept inside the index.

A table lives in ``<index>/pairs/<method>/`` as atomic generations written the same way as the
index's own (:mod:`coderiv.index.format.storage`: write aside, checksum, fsync, rename, ``CURRENT``). Rows are
CSR arrays over the index's document numbers (``row_ptr``, ``targets``, ``values`` in percent).
The manifest records the SHA-256 of the index generation's manifest it was computed from: when
the index has changed since, the table is *stale* and ``coderiv similar`` says so instead of
answering from old numbers. For the next incremental run the table keeps what the index no
longer holds about the old state: the old documents (ids, content hashes), the keys skipped as
boilerplate and, for weighted methods, the old f_t of every key in two or more documents.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from coderiv.errors import CoderivError, CorruptIndexError
from coderiv.index.format.storage import (
    MANIFEST,
    current_generation,
    new_generation,
    read_manifest,
    verify_files,
    write_lock,
)
from coderiv.pairs.eligibility import KeyView
from coderiv.pairs.incremental import IncrementalPlan, plan_incremental
from coderiv.pairs.methods import PairMethod, get_method

if TYPE_CHECKING:
    from coderiv.index.format.postings import Postings
    from coderiv.index.index import Index

PAIRS_DIR = "pairs"
FORMAT = "coderiv-pairs"
FORMAT_VERSION = 1
_ARRAYS = ("row_ptr", "targets", "values", "truncated", "skipped_keys", "df_keys", "df")


class StalePairsError(CoderivError):
    """The pair table was computed for another version of the index."""


def table_root(index: Index, method: str) -> Path:
    """Folder of the pair table of ``method`` inside the index folder."""
    return index.root / PAIRS_DIR / method


def index_manifest_digest(index: Index) -> str:
    """SHA-256 of the index generation's manifest: changes with every new generation. Taken
    when the index was opened (a writer may have removed the generation's folder since)."""
    return index.manifest_sha256


@dataclass
class PairTable:
    """Top-k rows of one method over one index generation (see the module docstring)."""

    manifest: dict[str, Any]
    arrays: dict[str, np.ndarray]
    doc_ids: list[str]
    doc_sha256: list[str] = field(default_factory=list)
    generation: Path | None = None

    # -- making ---------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        index: Index,
        method: PairMethod,
        top: int,
        max_df_setting: int | None,
        view: KeyView,
        row_ptr: np.ndarray,
        targets: np.ndarray,
        values: np.ndarray,
        truncated: np.ndarray,
    ) -> PairTable:
        store = index.store(method.store.name)
        if method.measure is not None:
            f = store.doc_freqs
            multi = f >= 2
            df_keys, df = np.asarray(store.keys)[multi], f[multi].astype(np.int64)
        else:
            df_keys, df = np.empty(0, np.uint64), np.empty(0, np.int64)
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "method": method.name,
            "store": method.store.name,
            "analysis": index.settings.to_dict(),
            "index_format": index.manifest.get("format_version"),
            "top": top,
            "max_df_setting": max_df_setting,
            "max_df": view.max_df,
            "documents": index.n_docs,
            "entries": int(len(targets)),
            "truncated_rows": int(np.count_nonzero(truncated)),
            "skipped_keys": int(len(view.skipped_keys)),
            "skipped_postings": view.skipped_postings,
            "index_generation": index.generation.name,
            "index_manifest_sha256": index_manifest_digest(index),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        arrays = {
            "row_ptr": row_ptr, "targets": targets, "values": values, "truncated": truncated,
            "skipped_keys": view.skipped_keys, "df_keys": df_keys, "df": df,
        }
        return cls(manifest, arrays, list(index.doc_ids), list(index.doc_sha256))

    def save(self, index: Index, method: str) -> None:
        """Write the table as the next generation of ``<index>/pairs/<method>`` (atomically)."""
        root = table_root(index, method)
        with new_generation(root) as staging:
            for name in _ARRAYS:
                np.save(staging / f"{name}.npy", np.asarray(self.arrays[name]), allow_pickle=False)
            shutil.copyfile(index.generation / "doc_ids.bin", staging / "doc_ids.bin")
            shutil.copyfile(index.generation / "doc_sha256.npy", staging / "doc_sha256.npy")
            (staging / MANIFEST).write_text(json.dumps(self.manifest), "utf-8")

    @staticmethod
    @contextlib.contextmanager
    def lock(index: Index, method: str) -> Iterator[None]:
        """Exclusive writer lock of one method's table."""
        with write_lock(table_root(index, method)):
            yield

    # -- opening --------------------------------------------------------------------------
    @classmethod
    def _read(cls, root: Path) -> PairTable:
        generation = current_generation(root)
        manifest = read_manifest(generation)
        if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
            raise CorruptIndexError(f"{generation} is not a coderiv pair table of this version; run 'coderiv pairs --full'")
        problems = verify_files(generation, manifest, full=False)
        if problems:
            raise CorruptIndexError(f"pair table at {root} is damaged: {'; '.join(problems[:3])}; run 'coderiv pairs --full'")
        try:
            arrays = {name: np.load(generation / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _ARRAYS}
            blob = (generation / "doc_ids.bin").read_bytes().decode("utf-8")
            digest = np.load(generation / "doc_sha256.npy", allow_pickle=False)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise CorruptIndexError(f"pair table at {root} is damaged ({exc}); run 'coderiv pairs --full'") from exc
        ids = blob.split("\0") if blob else []
        return cls(manifest, arrays, ids, [bytes(row).hex() for row in digest], generation)

    @classmethod
    def open(cls, index: Index, method: str) -> PairTable:
        """The table of ``method``, refusing a missing or stale one with a clear message."""
        root = table_root(index, method)
        if not (root / "CURRENT").is_file():
            raise CoderivError(f"no pair table for method {method!r} in {index.root}: run 'coderiv pairs --method {method}'")
        table = cls._read(root)
        if table.manifest["index_manifest_sha256"] != index_manifest_digest(index):
            raise StalePairsError(
                f"the {method} pair table was computed for an older version of the index "
                f"({table.manifest['index_generation']}); run 'coderiv pairs --method {method}' to update it"
            )
        return table

    @classmethod
    def load_previous(cls, index: Index, method: str) -> PairTable | None:
        """The last table written for ``method``, stale or not (None if missing or damaged)."""
        root = table_root(index, method)
        if not (root / "CURRENT").is_file():
            return None
        try:
            return cls._read(root)
        except CoderivError:
            return None

    # -- using ----------------------------------------------------------------------------
    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    def row(self, number: int) -> tuple[np.ndarray, np.ndarray]:
        """(target document numbers, percentages) of one document, best first."""
        ptr = self.arrays["row_ptr"]
        lo, hi = int(ptr[number]), int(ptr[number + 1])
        return np.asarray(self.arrays["targets"][lo:hi]), np.asarray(self.arrays["values"][lo:hi])

    def similar(self, doc_id: str) -> list[tuple[int, float, str]]:
        """(rank, percent, doc_id) of the stored most similar documents of ``doc_id``."""
        number = self.numbers.get(doc_id)
        if number is None:
            raise CoderivError(f"no document {doc_id!r} in the index")
        targets, values = self.row(number)
        return [(i + 1, float(v), self.doc_ids[t]) for i, (t, v) in enumerate(zip(targets.tolist(), values.tolist()))]

    @cached_property
    def numbers(self) -> dict[str, int]:
        """Document id → number in this table."""
        return {d: i for i, d in enumerate(self.doc_ids)}

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every stored entry as (source numbers, target numbers, percentages)."""
        ptr = np.asarray(self.arrays["row_ptr"])
        src = np.repeat(np.arange(self.n_docs), np.diff(ptr))
        return src, np.asarray(self.arrays["targets"], np.int64), np.asarray(self.arrays["values"])

    def info(self) -> dict[str, Any]:
        """Summary for ``coderiv info``."""
        keys = ("method", "store", "top", "max_df", "skipped_keys", "skipped_postings", "entries", "index_generation")
        return {k: self.manifest[k] for k in keys}

    def incremental_plan(
        self,
        index: Index,
        method: str,
        top: int,
        max_df_setting: int | None,
        store: Postings,
        view: KeyView,
    ) -> IncrementalPlan | None:
        """How to bring this table up to date, or None when only a full run can."""
        m = self.manifest
        same = (
            m["method"] == method
            and m["top"] == top
            and m["max_df_setting"] == max_df_setting
            and m["analysis"] == index.settings.to_dict()
            and m.get("index_format") == index.manifest.get("format_version")  # key hashing may differ
        )
        if not same:
            return None
        if m["index_manifest_sha256"] == index_manifest_digest(index):
            n = index.n_docs
            empty = np.empty(0, np.int64)
            return IncrementalPlan(np.zeros(n, bool), empty, empty, np.empty(0), np.zeros(n, bool), "index unchanged", True)
        a = self.arrays
        old_df = (np.asarray(a["df_keys"]), np.asarray(a["df"])) if len(a["df_keys"]) else None
        return plan_incremental(
            self.doc_ids,
            self.doc_sha256,
            (np.asarray(a["row_ptr"]), np.asarray(a["targets"]), np.asarray(a["values"]), np.asarray(a["truncated"])),
            np.asarray(a["skipped_keys"]),
            old_df,
            index,
            store,
            view,
            get_method(method).measure,
        )


def tables_info(index: Index) -> list[dict[str, Any]]:
    """Every pair table stored in the index, with whether it is up to date."""
    folder = index.root / PAIRS_DIR
    result = []
    if folder.is_dir():
        fingerprint = index_manifest_digest(index)
        for root in sorted(p for p in folder.iterdir() if (p / "CURRENT").is_file()):
            try:
                table = PairTable._read(root)
            except CoderivError:
                result.append({"method": root.name, "state": "damaged"})
                continue
            info = table.info()
            info["state"] = "up to date" if table.manifest["index_manifest_sha256"] == fingerprint else "stale"
            result.append(info)
    return result


def describe_table(info: dict[str, Any]) -> str:
    """One line about a table from :func:`tables_info` (for ``coderiv info``)."""
    if info["state"] == "damaged":
        return "damaged: run 'coderiv pairs --full'"
    return (
        f"{info['state']}, top {info['top']}, {info['entries']} entries; boilerplate skipped: "
        f"{info['skipped_keys']} keys in more than {info['max_df']} documents ({info['skipped_postings']} postings)"
    )
