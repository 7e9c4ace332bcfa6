"""Version lineage: hand-made version chains with known edits, dates, ties, the arborescence."""

from __future__ import annotations

import datetime as dt
import io
import itertools
import json
import os
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import coderiv.pairs.lineage as lineage_module
from coderiv import Index
from coderiv.cli.main import main
from coderiv.errors import CoderivError, InputError
from coderiv.pairs.arborescence import max_arborescence
from coderiv.pairs.dates import (
    DATES_FILE,
    DOCUMENT_DATE,
    FILE_TIME,
    DocDate,
    document_dates,
    read_dates_file,
    recorded_dates,
)
from coderiv.pairs.lineage import (
    DATES,
    ROOT,
    TEXT,
    TIE,
    Profile,
    calibration,
    containment_matrix,
    derive_lineage,
    index_lineages,
    text_confidence,
)
from coderiv.pairs.methods import get_method
from coderiv.pairs.run import run_pairs
from tests.support.files import write_docs
from tests.support.formats import docx_bytes

WORDS = ["".join(p) for p in itertools.product("bcdfghk", "aeiou", "lmnprst", "aeiou")]


def paragraph(number: int, length: int) -> list[str]:
    """``length`` words no other paragraph uses."""
    return WORDS[number * 60 : number * 60 + length]


A, B, C, D = paragraph(0, 40), paragraph(1, 20), paragraph(2, 30), paragraph(3, 10)
# v1 → v2 (adds B) → v3 (adds C); a branch v2 → v2a (adds D instead)
VERSIONS = {"v1": A, "v2": A + B, "v3": A + B + C, "v2a": A + B + D}


def profiles(versions: dict[str, list[str]] = VERSIONS) -> list[Profile]:
    return [Profile.from_terms(doc_id, terms) for doc_id, terms in versions.items()]


def day(n: int) -> DocDate:
    return DocDate(dt.datetime(2020, 1, n, tzinfo=dt.timezone.utc), DATES_FILE)


def test_chain_with_branch_from_text_alone() -> None:
    lineage = derive_lineage(profiles())
    assert lineage.parent_of() == {"v1": None, "v2": "v1", "v2a": "v2", "v3": "v2"}
    assert lineage.basis == TEXT
    links = {link.doc_id: link for link in lineage.links}
    assert links["v1"].basis == ROOT
    v2 = links["v2"]
    # chunks: v1 has 40-4 = 36, v2 has 60-4 = 56, all of v1's in v2
    assert v2.in_parent == pytest.approx(100 * 36 / 56)
    assert v2.parent_in == 100.0
    assert (v2.words_added, v2.words_removed) == (20, 0)
    # growth 1 - 36/56 = 0.357: the calibration's [0.2, 1] bin, under the cap of 64.3% containment
    assert v2.basis == TEXT and v2.confidence == calibration().growth_confidence[-1] < calibration().cap(64.3)
    assert (links["v3"].words_added, links["v2a"].words_added) == (30, 10)
    # v3 (86 chunks) holds all of v2's 56: closeness (56/86 + 1) / 2; the next best parent is v1
    # (weight (36/86 + 1)/2 + 0.25 × (1 − 36/86) beats v2a's (56/86 + 56/66)/2 + 0.25 × (56/66 − 56/86))
    assert links["v3"].closeness == pytest.approx(100 * (56 / 86 + 1) / 2)
    assert links["v3"].runner_up == ("v1", pytest.approx(100 * (36 / 86 + 1) / 2))
    assert [(depth, link.doc_id) for depth, link in lineage.preorder()] == [(0, "v1"), (1, "v2"), (2, "v2a"), (2, "v3")]


