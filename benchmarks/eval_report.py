"""The evidence report on the plagiarism cases of the dev collection (SPEC §9; docs/report.md).

For every case (paragraphs of an own document and three sources, shuffled) the report of the
case text is built against an index of the collection. A donor is *found* when it, or one of
its other releases, is among the report's sources or their grouped versions (*moved*: a file
of the same project with the same name stem, e.g. ``doc/en/customize.rst`` that became
``doc/en/reference/customize.rst``, or ``README.rst`` that became ``README.md``); its *obtained
share* is the share of the case's words the report credits to those sources, set against the
generator's ``share_of_plagiarized_percent`` (the share of the case's words taken from it).
Prints donor recall (all donors, and donors with at least 10% of their words reused), the mean
absolute difference of the shares in points, and the quote check: a copied passage put between
quotation marks must leave the overall figure.

    coderiv index ../shared/corpora/corpus.tar.gz --index /tmp/devidx
    .venv/bin/python benchmarks/eval_report.py /tmp/devidx [CASES]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from coderiv.evaluation.plagiarism import read_cases
from coderiv.ranking.containment import open_with_chunks
from coderiv.report import ReportOptions, build_report
from coderiv.text.exclusions import word_bounds
from coderiv.text.sources import DocumentTexts

QUOTE_CASES = 20


def main() -> None:
    shared = Path(__file__).resolve().parents[2] / "shared/corpora"
    if len(sys.argv) < 2:
        sys.exit("usage: eval_report.py INDEX [CASES]  (an index of the dev corpus)")
    index = open_with_chunks(sys.argv[1], announce=lambda m: print(m, file=sys.stderr))
    cases = read_cases(sys.argv[2] if len(sys.argv) > 2 else shared / "plagiarism/cases.jsonl")
    texts = DocumentTexts(index.source, preload=True)
    texts.get(index.doc_ids[:1])  # read the archive once
    configurations = {
        "default exclusions": ReportOptions(),
        "no exclusions": ReportOptions(exclude_quotes=False, exclude_bibliography=False, min_words=0),
    }
    print("| report | donors found | found, moved files too | donors ≥ 10% reused found (moved too) "
          "| mean abs. difference of shares | own | sources | s per case |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, options in configurations.items():
        found: list[bool] = []
        moved: list[bool] = []
        found_10: list[bool] = []
        differences: dict[str, list[float]] = {"own": [], "source": []}
        start = time.perf_counter()
        for case in cases:
            report = build_report(index, case["text"], case["case_id"], options, texts)
            for donor in case["sources"]:
                versions = {donor["doc_id"], *donor.get("other_versions", [])}
                strict = [s for s in report.sources if versions & {s.doc_id, *(v.doc_id for v in s.versions)}]
                files = {_file(d) for d in versions}
                mine = [s for s in report.sources if files & {_file(s.doc_id), *(_file(v.doc_id) for v in s.versions)}]
                found.append(bool(strict))
                moved.append(bool(mine))
                if donor["expected_percent"] >= 10:
                    found_10.append(bool(mine))
                obtained = sum(s.share for s in mine)
                differences[donor["role"]].append(abs(obtained - donor["share_of_plagiarized_percent"]))
        every = differences["own"] + differences["source"]
        seconds = (time.perf_counter() - start) / len(cases)
        print(
            f"| {name} | {np.mean(found):.3f} | {np.mean(moved):.3f} | {np.mean(found_10):.3f} | {np.mean(every):.2f} "
            f"| {np.mean(differences['own']):.2f} | {np.mean(differences['source']):.2f} | {seconds:.2f} |"
        )
    print()
    print(_quote_check(index, cases[:QUOTE_CASES], texts))


def _file(doc_id: str) -> str:
    """``PROJECT-VERSION/path/name.ext`` -> ``PROJECT/name``: one file across releases and moves."""
    release, _, path = doc_id.partition("/")
    return release.rsplit("-", 1)[0] + "/" + Path(path).stem


def _quote_check(index, cases, texts) -> str:  # type: ignore[no-untyped-def]
    """Put the first paragraph (at most 60 words) of the longest counted passage of each case's
    top source between quotation marks: with a citation after it, exactly its words must leave
    the overall figure (a quotation that looks like one, issue 24); without one, none may (an
    unattributed quotation cannot hide copying)."""
    from coderiv.text.exclusion_rules import MAX_QUOTE_WORDS

    removed, kept, total = 0, 0, 0
    for case in cases:
        options = ReportOptions(min_words=0)
        before = build_report(index, case["text"], case["case_id"], options, texts)
        if not before.sources:
            continue
        passage = max(before.sources[0].own_passages, key=lambda p: p.counted_words)
        if passage.counted_words != passage.words:
            continue
        text = case["text"]
        start = passage.query_start
        end = text.find("\n\n", start, passage.query_end)
        end = passage.query_end if end < 0 else end
        words = len(word_bounds(text[start:end])[0])
        if words > MAX_QUOTE_WORDS:
            continue
        total += 1
        bare = text[:start] + "“" + text[start:end] + "”" + text[end:]
        kept += build_report(index, bare, case["case_id"], options, texts).covered_words == before.covered_words
        cited = text[:start] + "“" + text[start:end] + "” [1]" + text[end:]
        after = build_report(index, cited, case["case_id"], options, texts)
        removed += after.covered_words == before.covered_words - words
    return (f"quote check ({total} cases with a first paragraph of at most {MAX_QUOTE_WORDS} words): cited, exactly its "
            f"words left the overall figure in {removed}; without a citation, the figure kept them in {kept}")


if __name__ == "__main__":
    main()
