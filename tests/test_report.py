"""The evidence report: exact sources, passages, offsets, shares and exclusions on a collection
whose shared paragraphs are known (tests/support/report_corpus.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coderiv.errors import CoderivError
from coderiv.report import ReportOptions, build_report, render_html, render_json
from coderiv.report.render_html import FOLD_KEEP, pane_runs
from tests.support.report_corpus import DOCS, LICENCE, WORDS, build, para

A1, B2, OWN = para("a", 1), para("b", 2), para("own", 0)
Q1 = f"{A1}\n\n{OWN}\n\n{B2}"  # 60 words: 20 from a (and c), 20 own, 20 from b


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return build(tmp_path_factory.mktemp("report"), {"a2.txt": DOCS["a.txt"] + "\n\n" + para("a", 3)})


def shares(report) -> dict[str, float]:  # type: ignore[no-untyped-def]
    return {s.doc_id: s.share for s in report.sources}


def test_known_paragraphs_give_exactly_their_sources_passages_and_shares(index) -> None:  # type: ignore[no-untyped-def]
    report = build_report(index, Q1, "q1", ReportOptions(group_versions=False))
    assert (report.total_words, report.covered_words) == (3 * WORDS, 2 * WORDS)
    assert report.overall == pytest.approx(100 * 40 / 60)
    # a, a2 and c all hold A1: credited once, to the first of the tie (containment order); b holds B2.
    assert [(s.doc_id, s.credited_words, s.matched_words) for s in report.sources] == [
        ("a.txt", 20, 20), ("b.txt", 20, 20), ("a2.txt", 0, 20), ("c.txt", 0, 20),
    ]
    assert sum(s.share for s in report.sources) == pytest.approx(report.overall)
    a, b = report.sources[0], report.sources[1]
    (pa,) = a.passages
    assert (pa.query_start, pa.query_end) == (0, len(A1))
    assert (pa.source_start, pa.source_end) == (DOCS["a.txt"].index(A1), DOCS["a.txt"].index(A1) + len(A1))
    assert (pa.words, pa.counted_words, pa.excluded, pa.text) == (20, 20, None, A1)
    (pb,) = b.passages
    assert (pb.query_start, pb.query_end) == (Q1.index(B2), len(Q1))
    assert b.text[pb.source_start : pb.source_end] == B2 == DOCS["b.txt"][pb.source_start : pb.source_end]
    assert a.containment_percent == pytest.approx(100 * 16 / 56)  # 16 of the query's 56 five-word chunks
    assert a.ranking_percent is not None and a.ranking_percent > 0
    assert report.searches == ["containment:n=5", "containment:n=5 cover", "identity5", "cosine windows"]
    assert [e.kind for e in report.exclusions] == [] and report.note is None


def test_versions_are_grouped_under_one_source(index) -> None:  # type: ignore[no-untyped-def]
    report = build_report(index, Q1, "q1")
    assert [(s.doc_id, [v.doc_id for v in s.versions]) for s in report.sources] == [
        ("a.txt", ["a2.txt"]), ("b.txt", []), ("c.txt", []),
    ]
    assert [v.matched_words for v in report.sources[0].versions] == [20]
    assert [p.doc_id for p in report.sources[0].passages] == ["a.txt", "a2.txt"]
    assert [p.doc_id for p in report.sources[0].own_passages] == ["a.txt"]
    assert report.overall == pytest.approx(100 * 40 / 60)


@pytest.mark.parametrize("open_, close", [("“", "”"), ('"', '"'), ("«", "»"), ("„", "“")])
def test_an_attributed_quotation_is_excluded_and_counted_without_the_flag(index, open_, close) -> None:  # type: ignore[no-untyped-def]
    query = f"{A1}\n\n{OWN}\n\n{open_}{B2}{close} (Smith 2004)"  # 62 words: 20 + 20 + 20 quoted + "Smith 2004"
    on = build_report(index, query, "q", ReportOptions(group_versions=False))
    assert on.total_words == 62
    assert on.overall == pytest.approx(100 * 20 / 62)
    assert on.excluded_words["quote"] == 20
    # b stays listed, share 0, its passage shown as excluded (a quotation is visible evidence)
    assert shares(on)["b.txt"] == 0.0
    assert [(p.excluded, p.query_start) for s in on.sources if s.doc_id == "b.txt" for p in s.passages] == [("quote", query.index(B2))]
    html = render_html(on)  # greyed in the overview, with the reason and the source; greyed side by side
    rank = next(s.rank for s in on.sources if s.doc_id == "b.txt")
    assert f'<mark class="ex" data-src="{rank}" title="excluded: quoted text; matches b.txt">' in html
    title = "passage 1: 20 words, verbatim, excluded (quote)"
    assert f'<mark class="mx" id="q{rank}-0" data-peer="d{rank}-0" title="{title}">' in html
    (exclusion,) = on.exclusions
    start = query.index(open_ + B2)
    assert (exclusion.kind, exclusion.start, exclusion.end, exclusion.words) == (
        "quote", start, start + len(open_ + B2 + close), 20,
    )
    off = build_report(index, query, "q", ReportOptions(exclude_quotes=False, group_versions=False))
    assert off.overall == pytest.approx(100 * 40 / 62)
    assert shares(off)["b.txt"] == pytest.approx(100 * 20 / 62)


def test_an_unattributed_quotation_is_counted(index) -> None:  # type: ignore[no-untyped-def]
    # scare quotes, dialogue or a pasted paragraph between quotation marks, with no citation
    query = f"{A1}\n\n{OWN}\n\n“{B2}”"
    report = build_report(index, query, "q", ReportOptions(group_versions=False))
    assert report.overall == pytest.approx(100 * 40 / 60)
    assert report.excluded_words["quote"] == 0


ENTRY = "Smith, J. (2004). On words. Publisher."  # 6 words: Smith J 2004 On words Publisher


def test_a_bibliography_is_excluded_and_counted_without_the_flag(index) -> None:  # type: ignore[no-untyped-def]
    query = f"{A1}\n\nReferences\n\n{ENTRY}\n"  # 27 words: 20 + the heading + the entry's 6
    on = build_report(index, query, "q", ReportOptions(group_versions=False))
    assert (on.total_words, on.excluded_words["bibliography"]) == (27, 7)
    assert on.overall == pytest.approx(100 * 20 / 27)
    heading = query.index("References")
    assert [(e.kind, e.start, e.end, e.words, e.reason) for e in on.exclusions] == [
        ("bibliography", heading, heading + len("References"), 1, "bibliography (References)"),
        ("bibliography", query.index(ENTRY), len(query), 6, "bibliography (References)"),
    ]
    off = build_report(index, query, "q", ReportOptions(exclude_bibliography=False, group_versions=False))
    assert off.excluded_words["bibliography"] == 0 and off.overall == pytest.approx(100 * 20 / 27)


LONG = para("long", 0, 100)  # a page: 100 words only long.txt has


@pytest.fixture(scope="module")
def long_index(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return build(tmp_path_factory.mktemp("long"), {"long.txt": LONG})


@pytest.mark.parametrize("dressed", [
    f"“{LONG}” (Smith 2004)",  # a copied page between quotation marks, even attributed
    f"References\n\n{LONG} (Smith 2004)",  # a "References" heading above copied text
])
def test_a_plagiarists_tricks_do_not_lower_the_figure(long_index, dressed: str) -> None:  # type: ignore[no-untyped-def]
    query = f"{OWN}\n\n{dressed}"
    report = build_report(long_index, query, "q", ReportOptions(group_versions=False))
    assert report.covered_words == 100
    assert [s.doc_id for s in report.sources] == ["long.txt"]
    assert report.excluded_words["quote"] == report.excluded_words["bibliography"] == 0


def test_a_references_section_in_the_middle_is_not_a_bibliography(index) -> None:  # type: ignore[no-untyped-def]
    query = f"# Intro\n\n{A1}\n\n# References\n\n{ENTRY}\n\n# Method\n\n{OWN}\n"
    report = build_report(index, query, "q", ReportOptions(group_versions=False))
    assert report.excluded_words["bibliography"] == 0


def test_the_report_warns_when_exclusions_leave_out_much_of_the_text(index) -> None:  # type: ignore[no-untyped-def]
    entries = "\n".join(f"[{k}] Author{k}, A. ({2000 + k}). Title {k}." for k in range(1, 4))  # 6 words each
    query = f"{A1}\n\nReferences\n\n{entries}\n"  # 20 + 1 + 3 * 6 = 39 words, 19 excluded (48.7%)
    report = build_report(index, query, "q", ReportOptions(group_versions=False))
    assert (report.total_words, report.excluded_words["bibliography"]) == (39, 19)
    assert report.warning is not None and report.warning.startswith("exclusions leave out 48.7% of the words (more than 20%)")
    assert build_report(index, Q1, "q").warning is None
    html = render_html(report)
    assert '<p class="note warning" id="warning">Warning: exclusions leave out 48.7% of the words' in html


def test_small_matches_are_excluded_below_min_words(index) -> None:  # type: ignore[no-untyped-def]
    fragment = " ".join(f"b2w{i}" for i in range(5))  # five words of b's paragraph 2
    own = OWN.replace("own0w9 ", f"own0w9 {fragment} ")
    query = f"{A1}\n\n{own}"  # 45 words
    on = build_report(index, query, "q", ReportOptions(group_versions=False))
    assert (on.total_words, on.excluded_words["small"]) == (45, 5)
    assert on.overall == pytest.approx(100 * 20 / 45)
    (small,) = [e for e in on.exclusions if e.kind == "small"]
    assert (small.start, small.end, small.words) == (query.index(fragment), query.index(fragment) + len(fragment), 5)
    off = build_report(index, query, "q", ReportOptions(min_words=0, group_versions=False))
    assert off.overall == pytest.approx(100 * 25 / 45)
    assert shares(off)["b.txt"] == pytest.approx(100 * 5 / 45)


def test_template_text_is_not_counted(index) -> None:  # type: ignore[no-untyped-def]
    report = build_report(index, Q1, "q", ReportOptions(templates=(("sheet.txt", "Header.\n\n" + A1),)))
    assert report.excluded_words["template"] == 20
    assert report.overall == pytest.approx(100 * 20 / 60)
    assert [(s.doc_id, s.credited_words) for s in report.sources] == [("b.txt", 20), ("a.txt", 0), ("c.txt", 0)]
    assert report.exclusions[0].reason == "in template sheet.txt"


def test_passages_common_to_many_documents_are_excluded(index) -> None:  # type: ignore[no-untyped-def]
    query = f"{A1}\n\n{LICENCE}"
    plain = build_report(index, query, "q", ReportOptions(group_versions=False))
    assert plain.overall == 100.0
    assert [(s.doc_id, s.credited_words) for s in plain.sources][:2] == [("a.txt", 20), ("d.txt", 20)]
    # A1 is in 3 documents (a, a2, c), the licence in 4 (d, e, f, g)
    common = build_report(index, query, "q", ReportOptions(common_docs=3))
    assert common.overall == pytest.approx(50.0)
    assert common.excluded_words["common"] == 20
    assert [(e.kind, e.start, e.end, e.words) for e in common.exclusions] == [("common", len(A1) + 2, len(query), 20)]
    assert build_report(index, query, "q", ReportOptions(common_docs=2)).overall == 0.0
    assert build_report(index, query, "q", ReportOptions(common_docs=4)).overall == 100.0


def test_excluded_documents_and_empty_queries(index) -> None:  # type: ignore[no-untyped-def]
    report = build_report(index, Q1, "q", ReportOptions(exclude_docs=("a.txt", "a2.txt")))
    assert [s.doc_id for s in report.sources] == ["b.txt", "c.txt"]  # containment ties: id order
    nothing = build_report(index, "zebra quagga okapi", "q")
    assert (nothing.sources, nothing.overall) == ([], 0.0)
    assert nothing.note == "no document of the collection shares a chunk or a term with the query"
    with pytest.raises(CoderivError, match="no words"):
        build_report(index, "   ...   ", "q")


def test_json_form(index) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(render_json(build_report(index, Q1, "q1")))
    assert set(data) == {
        "version", "label", "total_words", "covered_words", "overall", "excluded_words", "sources", "exclusions",
        "options", "index", "documents", "candidates", "searches", "note", "warning", "words_by_reuse",
    }
    assert data["words_by_reuse"] == {"verbatim": data["covered_words"], "edited": 0, "paraphrased": 0, "summarised": 0}
    source = data["sources"][0]
    assert set(source) == {
        "rank", "doc_id", "color", "share", "credited_words", "matched_words", "matched_percent",
        "containment_percent", "ranking_percent", "versions", "passages",
    }
    assert source["passages"][0] == {
        "number": 1, "doc_id": "a.txt", "query_start": 0, "query_end": len(A1),
        "source_start": DOCS["a.txt"].index(A1), "source_end": DOCS["a.txt"].index(A1) + len(A1),
        "words": 20, "counted_words": 20, "excluded": None, "text": A1,
        "same_words": 20, "source_words": 20, "identical_share": 1.0, "match": "verbatim", "credited_words": 20,
        "reuse": "verbatim", "query_spans": [{"start": 0, "end": len(A1) - 1, "kind": "same"}],  # words: the full stop is not one
        "source_spans": [{"start": DOCS["a.txt"].index(A1), "end": DOCS["a.txt"].index(A1) + len(A1) - 1, "kind": "same"}],
    }
    with_texts = json.loads(render_json(build_report(index, Q1, "q1"), include_texts=True))
    assert with_texts["query_text"] == Q1 and with_texts["sources"][1]["text"] == DOCS["b.txt"]


def test_html_is_self_contained_and_escapes_document_text(tmp_path: Path) -> None:
    evil = '<script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2"> </textarea> ' + para("x", 0)
    index = build(tmp_path, {"evil<b>name.txt": evil})
    html = render_html(build_report(index, evil + "\n\n" + A1, "<i>query<i>.txt"))
    assert "<script>window" not in html and "<img src=x" not in html and "</textarea>" not in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert "evil&lt;b&gt;name.txt" in html and "&lt;i&gt;query&lt;i&gt;.txt" in html
    assert len(re.findall(r"<script", html)) == 1  # the page's own, inline
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)
    assert "default-src 'none'" in html
    assert html.count('class="s1"') >= 1 and html.count('class="s2"') >= 1


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# a paragraph repeated more than 4 times in the query comes back in at most 4 aligned pieces
# (docs/alignment.md, "bounds"; docs/report.md, "Limits"): each paragraph at most 4 times here
@given(st.lists(st.sampled_from([("a", 0), ("a", 2), ("b", 1), ("d", 2), ("own", 0), ("own", 1), ("lic", 0)]), min_size=1, max_size=6)
       .filter(lambda picked: max(picked.count(p) for p in picked) <= 4))
@example(picked=[("a", 0), ("a", 0), ("a", 0), ("a", 2)])  # counted 60 of 80 once the sentence seeds joined the copies
@example(picked=[("a", 0), ("a", 0), ("a", 0), ("own", 0), ("a", 2)])  # and 100 of 80: the own paragraph joined in
def test_shares_add_up_and_each_word_counts_once(index, picked) -> None:  # type: ignore[no-untyped-def]
    query = "\n\n".join(para(name, k) for name, k in picked)
    report = build_report(index, query, "q", ReportOptions(min_words=0, group_versions=False))
    copied = sum(1 for name, _ in picked if name != "own")
    assert (report.total_words, report.covered_words) == (WORDS * len(picked), WORDS * copied)
    assert sum(s.credited_words for s in report.sources) == report.covered_words
    assert all(s.credited_words <= s.matched_words for s in report.sources)


def test_comparison_panes_fold_and_leave_out_long_unmatched_stretches(index) -> None:  # type: ignore[no-untyped-def]
    filler = "\n\n".join(para("own", k) for k in range(40))  # about 5,000 characters no source has
    query = f"{filler}\n\n{A1}\n\n{para('own', 99)}"
    report = build_report(index, query, "q", ReportOptions(group_versions=False))
    left, right = pane_runs(report, report.sources[0])
    omitted = [r for r in left if r.omitted]
    assert len(omitted) == 1 and omitted[0].omitted == len(filler) + 2 - 2 * FOLD_KEEP
    assert "".join(r.text for r in left if not r.omitted) == query[:FOLD_KEEP] + query[len(filler) + 2 - FOLD_KEEP :]
    (mark,) = [r for r in left if r.css]
    assert (mark.text, mark.id, mark.peer) == (A1, "q1-0", "d1-0")
    assert [r.id for r in right if r.css] == ["d1-0"]
    assert "".join(r.text for r in right) == report.sources[0].text  # the source side keeps everything (folded)


def test_control_characters_of_names_and_texts_are_shown_as_escapes(tmp_path: Path) -> None:
    # ESC/BEL in a document id and a label, a bidirectional override in the text: shown as the
    # CLI shows them (\x1b, \x07, \u202e), never passed to the page; line breaks are kept
    name = "bell\x07\x1b[31mred.txt"
    index = build(tmp_path, {name: para("x", 0) + " \u202eevil"})
    html = render_html(build_report(index, para("x", 0) + "\n\n" + A1, "q\x1b]0;title\x07.txt"))
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202e]", html)
    assert "bell\\x07\\x1b[31mred.txt" in html and "q\\x1b]0;title\\x07.txt" in html
    assert "\\u202eevil" in html
    assert "\n" in html


def _edited(words: list[str], every: int) -> tuple[str, list[str]]:
    """LONG's words with every ``every``-th (from the 10th) replaced by a word no document has."""
    out = list(words)
    replaced = []
    for i in range(10, len(out), every):
        out[i] = f"zz{i}"
        replaced.append(out[i])
    return " ".join(out), replaced


