"""PAN's text-alignment interface over folders: align every pair of a pairs file and write one
detection XML per pair (``coderiv align``; PAN 2012-2015's software submission interface)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path, PurePath
from typing import Protocol

from coderiv.overlap.align.pan_format import DETECTED, Feature, read_pairs, read_raw, write_pair
from coderiv.overlap.align.pipeline import DEFAULT_SETTINGS, AlignSettings, align_texts


class Spans(Protocol):
    """Anything with character spans in both texts: an aligned passage, an exact passage."""

    @property
    def a_start(self) -> int: ...
    @property
    def a_end(self) -> int: ...
    @property
    def b_start(self) -> int: ...
    @property
    def b_end(self) -> int: ...


def detections(susp: str, src: str, passages: Sequence[Spans]) -> list[Feature]:
    """The passages (aligned or exact) as PAN detections of the pair (document names without
    folders): what ``compare --format pan`` and ``report --format pan`` write."""
    a, b = PurePath(susp).name, PurePath(src).name
    return [
        Feature(a, p.a_start, p.a_end - p.a_start, b, p.b_start, p.b_end - p.b_start, DETECTED)
        for p in passages
    ]


def align_pairs(
    pairs_file: Path, susp_dir: Path, src_dir: Path, out_dir: Path,
    settings: AlignSettings = DEFAULT_SETTINGS, advance: Callable[[], None] | None = None,
) -> int:
    """Align every pair and write its XML into ``out_dir``; return the number of detections."""
    total = 0
    cache: dict[str, str] = {}
    for susp, src in read_pairs(pairs_file):
        if susp not in cache:
            cache.clear()  # pairs files list a suspicious document's pairs together
            cache[susp] = read_raw(susp_dir / susp)
        found = detections(susp, src, align_texts(cache[susp], read_raw(src_dir / src), settings))
        write_pair(out_dir, susp, src, found)
        total += len(found)
        if advance is not None:
            advance()
    return total
