"""``coderiv compare`` and ``coderiv generate``, the verified query output and the plagiarism
report of ``coderiv evaluate --plagiarism``: exact overlap on the command line (SPEC §6, §7, §9)."""

from __future__ import annotations

import sys
from pathlib import Path, PurePath
from typing import Any

import click

from coderiv.cli.options import (
    analysis_options,
    friendly_errors,
    index_option,
    markup_option,
    quiet_option,
    read_query_reporting,
    settings_from,
)
from coderiv.errors import CoderivError
from coderiv.output import fmt_percent, json_line, over_100_note, printable, table, to_json, tsv
from coderiv.overlap.align import AlignedPassage
from coderiv.overlap.compare import COMPARE_METHODS, DEFAULT_MAX_CHARS, DEFAULT_MAX_PASSAGE_PAIRS, DEFAULT_MAX_PASSAGE_POSTINGS
from coderiv.overlap.verify import VerifiedResult
from coderiv.ranking.measures import over_100_reason
from coderiv.text.extract import DEFAULT_MARKUP, Markup


@click.command("compare")
@click.argument("a", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("b", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--method", "-m", "methods", multiple=True, default=("all",), show_default=True,
    type=click.Choice(["all", *COMPARE_METHODS]),
    help="Method (repeatable).",
)
@click.option("--width", "-w", type=click.IntRange(1), default=4, show_default=True, help="Shingle width in words.")
@click.option("--chunk-words", type=click.IntRange(1), default=5, show_default=True, help="Chunk length in words.")
@click.option("--threshold", type=click.IntRange(1), default=60, show_default=True, help="Shortest exact passage, characters.")
@click.option(
    "--max-passage-pairs", type=click.IntRange(1), default=DEFAULT_MAX_PASSAGE_PAIRS, show_default=True,
    help="Most passage pairs the passages method scores (its cost grows with the square of the texts' length).",
)
@click.option(
    "--max-passage-postings", type=click.IntRange(1), default=DEFAULT_MAX_PASSAGE_POSTINGS, show_default=True,
    help="Most postings the passages method reads (text repeated puts every term in every passage).",
)
@click.option(
    "--max-chars", type=click.IntRange(1), default=DEFAULT_MAX_CHARS, show_default=True,
    help="Most characters of A and B together (about 70 bytes of memory each).",
)
@analysis_options
@markup_option("How .rst and .md files are read: render (their visible text; default) or text (their source, markup included).")
@click.option("--index", "index_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Read A and B as this index reads its documents (its analysis settings and --markup; "
              "flags given here win). Without it, the defaults; nothing of an index is read.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "tsv", "pan"]), default="table", show_default=True,
              help="pan: PAN's text-alignment XML of A's aligned passages (source_reference = B's file name).")
@friendly_errors
def compare_command(
    a: str, b: str, methods: tuple[str, ...], width: int, chunk_words: int, threshold: int, max_passage_pairs: int,
    max_passage_postings: int, max_chars: int,
    stop: bool | None, stem: bool | None, language: str | None, markup: Markup | None, index_dir: Path | None, fmt: str,
) -> None:
    """How much of A is in B and of B in A, by each overlap method, the exact passages they
    share and the passages aligned across word edits (character offsets into each file, each
    aligned passage's share of identical words, and an excerpt). With --index, A and B are
    analysed as that index's documents are."""
    from coderiv.overlap.compare import compare_texts, passage_locations
    from coderiv.text.analysis import Analyzer

    if a == "-" and b == "-":
        raise CoderivError("only one of A and B can be standard input")
    base, base_markup = None, DEFAULT_MARKUP
    if index_dir is not None:
        from coderiv.index.reader import open_index

        index = open_index(index_dir)
        base, base_markup = index.settings, index.markup
    markup = markup or base_markup
    doc_a, doc_b = read_query_reporting(a, markup), read_query_reporting(b, markup)
    label_a, text_a, label_b, text_b = doc_a.label, doc_a.text, doc_b.label, doc_b.text
    analyzer = Analyzer(settings_from(stop, stem, language, base) or base)
    for label, text in ((label_a, text_a), (label_b, text_b)):
        if not analyzer.words(text):
            raise CoderivError(f"{label} has no words: nothing to compare")
    result = compare_texts(
        text_a, text_b, list(methods), analyzer, width, chunk_words, threshold, max_passage_pairs, max_chars, max_passage_postings)
    if fmt == "pan":
        from coderiv.overlap.align.pan import detections
        from coderiv.overlap.align.pan_format import to_xml

        # each aligned passage's kind of reuse is its detection's obfuscation, as in align and report
        click.echo(to_xml(file_name(label_a), detections(file_name(label_a), file_name(label_b), result.aligned)), nl=False)
        return
    if fmt != "json":
        for note in result.notes:
            click.echo(f"note: {note}", err=True)
    # pages or paragraphs of a PDF/DOCX/ODT/EPUB, shown when either document has them
    located = bool(doc_a.locations or doc_b.locations)
    where = passage_locations(result.passages, doc_a.locations, doc_b.locations)
    aligned_where = [(doc_a.locations.span(p.a_start, p.a_end), doc_b.locations.span(p.b_start, p.b_end)) for p in result.aligned]
    if fmt == "json":
        payload = {"a": label_a, "b": label_b, **result.to_dict()}
        if located:
            for passage, (at_a, at_b) in zip(payload["passages"], where):
                passage.update(a_location=at_a, b_location=at_b)
            for passage, (at_a, at_b) in zip(payload["aligned_passages"], aligned_where):
                passage.update(a_location=at_a, b_location=at_b)
        click.echo(to_json(payload))
        return
    rows = [
        [r.method, fmt_percent(r.a_in_b), "(symmetric)" if r.symmetric else fmt_percent(r.b_in_a)] for r in result.rows
    ]
    prows: list[list[object]] = [[p.a_start, p.a_end, p.b_start, p.b_end, p.length, p.excerpt()] for p in result.passages]
    pheads = ["a_start", "a_end", "b_start", "b_end", "chars", "excerpt"]
    if located:
        prows = [[*row[:5], at_a or "", at_b or "", row[5]] for row, (at_a, at_b) in zip(prows, where)]
        pheads = [*pheads[:5], "a_at", "b_at", "excerpt"]
    if fmt == "tsv":
        click.echo(tsv(
            ["method", "a_in_b", "b_in_a"],
            [[r.method, f"{r.a_in_b:.4f}", "" if r.symmetric else f"{r.b_in_a:.4f}"] for r in result.rows],
        ))
        click.echo()
        click.echo(tsv(pheads, prows))
        click.echo()
        click.echo(tsv(*aligned_table(result.aligned, text_a, aligned_where if located else None)))
        return
    click.echo(f"A = {printable(label_a)}\nB = {printable(label_b)}")
    click.echo(table(["method", "A in B", "B in A"], rows, align="<>>"))
    over = over_100_note([v for r in result.rows for v in (r.a_in_b, r.b_in_a)], [r.over_100 for r in result.rows])
    if over:
        click.echo(over)
    click.echo()
    click.echo(f"{len(prows)} exact passages of {threshold}+ characters shared")
    if prows:
        click.echo(table(pheads, prows, align=">>>>><<<" if located else ">>>>><"))
    click.echo()
    verbatim = sum(1 for p in result.aligned if p.same_words == p.a_words)
    click.echo(f"{len(result.aligned)} aligned passages ({verbatim} verbatim; across changed, inserted and deleted words)")
    if result.aligned:
        aheads, arows = aligned_table(result.aligned, text_a, aligned_where if located else None)
        click.echo(table(aheads, arows, align=">>>>>><<<" if located else ">>>>>><"))


def aligned_table(
    passages: list[AlignedPassage], text_a: str, where: list[tuple[str | None, str | None]] | None,
) -> tuple[list[str], list[list[object]]]:
    """Headers and one row per aligned passage: offsets, A's words, identical share, where each
    side lies (pages, paragraphs; when ``where`` is given), an excerpt of A."""
    heads = ["a_start", "a_end", "b_start", "b_end", "words", "identical", "excerpt"]
    rows: list[list[object]] = [
        [p.a_start, p.a_end, p.b_start, p.b_end, p.a_words, fmt_percent(100 * p.identical_share),
         printable(_excerpt(text_a[p.a_start : p.a_end]))]
        for p in passages
    ]
    if where is not None:
        heads = [*heads[:6], "a_at", "b_at", "excerpt"]
        rows = [[*row[:6], at_a or "", at_b or "", row[6]] for row, (at_a, at_b) in zip(rows, where)]
    return heads, rows


def _excerpt(text: str, length: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= length else flat[: length - 1] + "…"


def file_name(label: str) -> str:
    """A label's file name (PAN's references are file names)."""
    return PurePath(label).name or label


@click.command("generate")
@click.argument("collection", required=False, type=click.Path(exists=True, path_type=Path))
@click.option("--cases", "count", type=click.IntRange(1), default=100, show_default=True, help="How many cases.")
@click.option("--sources", "n_sources", type=click.IntRange(1), default=3, show_default=True, help="Source documents per case.")
@click.option("--own-share", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.4, show_default=True,
    help="Share of each case's words from its own document."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--output", "-o", type=click.Path(allow_dash=True), default="-", show_default=True,
    help="JSONL file to write (--format pan: the folder to write the cases into)."
)
@click.option("--format", "fmt", type=click.Choice(["jsonl", "pan"]), default="jsonl", show_default=True,
              help="pan: PAN text-alignment pairs (susp/, src/, pairs, truth/; docs/alignment.md).")
@click.option("--obfuscation", type=click.Choice(["none", "noise", "low", "high"]), default="none", show_default=True,
              help="--format pan: verbatim, OCR-like noise, or random word operations at 10% (low) / 30% (high).")
@click.option("--sample", type=click.IntRange(1), default=None,
              help="--format pan: draw the pairs from this many documents of the collection (spares reading it all).")
@index_option
@markup_option("How .rst and .md documents are read: render or text. Default: as the index read them "
               "(a COLLECTION given: render).")
@quiet_option
@friendly_errors
def generate_command(
    collection: Path | None, count: int, n_sources: int, own_share: float, seed: int, output: str, fmt: str,
    obfuscation: str, sample: int | None, index_dir: Path, markup: Markup | None = None, quiet: bool = False,
) -> None:
    """Write plagiarized documents composed of whole paragraphs of random documents of
    COLLECTION (a folder or archive; default: the documents of the index), one JSON object per
    line with each donor's expected similarity (SPEC §9). Only the documents drawn are read, as
    the index reads them (reStructuredText rendered); a summary line goes to standard error.
    With ``--format pan``, PAN text-alignment cases (passages pasted into documents of other
    projects, at the ``--obfuscation`` level) into the folder ``--output``."""
    if fmt == "pan":
        from coderiv.evaluation.pan_generate import generate_pan
        from coderiv.text.collection import iter_collection

        if collection is None:
            from coderiv.index.index import Index

            index = Index.open(index_dir)
            source, markup = index.source, index.markup.agree(markup)
            if source is None or not Path(source).exists():
                raise CoderivError("give a COLLECTION folder or archive (the index's source is unknown or gone)")
            collection = Path(source)
        if output == "-":
            raise CoderivError("--format pan writes a folder: give it with --output DIR")
        pairs = generate_pan(iter_collection(collection), Path(output), count, obfuscation, seed, sample, markup or DEFAULT_MARKUP)
        click.echo(f"{len(pairs)} {obfuscation} pairs written to {output} (susp/, src/, pairs, truth/)", err=True)
        return
    from coderiv.cli.options import progress_bar
    from coderiv.evaluation.donor_texts import donor_texts
    from coderiv.evaluation.generate import generate_from_texts

    texts = donor_texts(collection, index_dir, markup)
    with progress_bar(quiet, "generating") as bar:
        lines = [json_line(case) for case in generate_from_texts(texts.doc_ids, texts, count, n_sources, own_share, seed, bar)]
    text = "".join(line + "\n" for line in lines)
    where = "standard output" if output == "-" else output
    if output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        try:
            Path(output).write_text(text, "utf-8")
        except OSError as exc:
            raise CoderivError(f"cannot write {output}: {exc.strerror}") from None
    click.echo(
        f"{len(lines)} cases written to {where} (seed {seed}; {texts.read} of the {len(texts.doc_ids)} documents "
        f"of {texts.source} read)", err=True,
    )


def print_verified(checked_results: list[VerifiedResult], fmt: str) -> None:
    """Ranked results with each match's verified percentage and exact passages."""
    results = [c.result for c in checked_results]
    verified = [c.matches for c in checked_results]
    notes = [c.note for c in checked_results]
    if fmt == "json":
        data = []
        for result, checked, note in zip(results, verified, notes):
            record = result.to_dict()
            record["matches"] = [v.to_dict() for v in checked]
            record["verify_note"] = note
            data.append(record)
        click.echo(to_json(data))
        return
    headers = ["query", "rank", "percent", "verified", "passages", "doc_id"]
    if fmt == "tsv":
        click.echo(tsv(headers, [
            [r.query, v.match.rank, f"{v.match.percent:.4f}", f"{v.verified:.4f}", len(v.passages), v.match.doc_id]
            for r, checked in zip(results, verified) for v in checked
        ]))
        return
    for n, (result, checked, note) in enumerate(zip(results, verified, notes)):
        if n:
            click.echo()
        click.echo(f"{printable(result.query)}: {result.measure}, verified by aligned passages (share of the query's words they cover)")
        if note:
            click.echo(f"note: {note}")
        rows = [[v.match.rank, fmt_percent(v.match.percent), fmt_percent(v.verified), len(v.passages), v.match.doc_id] for v in checked]
        click.echo(table(headers[1:], rows, align=">>>><"))
        over = over_100_note([v.match.percent for v in checked], [over_100_reason(result.measure)])
        if over:
            click.echo(over)
        for v in checked:
            for p in v.passages[:3]:
                where = f"[{p.b_start}:{p.b_end}] = query [{p.a_start}:{p.a_end}]"
                click.echo(f"  {printable(v.match.doc_id)} {where}: {printable(p.excerpt())}")
            if len(v.passages) > 3:
                click.echo(f"  {printable(v.match.doc_id)}: {len(v.passages) - 3} more passages")


def plagiarism_report(
    cases_path: Path, collection: Path | None, index_dir: Path, methods: str | None, fmt: str,
    per_pair: bool = False, quiet: bool = False,
) -> None:
    """``coderiv evaluate --plagiarism``: mean absolute difference per method (paper 001 Table 1),
    or with ``per_pair`` one row per (method, case, donor)."""
    from coderiv.cli.options import progress_bar
    from coderiv.evaluation.plagiarism import evaluate_case_file

    with progress_bar(quiet, "plagiarism cases") as bar:
        results = evaluate_case_file(cases_path, collection, index_dir, methods, bar)
    if results:
        methods_said = f"{len(results)} method" + ("s" if len(results) != 1 else "")
        click.echo(f"{results[0].pairs} (case, donor) pairs of {cases_path.name} evaluated by {methods_said}", err=True)
    if fmt == "json":
        click.echo(to_json([r.to_dict(per_pair) for r in results]))
        return
    if per_pair:
        headers = ["method", "case", "doc_id", "expected", "obtained", "|diff|"]
        rows: list[list[Any]] = [
            [r.method, o.case_id, o.doc_id, f"{o.expected:.2f}", f"{o.obtained:.2f}", f"{o.abs_diff:.2f}"]
            for r in results for o in r.outcomes
        ]
        click.echo(tsv(headers, rows) if fmt == "tsv" else table(headers, rows, align="<<<>>>"))
        return
    rows = [[r.method, f"{r.mean_abs_diff:.2f}", "" if r.paper is None else f"{r.paper:.2f}", r.pairs] for r in results]
    headers = ["method", "mean |diff|", "paper 001", "pairs"]
    click.echo(tsv(headers, rows) if fmt == "tsv" else table(headers, rows, align="<>>>"))


COMMANDS = [compare_command, generate_command]