def test_an_edited_passage_is_one_passage_with_its_differing_words(long_index) -> None:  # type: ignore[no-untyped-def]
    copy, replaced = _edited(LONG.split(" "), 20)  # words 10, 30, 50, 70, 90 replaced
    query = f"{OWN}\n\n{copy}"  # 120 words
    report = build_report(long_index, query, "q", ReportOptions(group_versions=False))
    (source,) = report.sources
    (p,) = source.passages
    assert (p.query_start, p.query_end) == (query.index(copy), len(query))
    assert (p.source_start, p.source_end) == (0, len(LONG))
    assert (p.words, p.same_words, p.identical_share, p.match, p.excluded) == (100, 95, 0.95, "near-copy", None)
    changed = [query[s.start : s.end] for s in p.query_spans if s.kind == "changed"]
    assert changed == replaced
    originals = ["long0w10", "long0w30", "long0w50", "long0w70", "long0w90"]
    assert [LONG[s.start : s.end] for s in p.source_spans if s.kind == "changed"] == originals
    assert (report.covered_words, report.total_words) == (100, 120)
    assert source.share == pytest.approx(100 * 100 / 120)
    data = json.loads(render_json(report))["sources"][0]["passages"][0]
    assert (data["identical_share"], data["match"]) == (0.95, "near-copy")
    html = render_html(report)
    assert html.count('class="s1 chg"') == 3 * 5  # the five words in the overview and in both panes
    for word in replaced:
        assert f'class="s1 chg" data-peer="q1-0" data-src="1" title="long.txt (words differ)">{word}</mark>' in html


