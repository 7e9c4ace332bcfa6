"""What a one-index or sharded index folder records of how it was built, read even when it no
longer opens: so that rebuilding a damaged index keeps its stemming, its extra stores and its
markup reading instead of falling back to the defaults in silence (which would change every
answer). One reader for both kinds of folder."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderiv.errors import CoderivError
from coderiv.index.format.shard_set import SHARDS_MANIFEST
from coderiv.index.format.storage import newest_readable_manifest, was_an_index
from coderiv.keys.kinds import StoreSpec
from coderiv.text.analysis import AnalysisSettings
from coderiv.text.extract import Markup


@dataclass(frozen=True)
class RecordedLayout:
    """The analysis settings (None: nothing says), the stores besides ``terms`` and the markup
    reading an index folder records."""

    settings: AnalysisSettings | None
    stores: list[StoreSpec]
    markup: Markup


def recorded_markup(manifest: dict[str, Any] | None) -> Markup:
    """The markup reading a manifest (an index generation's or a sharded set's) records;
    rendering when none says, or when the record is unreadable (the index is rebuilt anew)."""
    try:
        return Markup.recorded((manifest or {}).get("reading"))
    except (CoderivError, AttributeError):
        return Markup.RENDER


def _extra_stores(manifest: dict[str, Any]) -> list[StoreSpec]:
    """The stores besides ``terms`` a generation's manifest lists, by name."""
    return [StoreSpec.from_dict(meta["spec"]) for name, meta in sorted(manifest["stores"].items()) if name != "terms"]


def sharded_manifest(root: Path) -> dict[str, Any] | None:
    """``SHARDS.json`` of the sharded index at ``root``, or None when it cannot be read."""
    try:
        manifest = json.loads((root / SHARDS_MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _recorded_by_one_index(root: Path) -> RecordedLayout | None:
    if not was_an_index(root):
        return None
    manifest = newest_readable_manifest(root)
    if manifest is None:
        return None
    try:
        return RecordedLayout(AnalysisSettings.from_dict(manifest["analysis"]), _extra_stores(manifest), recorded_markup(manifest))
    except (CoderivError, KeyError, TypeError, ValueError):
        return None


def _recorded_by_shards(root: Path) -> RecordedLayout | None:
    manifest = sharded_manifest(root)
    if manifest is None:
        return None
    markup = recorded_markup(manifest)
    try:
        settings = AnalysisSettings.from_dict(manifest["analysis"])
        set_dir = root / manifest["set"]
    except (KeyError, TypeError, ValueError, CoderivError):
        return RecordedLayout(None, [], markup)
    for folder in sorted(set_dir.glob("shard-*")):  # the stores: every shard holds the same ones
        shard_manifest = newest_readable_manifest(folder)
        if shard_manifest is not None and isinstance(shard_manifest.get("stores"), dict):
            try:
                return RecordedLayout(settings, _extra_stores(shard_manifest), markup)
            except (CoderivError, KeyError, TypeError, ValueError):
                continue
    return RecordedLayout(settings, [], markup)


def recorded_layout(root: Path) -> RecordedLayout | None:
    """What the index folder at ``root`` records of its analysis, stores and markup reading (a
    sharded index's ``SHARDS.json`` and shard manifests, or one index's newest readable
    manifest); None when nothing readable says."""
    return _recorded_by_shards(root) if (root / SHARDS_MANIFEST).is_file() else _recorded_by_one_index(root)
