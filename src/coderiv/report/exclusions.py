"""Exclusions that need more than the query's text: template text and passages common to many
documents of the collection (quotes and the bibliography: :mod:`coderiv.text.exclusions`).

- **Template text**: passages of the query also found, exactly (matching statistics, the same
  minimum length as the report's passages), in a template such as an assignment sheet or a
  thesis template.
- **Common passages** (MOSS's ``-m``): a passage is common when every one of its n-word chunks
  occurs in more than K documents of the collection (the smallest chunk document frequency is
  an upper bound of the documents holding the whole passage, so a passage kept is certainly in
  at most K documents) — licence text and boilerplate.
"""

from __future__ import annotations

import os
from pathlib import Path

from coderiv.errors import InputError
from coderiv.overlap.matching import NormalizedText, normalize, shared_passages
from coderiv.ranking.containment import ChunkSearcher
from coderiv.text.exclusions import Span, merge_spans
from coderiv.text.extract import DEFAULT_MARKUP, Markup, visible_text


def read_template(path: str | os.PathLike[str], markup: Markup = DEFAULT_MARKUP) -> tuple[str, str]:
    """(name, visible text) of a template file (markup read as the index reads it), or a
    one-line error naming it."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read template {path}: {exc.strerror}") from None
    return str(path), visible_text(data, str(path), markup).text


def template_spans(query: NormalizedText, templates: tuple[tuple[str, str], ...], min_chars: int) -> list[Span]:
    """Query spans found in any of the (name, text) templates."""
    spans = []
    for name, text in templates:
        for passage in shared_passages(query, normalize(text), min_chars):
            spans.append(Span(passage.a_start, passage.a_end, "template", f"in template {name}"))
    return merge_spans(spans)


def is_common(searcher: ChunkSearcher, text: str, max_docs: int) -> bool:
    """Whether every chunk of ``text`` occurs in more than ``max_docs`` documents."""
    prepared = searcher.prepare(text)
    if len(prepared.keys) == 0:
        return False
    return int(searcher.doc_frequencies(prepared.keys).min()) > max_docs