def test_own_text_inserted_between_copied_stretches_is_not_counted(long_index) -> None:  # type: ignore[no-untyped-def]
    words = LONG.split(" ")
    own = " ".join(f"mine{i}" for i in range(12))  # 12 words: joined into the passage, not counted
    query = " ".join(words[:50]) + f" {own} " + " ".join(words[50:])
    report = build_report(long_index, query, "q", ReportOptions(group_versions=False))
    (p,) = report.sources[0].passages
    assert (p.words, p.same_words) == (112, 100)
    assert (report.covered_words, report.total_words) == (100, 112)


def test_a_passage_never_ends_inside_a_word(long_index) -> None:  # type: ignore[no-untyped-def]
    # "lists being e|venly": the copy shares the characters "e" but not the word "evenly"
    words = LONG.split(" ")
    query = " ".join(words[:40]) + " long0w40x and more of mine here"
    report = build_report(long_index, query, "q", ReportOptions(group_versions=False))
    (p,) = report.sources[0].passages
    assert query[p.query_start : p.query_end] == " ".join(words[:40])
    assert LONG[p.source_start : p.source_end] == " ".join(words[:40])


RELEASE = para("rel", 0, 60)  # a page in three releases: r1 and r3 change words r2 keeps


def _release(changed: set[int]) -> str:
    return " ".join(f"old{i}" if i in changed else w for i, w in enumerate(RELEASE.split(" ")))


