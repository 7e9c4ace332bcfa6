"""Evaluation (SPEC §4): metrics on hand-made rankings, the method registry, qrels/run files,
analysis variants and the ``coderiv evaluate`` command on a tiny collection worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv import CoderivError, Index, StoreSpec, UnknownNameError
from coderiv.cli.main import main
from coderiv.errors import InputError
from coderiv.evaluation.evaluate import (
    RUN_TIE_GAP,
    MethodResult,
    QueryMetrics,
    Topics,
    evaluate_method,
    evaluate_run,
    query_metrics,
    read_qrels,
    read_queries,
    read_run,
    run_coverage_warning,
    run_scores,
    write_qrels,
    write_run,
)
from coderiv.evaluation.methods import EVALUATION_METHODS, METHOD_FAMILIES, expand_methods, get_method, register_family, register_method
from coderiv.evaluation.variants import expand_variants, variant_index, variant_path
from coderiv.ranking.measures import MEASURES
from tests.support.files import write_docs

T, F = True, False


# -- metrics on hand-made rankings ---------------------------------------------------------------
def test_negative_separation_when_relevant_and_false_interleave() -> None:
    # ranking: d0 100 (rel), d1 80 (rel), d3 50 (false), d2 30 (rel), d5 10 (false); d4 at 0%
    m = query_metrics("q", np.array([100, 80, 30, 50, 0, 10.0]), np.array([T, T, T, F, F, F]))
    assert m.relevant == 3 and m.returned == 5
    assert m.precision == pytest.approx(2 / 3)  # top 3 = d0, d1, d3: two relevant
    assert m.recall == 1.0  # 5 returned (< 20): all 3 relevant among them
    assert m.hfm == 50.0
    assert m.lowest_relevant == 30.0
    assert m.sep == -20.0  # 30 − 50
    assert m.relevant_percents == (100.0, 80.0, 30.0)


def test_papers_figure_1_example() -> None:
    # ten correct documents, the lowest at 40.93%; the first false match at 22.14%
    relevant_pct = [100, 95, 90, 85, 80, 70, 60, 55, 50, 40.93]
    pct = np.array(relevant_pct + [22.14, 20.0, 5.0])
    m = query_metrics("q", pct, np.array([T] * 10 + [F] * 3))
    assert (m.precision, m.recall) == (1.0, 1.0)
    assert m.hfm == 22.14
    assert m.sep == pytest.approx(18.79)  # 40.93 − 22.14
    assert MethodResult("x", [m]).ratio == pytest.approx(18.79 / 22.14)  # 0.85 in the paper


def test_ties_are_ranked_by_document_number() -> None:
    # d1 (false) and d2 (relevant) tie at 50%: d1 comes first, so the top s=2 is d0, d1
    m = query_metrics("q", np.array([100, 50, 50.0]), np.array([T, F, T]))
    assert m.precision == 0.5
    assert m.hfm == 50.0 and m.lowest_relevant == 50.0 and m.sep == 0.0
    # the same tie the other way round: d1 relevant, d2 false -> top 2 = d0, d1, both relevant
    m = query_metrics("q", np.array([100, 50, 50.0]), np.array([T, T, F]))
    assert m.precision == 1.0
    assert m.sep == 0.0


def test_fewer_than_20_scored_and_a_relevant_document_at_zero() -> None:
    # 25 documents; only d0 (100, rel), d2 (40, false), d3 (20, rel) score; d1 is relevant
    # but shares no term with the query (0%)
    pct = np.zeros(25)
    pct[[0, 2, 3]] = [100, 40, 20]
    rel = np.zeros(25, bool)
    rel[[0, 1, 3]] = True
    m = query_metrics("q", pct, rel)
    assert m.returned == 3
    assert m.precision == pytest.approx(2 / 3)  # top 3 = d0, d2, d3
    assert m.recall == pytest.approx(2 / 3)  # all 3 returned hold 2 of the 3 relevant
    assert m.hfm == 40.0
    assert m.lowest_relevant == 0.0
    assert m.sep == -40.0  # 0 − 40
    assert m.relevant_percents == (100.0, 20.0, 0.0)


def test_recall_is_cut_at_20() -> None:
    # d0 relevant at 100; twenty false documents at 90, 89, ..., 71; d21 relevant at 5
    pct = np.array([100.0] + [90.0 - i for i in range(20)] + [5.0])
    rel = np.array([T] + [F] * 20 + [T])
    m = query_metrics("q", pct, rel)
    assert m.recall == 0.5  # the top 20 = d0 and d1..d19: one of the two relevant
    assert m.precision == 0.5  # top 2 = d0, d1
    assert m.hfm == 90.0 and m.sep == -85.0  # 5 − 90


def test_relevant_documents_outside_the_candidates_count_at_zero() -> None:
    m = query_metrics("q", np.array([100, 10.0]), np.array([T, F]), unscored_relevant=1)
    assert m.relevant == 2
    assert (m.precision, m.recall) == (0.5, 0.5)  # top 2 = d0 (rel), d1 (false)
    assert m.lowest_relevant == 0.0 and m.sep == -10.0


def test_no_false_match_gives_hfm_zero_and_no_ratio() -> None:
    m = query_metrics("q", np.array([100, 60.0, 0.0]), np.array([T, T, F]))
    assert m.hfm == 0.0 and m.sep == 60.0
    assert MethodResult("x", [m]).ratio is None


def test_a_query_without_relevant_documents_is_an_error() -> None:
    with pytest.raises(CoderivError, match="no relevant"):
        query_metrics("q", np.array([100.0]), np.array([F]))


def test_ratio_is_mean_sep_over_mean_hfm() -> None:
    a = QueryMetrics("a", 1, 1, 1.0, 1.0, hfm=10.0, lowest_relevant=60.0)  # sep 50
    b = QueryMetrics("b", 2, 3, 0.5, 1.0, hfm=30.0, lowest_relevant=20.0)  # sep −10
    r = MethodResult("x", [a, b])
    assert r.precision == 0.75 and r.recall == 1.0
    assert r.hfm == 20.0  # (10 + 30) / 2
    assert r.sep == 20.0  # (50 − 10) / 2
    assert r.ratio == 1.0  # 20 / 20, not the mean of the ratios (5 − 1/3) / 2
    d = r.to_dict(per_query=True)
    assert d["sep_over_hfm"] == 1.0 and d["per_query"][1]["sep"] == -10.0


# Percentages as coderiv reports them: distinct values differ by far more than the tie resolution
# of the ranking (12 significant digits), so the laws below are about ranks, not float noise.
percent_lists = st.lists(st.floats(0, 150, allow_nan=False).map(lambda p: round(p, 6)), min_size=2, max_size=40)


@settings(max_examples=60, deadline=None)
@given(percent_lists, st.data())
def test_metric_laws(pct: list[float], data: st.DataObject) -> None:
    rel = np.array(data.draw(st.lists(st.booleans(), min_size=len(pct), max_size=len(pct))))
    if not rel.any():
        rel[0] = True
    m = query_metrics("q", np.array(pct), rel)
    assert 0.0 <= m.precision <= 1.0 and 0.0 <= m.recall <= 1.0
    assert m.hfm == max([0.0] + [p for p, r in zip(pct, rel) if not r])
    assert m.lowest_relevant == min(p for p, r in zip(pct, rel) if r)
    if m.sep > 0 and m.relevant <= 20:  # every relevant document above every false one
        assert m.precision == 1.0 and m.recall == 1.0


@settings(max_examples=40, deadline=None)
@given(percent_lists, st.data())
def test_a_written_run_reads_back_to_the_same_metrics(
    tmp_path_factory: pytest.TempPathFactory, pct: list[float], data: st.DataObject
) -> None:
    pct = [round(p, 6) for p in pct]
    rel = data.draw(st.lists(st.booleans(), min_size=len(pct), max_size=len(pct)))
    rel[0] = True
    ids = [f"d{i:03d}" for i in range(len(pct))]
    order = sorted((i for i in range(len(pct)) if pct[i] > 0), key=lambda i: (-pct[i], i))
    path = tmp_path_factory.mktemp("run") / "x.run"
    write_run(path, {"q": [(ids[i], pct[i]) for i in order]}, "x")
    tag, run = read_run(path)
    topics = Topics({"q": "d000"}, {"q": {d for d, r in zip(ids, rel) if r}})
    from_run = evaluate_run(run, topics, tag).queries[0]
    direct = query_metrics("q", np.array(pct), np.array(rel))
    assert (from_run.precision, from_run.recall) == (direct.precision, direct.recall)
    # tied scores are nudged apart in the file (run_scores), each by under its place in the tie
    # times RUN_TIE_GAP of the score (relative): under len · RUN_TIE_GAP · the largest percentage
    slack = len(pct) * RUN_TIE_GAP * max(pct)
    assert from_run.hfm == pytest.approx(direct.hfm, abs=slack) and from_run.sep == pytest.approx(direct.sep, abs=2 * slack)


# -- files ---------------------------------------------------------------------------------------
def test_reading_queries_and_both_qrels_formats(tmp_path: Path) -> None:
    (tmp_path / "q.tsv").write_text("# comment\nD01\ta/x.rst\n\nD02\tb/y.rst\n")
    assert read_queries(tmp_path / "q.tsv") == {"D01": "a/x.rst", "D02": "b/y.rst"}
    (tmp_path / "r.tsv").write_text("D01\ta/x.rst\t1\nD01\tc/x.rst\t1\nD02\tb/y.rst\t0\n")
    assert read_qrels(tmp_path / "r.tsv") == {"D01": {"a/x.rst", "c/x.rst"}, "D02": set()}
    (tmp_path / "r.trec").write_text("D01 0 a/x.rst 2\nD01 0 z 0\n")
    assert read_qrels(tmp_path / "r.trec") == {"D01": {"a/x.rst"}}
    write_qrels(tmp_path / "out.trec", {"D01": {"c", "a"}})
    assert (tmp_path / "out.trec").read_text() == "D01 0 a 1\nD01 0 c 1\n"


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("q.tsv", "D01\n", "expected 'query_id<TAB>doc_id'"),
        ("q.tsv", "D01\ta\nD01\tb\n", "given twice"),
        ("q.tsv", "\n", "no queries"),
        ("r.tsv", "D01\ta\tyes\n", "not an integer"),
        ("r.tsv", "D01 a\n", "expected 'qid docid rel'"),
        ("x.run", "D01 Q0 a 1 zz t\n", "not a number"),
        ("x.run", "D01 Q0 a 1 5 t\nD01 Q0 b 2 4 u\n", "several runs"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    reader = {"q.tsv": read_queries, "r.tsv": read_qrels, "x.run": read_run}[name]
    with pytest.raises(InputError, match=message):
        reader(tmp_path / name)


def test_read_run_orders_by_score_then_rank(tmp_path: Path) -> None:
    (tmp_path / "x.run").write_text("Q Q0 b 2 50 t\nQ Q0 c 3 50 t\nQ Q0 a 1 90 t\nQ Q0 b 4 10 t\n")
    assert read_run(tmp_path / "x.run") == ("t", {"Q": [("a", 90.0), ("b", 50.0), ("c", 50.0)]})


# -- the registry --------------------------------------------------------------------------------
def test_every_measure_is_registered_and_all_expands_to_them() -> None:
    assert set(MEASURES) <= set(EVALUATION_METHODS)
    assert expand_methods("all") == list(MEASURES)
    assert expand_methods("cosine, identity5,cosine") == ["cosine", "identity5"]
    with pytest.raises(UnknownNameError, match="method must be one of"):
        expand_methods("identity9")


def test_registered_method_and_family(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    register_method("fixed", lambda index: lambda doc: np.arange(index.n_docs, dtype=float))
    request.addfinalizer(lambda: EVALUATION_METHODS.pop("fixed"))
    with pytest.raises(ValueError, match="evaluation method 'fixed' is registered twice"):
        register_method("fixed", lambda index: lambda doc: np.zeros(index.n_docs))

    def family(params: str):
        if not params.startswith("ok"):
            raise UnknownNameError(f"bad params {params!r}")
        return lambda index: lambda doc: np.where(np.arange(index.n_docs) == index.doc_numbers[doc], 100.0, 0.0)

    register_family("self", family)
    request.addfinalizer(lambda: METHOD_FAMILIES.pop("self"))
    assert expand_methods("fixed,self:ok") == ["fixed", "self:ok"]
    # commas inside a family member's parameters stay with it
    assert expand_methods("self:ok,k=3,full,cosine,self:ok") == ["self:ok,k=3,full", "cosine", "self:ok"]
    index = _tiny_index(tmp_path)
    topics = Topics({"Q1": "q.txt"}, {"Q1": {"q.txt", "copy.txt", "far.txt"}})
    # "fixed" gives document number i the percentage i: q.txt (3) 3%, other.txt (2) 2%, far.txt (1) 1%
    m = evaluate_method(index, "fixed", topics).queries[0]
    assert (m.hfm, m.lowest_relevant) == (2.0, 0.0)  # copy.txt is number 0: 0%
    m = evaluate_method(index, "self:ok", topics).queries[0]
    assert m.precision == pytest.approx(1 / 3) and m.hfm == 0.0
    with pytest.raises(UnknownNameError, match="bad params"):
        get_method("self:nope")


# -- a tiny collection worked by hand ------------------------------------------------------------
# N = 4. Query q.txt = "the apple banana cherry"; with stopping its terms are apple (f_t = 3:
# q, copy, other), banana (2), cherry (2). identity5 self-score, L = 1 (f_d = f_q):
#   S(q,q) = 4/3 + 4/2 + 4/2 = 16/3.
# other.txt = "the apple durian elder" shares apple, f_dt = f_qt = 1, f_d = f_q = 3:
#   S = 4/3 -> 100 · (4/3)/(16/3) = 25%.
# Without stopping "the" (f_t = 3) counts too: S(q,q) = 4/3 + 4/3 + 2 + 2 = 20/3 and
#   S(q,other) = 4/3 + 4/3 = 8/3 -> 40%.
# far.txt shares no word (0%) but is judged relevant; copy.txt is a copy (100%).
DOCS = {
    "q.txt": "The apple banana cherry.",
    "copy.txt": "The apple banana cherry.",
    "other.txt": "The apple durian elder.",
    "far.txt": "Fig grape kiwi.",
}


def _tiny_index(tmp_path: Path) -> Index:
    write_docs(tmp_path / "docs", DOCS)
    Index.update_from(tmp_path / "docs", tmp_path / "idx")
    return Index.open(tmp_path / "idx")


def _topic_files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "queries.tsv").write_text("Q1\tq.txt\n")
    (tmp_path / "qrels.tsv").write_text("Q1\tq.txt\t1\nQ1\tcopy.txt\t1\nQ1\tfar.txt\t1\n")
    return str(tmp_path / "queries.tsv"), str(tmp_path / "qrels.tsv")


def test_identity5_on_the_tiny_collection(tmp_path: Path) -> None:
    index = _tiny_index(tmp_path)
    m = evaluate_method(index, "identity5", Topics({"Q1": "q.txt"}, {"Q1": {"q.txt", "copy.txt", "far.txt"}}), keep_rankings=True)
    q = m.queries[0]
    # ranking: copy.txt 100 (number 0), q.txt 100 (number 3), other.txt 25; far.txt not returned
    assert m.rankings["Q1"] == [("copy.txt", 100.0), ("q.txt", 100.0), ("other.txt", pytest.approx(25.0))]
    assert q.precision == pytest.approx(2 / 3) and q.recall == pytest.approx(2 / 3)
    assert q.hfm == pytest.approx(25.0)
    assert q.sep == pytest.approx(-25.0)  # far.txt at 0%


def test_variants_are_built_beside_the_index_and_reused(tmp_path: Path) -> None:
    index = _tiny_index(tmp_path)
    assert expand_variants("all") == ["none", "stop", "stem", "stop+stem"]
    with pytest.raises(UnknownNameError):
        expand_variants("stemmed")
    assert variant_index(index, "stop") is index  # the index's own analysis
    none = variant_index(index, "none")
    assert none.root == variant_path(index, "none") == tmp_path / "idx" / "variants" / "none"
    assert not none.settings.stop
    generation = none.generation
    assert variant_index(index, "none").generation == generation  # up to date: not rebuilt
    # the source changes and the main index is updated: the variant follows
    write_docs(tmp_path / "docs", {"new.txt": "Lemon mango."})
    Index.update_from(tmp_path / "docs", tmp_path / "idx")
    updated = variant_index(Index.open(tmp_path / "idx"), "none")
    assert "new.txt" in updated.doc_numbers and updated.generation != generation
    # a store added to the main index is added to the variant too
    chunks = StoreSpec.create("chunks")
    Index.update_from(tmp_path / "docs", tmp_path / "idx", stores=[chunks])
    assert chunks.name in variant_index(Index.open(tmp_path / "idx"), "none").specs


def test_cli_table_tsv_json_and_variants(tmp_path: Path, runner) -> None:
    _tiny_index(tmp_path)
    q, r = _topic_files(tmp_path)
    base = ["evaluate", "--index", str(tmp_path / "idx"), "--queries", q, "--qrels", r]
    out = runner.invoke(main, base + ["--format", "tsv"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == [
        "method\tqueries\tP(s)\tR(20)\tHFM\tSep.\tSep./HFM",
        "identity5\t1\t0.67\t0.67\t25.0000\t-25.0000\t-1.00",
    ]
    out = runner.invoke(main, base + ["--format", "json", "--per-query", "-m", "identity5"])
    data = json.loads(out.output)
    assert data[0]["per_query"][0]["returned"] == 3 and data[0]["hfm"] == pytest.approx(25.0)
    out = runner.invoke(main, base + ["--per-query", "-m", "identity5"])
    assert out.output.splitlines()[2].split() == ["identity5", "Q1", "3", "3", "0.67", "0.67", "25.00%", "0.00%", "-25.00%"]
    out = runner.invoke(main, base + ["--analysis", "all", "-q"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    # "the" matters only without stopping: HFM 40% (none, stem), 25% (stop, stop+stem)
    assert [line.split()[0] for line in lines[2:6]] == [
        "identity5@none", "identity5@stop", "identity5@stem", "identity5@stop+stem"]
    assert [line.split()[4] for line in lines[2:6]] == ["40.00%", "25.00%", "40.00%", "25.00%"]
    assert lines[6:] == LEGEND_LINES  # each column explained under the table
    assert (tmp_path / "idx" / "variants" / "stop-stem").is_dir()


def test_cli_runs_round_trip_and_plot(tmp_path: Path, runner) -> None:
    _tiny_index(tmp_path)
    q, r = _topic_files(tmp_path)
    base = ["evaluate", "--queries", q, "--qrels", r, "--format", "tsv"]
    direct = runner.invoke(main, base + ["--index", str(tmp_path / "idx"), "-m", "identity5,cosine",
                                         "--runs", str(tmp_path / "runs"), "--plot", str(tmp_path / "p.png")])
    assert direct.exit_code == 0, direct.output
    assert (tmp_path / "runs" / "identity5.run").read_text().splitlines() == [
        "Q1 Q0 copy.txt 1 100 identity5", "Q1 Q0 q.txt 2 99.999975 identity5", "Q1 Q0 other.txt 3 25 identity5"]
    assert (tmp_path / "runs" / "qrels.trec").read_text().count("\n") == 3
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = runner.invoke(main, base + ["--from-run", str(tmp_path / "runs" / "identity5.run"),
                                        "--from-run", str(tmp_path / "runs" / "cosine.run")])
    assert again.exit_code == 0, again.output
    assert again.output == direct.output


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "give --queries FILE and --qrels FILE"),
        (["QR", "-m", "identity9"], "method must be one of"),
        (["QR", "--analysis", "stemmed"], "analysis must be"),
        (["QR", "--plot", "PLOT.xyz"], "cannot write the plot"),
        (["BADQ"], "not in the index"),
        (["QR", "--from-run", "RUN", "-m", "cosine"], "cannot be combined"),
    ],
)
def test_cli_errors_are_one_line(tmp_path: Path, runner, extra: list[str], message: str) -> None:
    _tiny_index(tmp_path)
    q, r = _topic_files(tmp_path)
    (tmp_path / "bad.tsv").write_text("Q1\tmissing.txt\n")
    args = ["evaluate", "--index", str(tmp_path / "idx")]
    for item in extra:
        if item == "QR":
            args += ["--queries", q, "--qrels", r]
        elif item == "BADQ":
            args += ["--queries", str(tmp_path / "bad.tsv"), "--qrels", r]
        else:
            args.append(item.replace("PLOT", str(tmp_path / "plot")).replace("RUN", str(tmp_path / "queries.tsv")))
    out = runner.invoke(main, args)
    assert out.exit_code == 1
    assert message in out.output and "Traceback" not in out.output


def test_cli_marks_a_non_ideal_hfm_above_100(tmp_path: Path, runner) -> None:
    # inner: S(q,d) = Σ (1 + ln f_dt) · w_t. The query has alpha and beta once: self-score
    # w_alpha + w_beta. noise.txt has each three times: (1 + ln 3) times that, 209.86%.
    write_docs(tmp_path / "docs", {"q.txt": "alpha beta", "noise.txt": "alpha alpha alpha beta beta beta", "z.txt": "gamma"})
    Index.update_from(tmp_path / "docs", tmp_path / "idx")
    (tmp_path / "queries.tsv").write_text("Q1\tq.txt\n")
    (tmp_path / "qrels.tsv").write_text("Q1\tq.txt\t1\n")
    base = ["evaluate", "--index", str(tmp_path / "idx"), "--queries", str(tmp_path / "queries.tsv"),
            "--qrels", str(tmp_path / "qrels.tsv")]
    out = runner.invoke(main, [*base, "-m", "inner,identity5"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[2].split()[4:6] == ["209.86%*", "-109.86%"]  # HFM, Sep. = 100 − 209.86
    # identity5 (N = 3, f_t = 2): self-score 3/2 + 3/2 = 3; noise.txt: L = 1/(1 + ln(1 + |6 − 2|))
    # times 2 · (3/2)/(1 + 2) = 1, so 100 · 0.38323 / 3 = 12.77%
    assert lines[3].split()[4:6] == ["12.77%", "87.23%"]
    assert lines[4:] == [*LEGEND_LINES,
        "* above 100%: inner is not ideal: a document holding the query's terms more often than the "
        "query does scores above the query itself (docs/measures.md)"
    ]
    # nothing above 100%: no note
    assert "above 100%" not in runner.invoke(main, [*base, "-m", "identity5"]).output


def test_cli_note_explains_only_the_marks_figures_carry(tmp_path: Path, runner) -> None:
    """Issue 28 item 9: ``-m all`` explained normalized's way past 100% under a table where only
    inner's figure passed it. Here noise.txt is long (inner does not divide by length:
    209.86% as above; normalized does: below 100%), so only inner's reason is printed."""
    long_noise = "alpha alpha alpha beta beta beta " + " ".join(f"filler{i}" for i in range(30))
    write_docs(tmp_path / "docs", {"q.txt": "alpha beta", "noise.txt": long_noise, "z.txt": "gamma"})
    Index.update_from(tmp_path / "docs", tmp_path / "idx")
    (tmp_path / "queries.tsv").write_text("Q1\tq.txt\n")
    (tmp_path / "qrels.tsv").write_text("Q1\tq.txt\t1\n")
    out = runner.invoke(main, ["evaluate", "--index", str(tmp_path / "idx"), "--queries", str(tmp_path / "queries.tsv"),
                               "--qrels", str(tmp_path / "qrels.tsv"), "-m", "inner,normalized"])
    lines = out.output.splitlines()
    assert lines[2].split()[4] == "209.86%*"
    assert lines[3].split()[0] == "normalized" and "*" not in lines[3]
    assert lines[4:] == [*LEGEND_LINES,
        "* above 100%: inner is not ideal: a document holding the query's terms more often than the "
        "query does scores above the query itself (docs/measures.md)"
    ]