def test_shrinking_revision_is_read_as_older_without_dates_and_dates_override() -> None:
    versions = {"old": A + B + C, "new": A + B}  # the newer version lost paragraph C
    assert derive_lineage(profiles(versions)).parent_of() == {"new": None, "old": "new"}
    dated = derive_lineage(profiles(versions), {"old": day(1), "new": day(2)})
    assert dated.parent_of() == {"old": None, "new": "old"}
    link = next(link for link in dated.links if link.doc_id == "new")
    assert (link.basis, link.confidence, link.words_removed, link.date) == (DATES, 1.0, 30, day(2))
    assert dated.basis == DATES


def test_dates_reverse_the_whole_chain() -> None:
    dates = {"v3": day(1), "v2": day(2), "v1": day(3), "v2a": day(4)}
    lineage = derive_lineage(profiles(), dates)
    assert lineage.parent_of() == {"v3": None, "v2": "v3", "v1": "v2", "v2a": "v2"}
    assert {link.basis for link in lineage.links} == {ROOT, DATES}


def test_equal_dates_leave_the_order_to_the_text() -> None:
    same = {d: day(1) for d in VERSIONS}
    assert derive_lineage(profiles(), same).parent_of() == derive_lineage(profiles()).parent_of()


def test_partial_dates_mix_with_text() -> None:
    lineage = derive_lineage(profiles(), {"v1": day(1), "v2": day(2)})
    assert lineage.parent_of() == {"v1": None, "v2": "v1", "v2a": "v2", "v3": "v2"}
    assert {link.doc_id: link.basis for link in lineage.links} == {"v1": ROOT, "v2": DATES, "v2a": TEXT, "v3": TEXT}
    assert lineage.basis == "mixed"


def test_identical_copies_are_ties_and_dates_chain_them_in_order() -> None:
    versions = {"a": A, "b": A, "c": A}
    lineage = derive_lineage(profiles(versions))
    ties = [link for link in lineage.links if link.parent is not None]
    assert len(ties) == 2 and all(link.basis == TIE and link.confidence == 0.5 for link in ties)
    dated = derive_lineage(profiles(versions), {"c": day(1), "a": day(2), "b": day(3)})
    assert dated.parent_of() == {"c": None, "a": "c", "b": "a"}  # the latest earlier copy is the parent


def test_unrelated_documents_are_separate_roots() -> None:
    lineage = derive_lineage(profiles({"x": A, "y": C}))
    assert lineage.parent_of() == {"x": None, "y": None}


@settings(max_examples=30, deadline=None)
@given(st.permutations(list(VERSIONS)), st.booleans())
def test_input_order_does_not_matter(order: list[str], dated: bool) -> None:
    dates = {"v1": day(1), "v2": day(1), "v3": day(2)} if dated else None
    reference = derive_lineage(profiles(), dates).to_dict()
    assert derive_lineage([Profile.from_terms(d, VERSIONS[d]) for d in order], dates).to_dict() == reference


def test_text_confidence_is_the_shipped_calibration() -> None:
    table = calibration()
    assert "dev collection" in table.provenance and len(table.growth_confidence) == len(table.growth_edges) - 1
    # a tie is a coin flip; otherwise the bin of |growth|, capped by the bin of containment
    assert text_confidence(0.0) == 0.5
    assert text_confidence(0.005, 90.0) == text_confidence(-0.005, 90.0) == min(table.growth_confidence[0], table.cap(90.0))
    assert text_confidence(0.15, 70.0) == min(table.growth_confidence[4], table.containment_cap[3])
    # the cap never decreases with containment (isotonic), and no confidence reaches 0.85 any more
    assert list(table.containment_cap) == sorted(table.containment_cap)
    assert table.highest < 0.85