def test_pan_output_credits_one_release_per_passage(tmp_path: Path) -> None:
    from coderiv.report.render_pan import pan_features

    releases = {"r1.txt": _release({5, 25, 45}), "r2.txt": RELEASE, "r3.txt": _release({15})}
    query = f"{OWN}\n\n{RELEASE}"
    report = build_report(build(tmp_path, releases), query, "q.txt")
    assert [(p.doc_id, p.credited_words) for p in report.sources[0].passages] == [("r2.txt", 60), ("r1.txt", 60), ("r3.txt", 60)]
    # three releases hold the passage: one detection, of the release the report credits (issue 43)
    (detection,) = pan_features(report)
    assert (detection.source_reference, detection.this_offset, detection.this_length) == (
        "r2.txt", query.index(RELEASE), len(RELEASE))
    assert detection.also_in == ("r1.txt", "r3.txt")
    assert detection.obfuscation == "verbatim"  # the passage's kind of reuse


def test_the_best_release_is_named_and_every_known_version_listed(tmp_path: Path) -> None:
    from coderiv.cli.main import main as cli

    releases = {"r1.txt": _release({5, 25, 45}), "r2.txt": RELEASE, "r3.txt": _release({15})}
    index = build(tmp_path, releases)
    query = f"{OWN}\n\n{RELEASE}"  # copied from r2: every word identical there, 57 or 59 in the others
    report = build_report(index, query, "q")
    (source,) = report.sources
    assert source.doc_id == "r2.txt"  # all three match the 60 words; r2 has the most identical
    assert sorted((v.doc_id, v.matched_words, v.verified) for v in source.versions) == [("r1.txt", 60, True), ("r3.txt", 60, True)]
    # with one candidate verified, the index's version groups (its chunks pair table) name the others
    from click.testing import CliRunner

    assert CliRunner().invoke(cli, ["pairs", "--index", str(tmp_path / "idx")]).exit_code == 0
    few = build_report(index, query, "q", ReportOptions(max_candidates=1, top=1, measure=None, window_candidates=0))
    (source,) = few.sources
    assert source.doc_id == "r2.txt"
    assert [(v.doc_id, v.matched_words, v.verified) for v in source.versions] == [("r1.txt", 0, False), ("r3.txt", 0, False)]
    assert json.loads(render_json(few))["sources"][0]["versions"][0] == {"doc_id": "r1.txt", "matched_words": 0, "verified": False}
    assert "also in 2 other versions: r1.txt, r3.txt" in render_html(few)


