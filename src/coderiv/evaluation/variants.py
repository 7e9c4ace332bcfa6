"""Analysis variants of an index, kept beside it (the paper's Table 3: stopping × stemming).

Comparing analyses needs one index per analysis. Rather than have the user build four, a
variant lives in ``<index>/variants/<name>/`` — an ordinary coderiv index of the same source —
built on first use and brought up to date (incrementally: only added or changed documents are
analysed) whenever its documents differ from the main index's. The variant with the main
index's own settings is the main index itself. A variant has the same stores as the main index (fingerprints, chunks), so every
evaluation method works on it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from coderiv.errors import CoderivError, UnknownNameError
from coderiv.evaluation.evaluate import MethodResult, Topics, evaluate_method
from coderiv.evaluation.methods import get_method
from coderiv.index.index import Index
from coderiv.index.reader import IndexReader
from coderiv.progress import Progress
from coderiv.ranking.searchers import single_only
from coderiv.text.analysis import AnalysisSettings

VARIANTS_DIR = "variants"

#: name -> (stop, stem), in the order of the paper's Table 3
ANALYSIS_VARIANTS: dict[str, tuple[bool, bool]] = {
    "none": (False, False),
    "stop": (True, False),
    "stem": (False, True),
    "stop+stem": (True, True),
}


def variant_name(settings: AnalysisSettings) -> str:
    """The variant name of an analysis (``stop``, ``stop+stem``, ...)."""
    for name, (stop, stem) in ANALYSIS_VARIANTS.items():
        if (settings.stop, settings.stem) == (stop, stem):
            return name
    raise AssertionError("every (stop, stem) pair has a name")  # pragma: no cover


def expand_variants(spec: str) -> list[str]:
    """``all`` or comma-separated variant names -> validated names, in order, no repeats."""
    names: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        for name in (list(ANALYSIS_VARIANTS) if part == "all" else [part] if part else []):
            if name not in ANALYSIS_VARIANTS:
                raise UnknownNameError(f"analysis must be 'all' or among {list(ANALYSIS_VARIANTS)!r} (got {name!r})")
            if name not in names:
                names.append(name)
    if not names:
        raise UnknownNameError("no analysis variant given")
    return names


def variant_settings(index: Index, name: str) -> AnalysisSettings:
    """The analysis of variant ``name``: its stop/stem switches, the index's stemming language."""
    stop, stem = ANALYSIS_VARIANTS[name]
    return AnalysisSettings(stop=stop, stem=stem, language=index.settings.language)


def variant_path(index: Index, name: str) -> Path:
    return index.root / VARIANTS_DIR / name.replace("+", "-")


def _covers(variant: Index, index: Index) -> bool:
    """Whether ``variant`` holds every store and every document of ``index`` (same bytes).

    It may hold more only of the documents ``index`` skipped: a document of stopwords alone is
    empty, hence skipped, when stopping, but not without.
    """
    shas = dict(zip(variant.doc_ids, variant.doc_sha256))
    skipped = {s["doc_id"] for s in index.manifest.get("skipped", [])}
    extra = set(shas) - set(index.doc_ids)
    same_documents = all(shas.get(d) == sha for d, sha in zip(index.doc_ids, index.doc_sha256))
    return set(index.specs) <= set(variant.specs) and extra <= skipped and same_documents


def variant_index(index: Index, name: str, progress: Progress | None = None) -> Index:
    """The index of ``index``'s documents analysed as variant ``name``, built or updated if needed."""
    settings = variant_settings(index, name)
    if settings.to_dict() == index.settings.to_dict():
        return index
    path = variant_path(index, name)
    try:
        variant: Index | None = Index.open(path)
    except CoderivError:
        variant = None
    if variant is not None and variant.markup is index.markup and _covers(variant, index):
        return variant
    source = index.source
    if not source or not Path(source).exists():
        raise CoderivError(
            f"the analysis variant {name!r} must be built from the indexed source, but {source!r} "
            "no longer exists; update the index from its new location first"
        )
    # read as the index read its documents (its markup choice): only the analysis differs
    Index.update_from(source, path, settings=settings, stores=list(index.specs.values()), progress=progress, markup=index.markup)
    variant = Index.open(path)
    if not _covers(variant, index):
        raise CoderivError(
            f"the source {source} changed since the index at {index.root} was updated; "
            "run 'coderiv index' on it first"
        )
    return variant


_NO_VARIANTS = "--analysis builds variant indexes of a single index; a sharded index has none"


def evaluate_variants(
    index: IndexReader,
    methods: list[str],
    variants: list[str | None],
    topics: Topics,
    keep_rankings: bool = False,
    progress: Callable[[str], Progress | None] | None = None,
    warn: Callable[[str], Any] | None = None,
) -> list[MethodResult]:
    """Evaluate every method under every analysis variant (None: the index as built; a
    sharded index has no variants). A variant index is built or reused beside the index;
    ``progress(stage)`` gives the progress of each stage ("indexing variant stop", "evaluating
    identity5"), ``warn`` is told what the topics lack in each index. Every method's searcher is
    made before any query runs, so a method the index cannot answer is refused at once."""
    results = []
    for variant in variants:
        target = index
        if variant is not None:
            stage = progress(f"indexing variant {variant}") if progress else None
            target = single_only(partial(variant_index, name=variant, progress=stage), "--analysis", _NO_VARIANTS)(index)
        makers = {name: get_method(name)(target) for name in methods}
        for warning in topics.check(target):
            if warn is not None:
                warn(warning)
        for name in methods:
            label = name if variant is None else f"{name}@{variant_name(target.settings)}"
            stage = progress(f"evaluating {label}") if progress else None
            results.append(evaluate_method(target, name, topics, keep_rankings, label, stage, makers[name]))
    return results