def test_a_low_containment_link_cannot_carry_a_high_confidence() -> None:
    """Issue 28 item 5: a link where only 13.2% of the child is in its parent had the tree's
    highest confidence (0.85). The child: 1,000 chunks, 132 of them the parent's 140; growth
    132/140 − 132/1000 = 0.81 orients parent → child, the strongest growth bin. The cap of
    containment below 20% holds it at most 0.5: on the dev collection 48% of such links are right."""
    parent = Profile("parent", np.arange(140, dtype=np.uint64), np.empty(0, np.uint64), np.empty(0, np.int64))
    child_chunks = np.concatenate([np.arange(132, dtype=np.uint64), np.arange(10_000, 10_868, dtype=np.uint64)])
    child = Profile("child", child_chunks, np.empty(0, np.uint64), np.empty(0, np.int64))
    (link,) = [link for link in derive_lineage([parent, child]).links if link.parent is not None]
    assert (link.doc_id, link.parent, link.basis) == ("child", "parent", TEXT)
    assert link.in_parent == pytest.approx(13.2)
    assert link.confidence == calibration().cap(13.2) <= 0.5


def test_a_text_only_tree_says_it_is_a_guess() -> None:
    from coderiv.pairs.lineage_output import lineage_text

    guessed = derive_lineage(profiles(), group=1)
    assert guessed.is_guess and guessed.to_dict()["order_is_a_guess"] is True
    assert lineage_text([guessed]).startswith("group 1: 4 documents; A GUESS: order inferred from the text alone (no dates)")
    dated = derive_lineage(profiles(), {"v1": day(1), "v2": day(2), "v3": day(3), "v2a": day(4)})
    assert not dated.is_guess and dated.to_dict()["order_is_a_guess"] is False


def test_containment_matrix() -> None:
    inside = containment_matrix([np.array([1, 2, 3, 4], np.uint64), np.array([3, 4], np.uint64), np.empty(0, np.uint64)])
    assert inside.tolist() == [[1.0, 0.5, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]


def brute_force_best(weights: np.ndarray) -> float:
    """Best total weight over every parent assignment that forms a tree under node 0."""
    n = len(weights)
    best = -np.inf
    for parents in itertools.product(range(n), repeat=n - 1):
        full = (-1, *parents)
        if any(p == v for v, p in enumerate(full)):
            continue
        ok = True
        for v in range(1, n):
            seen, node = set(), v
            while node != 0 and ok:
                ok = node not in seen
                seen.add(node)
                node = full[node]
        if ok:
            best = max(best, sum(weights[full[v], v] for v in range(1, n)))
    return float(best)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5).flatmap(lambda n: st.lists(st.sampled_from([-np.inf, 0.0, 0.3, 0.5, 1.0, 2.0]), min_size=n * n, max_size=n * n)))
def test_arborescence_is_maximum(values: list[float]) -> None:
    n = int(round(len(values) ** 0.5))
    weights = np.array(values).reshape(n, n)
    weights[0, 1:] = -100.0  # the root reaches everything
    parents = max_arborescence(weights, 0)
    assert parents[0] == -1
    for v in range(1, n):  # a tree: every node climbs to the root
        seen, node = set(), v
        while node != 0:
            assert node not in seen
            seen.add(node)
            node = int(parents[node])
    total = sum(weights[parents[v], v] for v in range(1, n))
    assert total == pytest.approx(brute_force_best(weights))


def test_arborescence_of_deeply_nested_cycles() -> None:
    n = 300  # 1 ⇄ 2 ⇄ 3 ⇄ …: about one contraction per node, deeper than the stack allowed here
    weights = np.full((n, n), -np.inf)
    weights[0, 1:] = -1e6
    weights[np.arange(1, n - 1), np.arange(2, n)] = 1.0
    weights[np.arange(2, n), np.arange(1, n - 1)] = 1.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)
    try:
        parents = max_arborescence(weights, 0)
    finally:
        sys.setrecursionlimit(limit)
    assert int((parents == 0).sum()) == 1  # one real root, then a path of n - 2 edges of weight 1
    assert sum(weights[parents[v], v] for v in range(1, n)) == -1e6 + n - 2


def test_arborescence_refuses_unreachable_nodes() -> None:
    with pytest.raises(ValueError):
        max_arborescence(np.array([[0.0, -np.inf], [1.0, 0.0]]), 0)