def test_excerpts_of_excluded_text_carry_one_pair_of_quotation_marks() -> None:
    from coderiv.report.render_html import excerpt

    assert excerpt("“a quoted\n  sentence.”") == "a quoted sentence."
    assert excerpt('"plain"') == "plain" and excerpt("«guillemets»") == "guillemets"
    assert excerpt("x" * 100) == "x" * 89 + "…"


def test_the_page_names_files_never_folders(index) -> None:  # type: ignore[no-untyped-def]
    from coderiv.report.render_html import file_name

    assert (file_name("/home/examiner/students/jan/thesis.txt"), file_name("C:\\Users\\ex\\t.docx"), file_name("q.txt")) == (
        "thesis.txt", "t.docx", "q.txt")
    html = render_html(build_report(index, Q1, "/home/examiner/students/jan/thesis.txt"))
    assert "/home/examiner" not in html and "Query: <span class=\"label\">thesis.txt</span>" in html
    assert str(index.root) not in html and f"index {index.root.name} ·" in html


def test_a_reworded_copy_is_credited_with_its_kind(tmp_path: Path) -> None:
    """A copy with its sentences reordered and every third word replaced (tests/support/reworded):
    one paraphrased passage, all its 85 words covered (not only the 21 identical ones), the JSON's
    words by kind, and the kind beside the passage in the HTML report."""
    from tests.support.reworded import HOST, INTRO, OUTRO, REWORDED, SOURCE_SENTENCES, TAIL

    source = INTRO + " ".join(SOURCE_SENTENCES) + OUTRO
    index = build(tmp_path, {"harbour.txt": source})
    query = HOST + " ".join(REWORDED) + TAIL
    report = build_report(index, query, "q")
    (found,) = [s for s in report.sources if s.doc_id == "harbour.txt"]
    (p,) = found.passages
    copied = " ".join(REWORDED)
    assert (p.query_start, p.query_end, p.words, p.same_words, p.reuse) == (len(HOST), len(HOST) + len(copied), 85, 21, "paraphrased")
    assert report.covered_words == 85 and report.words_by_reuse == {"verbatim": 0, "edited": 0, "paraphrased": 85, "summarised": 0}
    assert json.loads(render_json(report))["words_by_reuse"]["paraphrased"] == 85
    html = render_html(report)
    assert "1 passage: 1 paraphrased" in html
    assert "passage 1: 85 words, 25% of its words identical (paraphrased)" in html
    from coderiv.report.render_pan import pan_features, render_pan

    assert [d.obfuscation for d in pan_features(report) if d.source_reference == "harbour.txt"] == ["paraphrased"]
    assert 'obfuscation="paraphrased"' in render_pan(report)