#: The legend under a summary table: one line per column (SPEC §4).
LEGEND_LINES = [
    "P(s): share of the top s that are relevant (R-precision)",
    "R(20): share of the relevant documents in the top 20",
    "HFM: highest false match, the highest percentage of a non-relevant document",
    "Sep.: separation, lowest relevant percentage - HFM (negative: they interleave)",
    "Sep./HFM: mean Sep. / mean HFM (higher is better)",
]


def test_run_scores_keep_coderivs_order_for_trec_eval() -> None:
    # distinct percentages stay as they are (rounded to 8 decimals); a tie is nudged apart by
    # RUN_TIE_GAP relative to the previous score, so every score is strictly below the last
    assert run_scores([100.0, 100.0, 100.0, 40.123456789, 25.0, 25.0]) == [
        100.0, 100 * (1 - 2.5e-7), 100 * (1 - 2.5e-7) ** 2, 40.12345679, 25.0, 25 * (1 - 2.5e-7)]
    assert run_scores([]) == []


def test_trec_eval_ranks_a_written_run_as_coderiv_does(tmp_path: Path) -> None:
    # copy.txt and q.txt tie at 100% on the tiny collection; coderiv puts copy.txt first (id
    # ascending), trec_eval would put q.txt first (docno descending) if the scores were equal.
    pytrec_eval = pytest.importorskip("pytrec_eval")
    index = _tiny_index(tmp_path)
    qrels = {"Q1": {"copy.txt"}}
    result = evaluate_method(index, "identity5", Topics({"Q1": "q.txt"}, qrels), keep_rankings=True)
    assert [d for d, _ in result.rankings["Q1"]] == ["copy.txt", "q.txt", "other.txt"]
    assert result.queries[0].precision == 1.0  # s = 1: the top document, copy.txt, is relevant
    write_run(tmp_path / "x.run", result.rankings, "x")
    run: dict[str, dict[str, float]] = {}
    for line in (tmp_path / "x.run").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    evaluator = pytrec_eval.RelevanceEvaluator({"Q1": {"copy.txt": 1}}, {"Rprec", "P_1"})
    assert evaluator.evaluate(run)["Q1"] == {"Rprec": 1.0, "P_1": 1.0}
    # with the percentages as they are (the tie left in), trec_eval ranks q.txt first
    tied = {"Q1": {doc: pct for doc, pct in result.rankings["Q1"]}}
    assert evaluator.evaluate(tied)["Q1"] == {"Rprec": 0.0, "P_1": 0.0}