# -- dates file ------------------------------------------------------------------------------
def test_dates_file(tmp_path: Path) -> None:
    path = tmp_path / "dates.tsv"
    path.write_text("doc_id\tdate\n# comment\n\na.txt\t2024-03-01\nb.txt\t2024-03-01T12:30:00+02:00\nc.txt\t2024-03-02T00:00:00Z\n")
    dates = read_dates_file(path)
    assert dates["a.txt"] == DocDate(dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc), DATES_FILE)
    assert dates["b.txt"].when == dt.datetime(2024, 3, 1, 10, 30, tzinfo=dt.timezone.utc)
    assert dates["a.txt"].iso == "2024-03-01" and dates["c.txt"].iso == "2024-03-02"


@pytest.mark.parametrize(("text", "message"), [
    ("a.txt\tyesterday\n", "dates.tsv:1: 'yesterday' is not an ISO 8601 date"),
    ("a.txt 2024-01-01\n", "dates.tsv:1: expected 'doc_id<TAB>date'"),
    ("a.txt\t2024-01-01\na.txt\t2024-01-02\n", "dates.tsv:2: a.txt is given two different dates"),
    ("# nothing\n", "holds no dates"),
])
def test_bad_dates_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "dates.tsv"
    path.write_text(text)
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        read_dates_file(path)
    with pytest.raises(InputError, match="cannot read dates file"):
        read_dates_file(tmp_path / "missing.tsv")


# -- from an index and the command line -----------------------------------------------------------
@pytest.fixture
def versions_index(tmp_path: Path) -> Path:
    docs = {f"{name}.txt": " ".join(terms) for name, terms in VERSIONS.items()}
    docs["other.txt"] = " ".join(paragraph(5, 50))
    docs["other-copy.txt"] = " ".join(paragraph(5, 50) + paragraph(6, 5))
    write_docs(tmp_path / "c", docs)
    index_dir = tmp_path / "idx"
    Index.update_from(tmp_path / "c", index_dir, stores=[get_method("chunks").store])
    run_pairs(Index.open(index_dir), "chunks")
    return index_dir


