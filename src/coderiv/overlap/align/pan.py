"""PAN's text-alignment interface over folders: align every pair of a pairs file and write one
detection XML per pair (``coderiv align``; PAN 2012-2015's software submission interface)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from coderiv.errors import InputError
from coderiv.overlap.align.pan_format import DETECTED, Feature, pair_file_name, read_pairs, read_raw, write_pair
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
    """The passages (aligned or exact) as PAN detections of the pair, the documents named as
    given (a pairs file's names keep their folders: issue 43)."""
    return [
        Feature(
            susp, p.a_start, p.a_end - p.a_start, src, p.b_start, p.b_end - p.b_start, DETECTED,
            getattr(p, "reuse", "verbatim"),  # an exact passage is verbatim
        )
        for p in passages
    ]


def unique_file_name(susp: str, src: str, taken: dict[str, tuple[str, str]]) -> str:
    """The pair's file name, unique among the pairs ``taken`` so far: PAN's name joins the two
    names with ``-``, so ``a-b``+``c`` and ``a``+``b-c`` would share a file; the later pair then
    gets its name with the first 12 hex digits of the SHA-256 of the pair appended."""
    name = pair_file_name(susp, src)
    if taken.setdefault(name, (susp, src)) != (susp, src):
        digest = hashlib.sha256(f"{susp}\0{src}".encode()).hexdigest()[:12]
        name = name.removesuffix(".xml") + f"-{digest}.xml"
        taken[name] = (susp, src)
    return name


def align_pairs(
    pairs_file: Path, susp_dir: Path, src_dir: Path, out_dir: Path,
    settings: AlignSettings = DEFAULT_SETTINGS, advance: Callable[[], None] | None = None,
) -> int:
    """Align every pair and write its XML into ``out_dir``, one file per pair
    (:func:`unique_file_name`); return the number of detections. A pair naming a file that
    cannot be read gets no file; once the other pairs are written, one :class:`InputError`
    names the first such file and how many pairs were left out."""
    total = 0
    cache: dict[str, str] = {}
    taken: dict[str, tuple[str, str]] = {}
    pairs = read_pairs(pairs_file)
    failed: list[str] = []
    for susp, src in pairs:
        try:
            if susp not in cache:
                cache.clear()  # pairs files list a suspicious document's pairs together
                cache[susp] = read_raw(susp_dir / susp)
            source = read_raw(src_dir / src)
        except InputError as exc:
            failed.append(str(exc))  # this pair has no detection file; the others go on
        else:
            found = detections(susp, src, align_texts(cache[susp], source, settings))
            write_pair(out_dir, susp, src, found, unique_file_name(susp, src, taken))
            total += len(found)
        if advance is not None:
            advance()
    if failed:
        others = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
        raise InputError(
            f"{failed[0]}{others}: {len(failed)} of {len(pairs)} pairs not aligned "
            f"(the other pairs' detections are written to {out_dir})"
        )
    return total