def test_a_run_covering_some_queries_is_said(tmp_path: Path, runner) -> None:
    (tmp_path / "q.tsv").write_text("Q1\ta.txt\nQ2\tb.txt\n")
    (tmp_path / "r.tsv").write_text("Q1\ta.txt\t1\nQ2\tb.txt\t1\n")
    (tmp_path / "x.run").write_text("Q1 Q0 a.txt 1 100 x\n")
    topics = Topics.read(tmp_path / "q.tsv", tmp_path / "r.tsv")
    _, run = read_run(tmp_path / "x.run")
    assert run_coverage_warning(run, topics, "x") == (
        "run x covers 1 of 2 queries: the 1 missing count as returning nothing, and the averages are over all 2"
    )
    assert run_coverage_warning({"Q1": [("a.txt", 1.0)], "Q2": [("b.txt", 1.0)]}, topics, "x") is None
    out = runner.invoke(main, ["evaluate", "--queries", str(tmp_path / "q.tsv"), "--qrels", str(tmp_path / "r.tsv"),
                               "--from-run", str(tmp_path / "x.run"), "--format", "tsv"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == [
        "warning: run x covers 1 of 2 queries: the 1 missing count as returning nothing, and the averages are over all 2",
        "method\tqueries\tP(s)\tR(20)\tHFM\tSep.\tSep./HFM",
        "x\t2\t0.50\t0.50\t0.0000\t50.0000\tn/a",  # Q1: P = 1, Sep. 100; Q2: nothing, Sep. 0
    ]