def test_index_lineages(versions_index: Path) -> None:
    index = Index.open(versions_index)
    (lineage,) = index_lineages(index, doc_id="v3.txt")
    assert lineage.parent_of() == {"v1.txt": None, "v2.txt": "v1.txt", "v2a.txt": "v2.txt", "v3.txt": "v2.txt"}
    assert lineage.group == 1
    link = next(link for link in lineage.links if link.doc_id == "v2.txt")
    assert link.in_parent == pytest.approx(100 * 36 / 56) and (link.words_added, link.words_removed) == (20, 0)
    both = index_lineages(index, everything=True)
    assert [len(x.links) for x in both] == [4, 2]
    assert both[1].parent_of() == {"other.txt": None, "other-copy.txt": "other.txt"}
    assert index_lineages(index, group=2)[0].to_dict() == both[1].to_dict()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"doc_id": "nope.txt"}, "no document 'nope.txt'"),
    ({"group": 3}, "there is no group 3: 2 groups"),
    ({}, "give one of"),
    ({"doc_id": "v1.txt", "everything": True}, "give one of"),
])
def test_index_lineage_errors(versions_index: Path, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(CoderivError, match=message):
        index_lineages(Index.open(versions_index), **kwargs)  # type: ignore[arg-type]


def test_group_too_large(versions_index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lineage_module, "MAX_LINEAGE_DOCS", 3)
    with pytest.raises(CoderivError, match="group 1 has 4 documents, more than the 3 a lineage handles: raise --min"):
        index_lineages(Index.open(versions_index), everything=True)
    with pytest.raises(CoderivError, match="lineage of 4 documents at once: at most 3"):
        derive_lineage(profiles())


def test_document_without_coderivatives(tmp_path: Path) -> None:
    write_docs(tmp_path / "c", {"a.txt": " ".join(A), "b.txt": " ".join(C)})
    Index.update_from(tmp_path / "c", tmp_path / "idx", stores=[get_method("chunks").store])
    run_pairs(Index.open(tmp_path / "idx"), "chunks")
    with pytest.raises(CoderivError, match="a.txt has no coderivative at 50% or more"):
        index_lineages(Index.open(tmp_path / "idx"), doc_id="a.txt")


def test_cli_lineage(versions_index: Path, tmp_path: Path, runner: CliRunner) -> None:
    idx = str(versions_index)
    result = runner.invoke(main, ["lineage", "v1.txt", "--index", idx])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("group 1: 4 documents; A GUESS: order inferred from the text alone")
    assert [line.split("  ")[0] if not line.startswith(" ") else line.strip().split("  ")[0] for line in lines[1:]] == [
        "v1.txt", "v2.txt", "v2a.txt", "v3.txt"]
    assert lines[2].startswith("    v2.txt  [64.3% of it in its parent, 100.0% of the parent in it; +20 -0 words; text, confidence 0.68")

    dates = tmp_path / "dates.tsv"
    dates.write_text("v3.txt\t2020-01-01\nv2.txt\t2020-01-02\nv1.txt\t2020-01-03\nv2a.txt\t2020-01-04\ngone.txt\t2020-01-05\n")
    result = runner.invoke(main, ["lineage", "--group", "1", "--dates", str(dates), "--format", "json", "--index", idx])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "warning: the dates file names 1 documents not in the index, e.g. gone.txt" in result.stderr
    (lineage,) = data["lineages"]
    assert lineage["basis"] == "dates" and lineage["roots"] == ["v3.txt"]
    assert {d["doc_id"]: d["parent"] for d in lineage["documents"]} == {
        "v1.txt": "v2.txt", "v2.txt": "v3.txt", "v2a.txt": "v2.txt", "v3.txt": None}
    v1 = next(d for d in lineage["documents"] if d["doc_id"] == "v1.txt")
    assert v1["next_best_parent"] == {"doc_id": "v3.txt", "closeness": round(100 * (36 / 86 + 36 / 36) / 2, 4)}
    assert v1["date"] == {"date": "2020-01-03", "source": "dates file"} and v1["basis"] == "dates"

    png = tmp_path / "tree.png"
    result = runner.invoke(main, ["lineage", "--all", "--format", "dot", "--plot", str(png), "--index", idx])
    assert result.exit_code == 0, result.output
    assert '"v2.txt" -> "v3.txt"' in result.stdout and result.stdout.count("subgraph cluster_") == 2
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    result = runner.invoke(main, ["lineage", "--index", idx])
    assert result.exit_code == 1 and "give one of a document id, --group N or --all" in result.output


# -- modification times recorded at indexing ---------------------------------------------------
def test_file_times_are_recorded_and_order_when_asked(tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "c", {f"{name}.txt": " ".join(terms) for name, terms in VERSIONS.items()})
    for day_number, name in enumerate(["v3", "v2", "v1", "v2a"], 1):  # a history running backwards
        stamp = dt.datetime(2021, 5, day_number, 8, 0, 0, 700_000, tzinfo=dt.timezone.utc).timestamp()
        os.utime(folder / f"{name}.txt", (stamp, stamp))
    index_dir = tmp_path / "idx"
    Index.update_from(folder, index_dir, stores=[get_method("chunks").store])
    run_pairs(Index.open(index_dir), "chunks")
    index = Index.open(index_dir)
    recorded = recorded_dates(index)
    assert recorded["v1.txt"] == DocDate(dt.datetime(2021, 5, 3, 8, 0, 0, tzinfo=dt.timezone.utc), FILE_TIME)
    (by_text,) = index_lineages(index, group=1)
    assert by_text.parent_of()["v2.txt"] == "v1.txt"  # times unused unless asked for
    (by_time,) = index_lineages(index, group=1, file_times=True)
    assert by_time.parent_of() == {"v3.txt": None, "v2.txt": "v3.txt", "v1.txt": "v2.txt", "v2a.txt": "v2.txt"}
    assert {link.date.source for link in by_time.links if link.date} == {FILE_TIME}
    override = {"v1.txt": day(1)}  # a dates file wins: v1 becomes the earliest
    (mixed,) = index_lineages(index, group=1, file_times=True, dates=override)
    assert mixed.parent_of()["v1.txt"] is None


def test_tar_member_times_are_recorded(tmp_path: Path) -> None:
    archive = tmp_path / "c.tar"
    with tarfile.open(archive, "w") as tar:
        for number, (name, terms) in enumerate(VERSIONS.items()):
            data = " ".join(terms).encode()
            info = tarfile.TarInfo(f"{name}.txt")
            info.size, info.mtime = len(data), 1_600_000_000 + 86_400 * number
            tar.addfile(info, io.BytesIO(data))
    Index.update_from(archive, tmp_path / "idx")
    recorded = recorded_dates(Index.open(tmp_path / "idx"))
    assert recorded["v2.txt"].when == dt.datetime.fromtimestamp(1_600_086_400, dt.timezone.utc)


def test_index_without_recorded_times_still_opens(tmp_path: Path) -> None:
    write_docs(tmp_path / "c", {"a.txt": " ".join(A), "b.txt": " ".join(A + B)})
    Index.update_from(tmp_path / "c", tmp_path / "idx", stores=[get_method("chunks").store])
    generation = Index.open(tmp_path / "idx").generation
    manifest = json.loads((generation / "manifest.json").read_text())
    del manifest["files"]["doc_modified.npy"]  # as an index written before times were recorded
    (generation / "manifest.json").write_text(json.dumps(manifest))
    (generation / "doc_modified.npy").unlink()
    index = Index.open(tmp_path / "idx")
    assert index.doc_modified is None and recorded_dates(index) == {}
    assert index.verify() == []
    run_pairs(index, "chunks")
    result = CliRunner().invoke(main, ["lineage", "--all", "--file-times", "--index", str(tmp_path / "idx")])
    assert result.exit_code == 0 and "warning: this index records no modification times" in result.stderr
    assert "    b.txt  [" in result.stdout and "text, confidence 0.68]" in result.stdout


def test_creation_dates_inside_documents(tmp_path: Path, runner: CliRunner) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    for day_number, name in enumerate(["v3", "v2", "v1", "v2a"], 1):  # written in the reverse order
        created = dt.datetime(2021, 5, day_number, 8, 0)
        (folder / f"{name}.docx").write_bytes(docx_bytes(" ".join(VERSIONS[name]), created))
    idx = str(tmp_path / "idx")
    assert runner.invoke(main, ["index", str(folder), "--index", idx, "-q"]).exit_code == 0
    assert runner.invoke(main, ["pairs", "--index", idx, "-q"]).exit_code == 0
    index = Index.open(idx)
    assert document_dates(index, ["v1.docx", "nope.txt"]) == {
        "v1.docx": DocDate(dt.datetime(2021, 5, 3, 8, 0, tzinfo=dt.timezone.utc), DOCUMENT_DATE)}
    (by_text,) = index_lineages(index, group=1)
    assert by_text.parent_of()["v2.docx"] == "v1.docx"
    (inside,) = index_lineages(index, group=1, inside_dates=True)
    assert inside.parent_of() == {"v3.docx": None, "v2.docx": "v3.docx", "v1.docx": "v2.docx", "v2a.docx": "v2.docx"}
    result = runner.invoke(main, ["lineage", "v1.docx", "--document-dates", "--index", idx])
    assert result.exit_code == 0, result.output
    assert "  v3.docx  [root; 2021-05-01T08:00:00+00:00 (creation date in the document)]" in result.output
