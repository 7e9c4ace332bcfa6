"""The one index interface (coderiv.index.reader.IndexReader) and the one searcher registry
(coderiv.ranking.searchers): one index and a sharded one give the same answers through it, and
no module outside the index package asks which of the two it holds."""

from __future__ import annotations

import hashlib
import inspect
import re
from pathlib import Path

import pytest

import coderiv
from coderiv.errors import CoderivError
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.builder.stores import REPORT_READY_HINT, open_with_store
from coderiv.index.index import DocumentFacts, Index
from coderiv.index.reader import IndexReader, live_version, open_index, shard_count
from coderiv.index.shards import ShardedIndex, ShardView
from coderiv.overlap.verify import VerifiedSearcher
from coderiv.ranking.containment import ContainmentSearcher, chunk_store_spec
from coderiv.ranking.fingerprint_search import FingerprintSearcher
from coderiv.ranking.passage_windows import PassageSearcher
from coderiv.ranking.search import MeasureSearcher, Searcher
from coderiv.ranking.searchers import QUERY_METHODS, QueryMethod, QueryOptions, make_searcher, searcher_for
from coderiv.ranking.sharded import ShardedFingerprintSearcher, ShardedMeasureSearcher
from coderiv.ranking.sharded_containment import ShardedContainmentSearcher
from tests.support.files import write_docs

PACKAGE = Path(coderiv.__file__).parent

#: a.txt and c.txt hash to shard 1 of 2, b.txt, d.txt and e.txt to shard 0
DOCS = {
    "a.txt": "alpha beta gamma delta",
    "b.txt": "alpha beta the gamma",
    "c.txt": "gamma delta epsilon zeta eta",
    "d.txt": "alpha alpha beta",
    "e.txt": "zeta eta theta iota kappa lambda",
}
#: length in terms after analysis (stopwords dropped: "the")
LENGTHS = {"a.txt": 4, "b.txt": 3, "c.txt": 5, "d.txt": 3, "e.txt": 6}

#: a branch on shardedness: what only the index package may write
BRANCH = re.compile(r"\bis_sharded\(|isinstance\([^)]*\bSharded(Index|View)\b")


def shardedness_branches(root: Path) -> list[str]:
    """``file:line`` of every branch on shardedness in the modules below ``root`` outside
    ``index/``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "index":
            continue
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if BRANCH.search(line):
                found.append(f"{path.relative_to(root)}:{number}")
    return found


def test_no_module_outside_the_index_package_branches_on_shardedness() -> None:
    assert shardedness_branches(PACKAGE) == []


def test_the_branch_check_sees_a_branch(tmp_path: Path) -> None:
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "reader.py").write_text("if is_sharded(root):\n    pass\n")  # allowed there
    (tmp_path / "web.py").write_text("x = 1\nif isinstance(index, ShardedIndex):\n    pass\nok = is_sharded_name\n")
    (tmp_path / "cli.py").write_text("from coderiv.index.shards import is_sharded\nif is_sharded(path): pass\n")
    assert shardedness_branches(tmp_path) == ["cli.py:2", "web.py:2"]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[IndexReader, IndexReader]:
    """The collection as one index and as a sharded index of 2 shards (both with a chunk store)."""
    root = tmp_path_factory.mktemp("interface")
    source = write_docs(root / "docs", DOCS)
    Index.update_from(source, root / "one", stores=[chunk_store_spec()], workers=1)
    build_sharded(source, root / "many", 2, stores=[chunk_store_spec()], workers=1)
    return open_index(root / "one"), open_index(root / "many")


def test_open_index_decides_the_kind(both: tuple[IndexReader, IndexReader]) -> None:
    one, many = both
    assert type(one) is Index and type(many) is ShardedIndex
    assert sorted(len(s.doc_ids) for s in many.shards.values()) == [2, 3]  # type: ignore[attr-defined]
    assert shard_count(one.root) is None and shard_count(many.root) == 2
    assert one.version == live_version(one.root) == "gen-000001"
    assert many.version == live_version(many.root) == "set-000001"


def test_both_kinds_answer_the_same(both: tuple[IndexReader, IndexReader]) -> None:
    one, many = both
    ids = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]
    for reader in both:
        assert reader.n_docs == 5 and reader.doc_ids == ids
        assert reader.doc_numbers == {d: i for i, d in enumerate(ids)}
        assert [reader.number(d) for d in ids] == [0, 1, 2, 3, 4]
        for number, doc_id in enumerate(ids):
            sha = hashlib.sha256(DOCS[doc_id].encode("utf-8")).hexdigest()
            assert reader.facts(doc_id) == DocumentFacts(number, LENGTHS[doc_id], sha)
        assert reader.facts("nope.txt") is None
        with pytest.raises(CoderivError, match=r"^no document 'nope.txt' in the index$"):
            reader.number("nope.txt")
        assert sorted(reader.specs) == ["chunks:bits=32,n=5", "terms"]
        assert reader.source == str((one.root.parent / "docs").resolve())
        assert reader.source_texts().get(["c.txt"]) == {"c.txt": DOCS["c.txt"]}
        assert reader.info()["documents"] == 5
        assert reader.settings.to_dict() == one.settings.to_dict()
        assert reader.analyzer.terms(DOCS["b.txt"]) == ["alpha", "beta", "gamma"]
        assert reader.verify() == []


def test_pair_tables_belong_to_one_index_or_the_view(both: tuple[IndexReader, IndexReader]) -> None:
    one, many = both
    assert one.pairs_index() is one and one.stored_pairs_index() is one
    fresh = open_index(many.root)
    assert fresh.stored_pairs_index() is None  # nothing written before 'coderiv pairs'
    assert not (many.root / "pairs-view").exists()
    view = fresh.pairs_index()
    assert isinstance(view, ShardView) and view.doc_ids == one.doc_ids
    assert view.version == "set-000001" and fresh.pairs_index() is view
    assert open_index(many.root).stored_pairs_index() is not None  # written now: found by the next opener
    assert type(searcher_for(view, "ranking")) is ShardedMeasureSearcher  # the view searches as its shards


def test_dispatch_calls_the_kind_s_callback(both: tuple[IndexReader, IndexReader]) -> None:
    one, many = both
    assert one.dispatch(lambda i: ("one", i.n_docs), lambda s: ("many", s.k)) == ("one", 5)
    assert many.dispatch(lambda i: ("one", i.n_docs), lambda s: ("many", s.k)) == ("many", 2)


def test_open_with_store_adds_a_store_to_either_kind(tmp_path: Path) -> None:
    source = write_docs(tmp_path / "docs", DOCS)
    Index.update_from(source, tmp_path / "one", workers=1)
    build_sharded(source, tmp_path / "many", 2, workers=1)
    spec = chunk_store_spec()
    said: list[str] = []
    one = open_with_store(tmp_path / "one", spec, announce=said.append, workers=1)
    many = open_with_store(tmp_path / "many", spec, announce=said.append, workers=1)
    assert said == [
        f"adding store {spec.name} to the index (reading {source.resolve()} again); {REPORT_READY_HINT}",
        f"adding the {spec.name} store: rebuilding the 2 shards of {tmp_path / 'many'} from {source.resolve()}; "
        f"{REPORT_READY_HINT}",
    ]
    assert spec.name in one.specs and spec.name in many.specs and many.version == "set-000002"
    assert open_with_store(tmp_path / "one", spec, announce=said.append).version == one.version  # present: kept
    assert len(said) == 2


def test_the_registry_chooses_each_kind_s_searcher(both: tuple[IndexReader, IndexReader]) -> None:
    one, many = both
    kinds = {
        "ranking": (MeasureSearcher, ShardedMeasureSearcher),
        "fingerprint": None,  # the collection has no fingerprint store: see test_searchers
        "containment": (ContainmentSearcher, ShardedContainmentSearcher),
    }
    for method, pair in kinds.items():
        if pair is None:
            continue
        a, b = searcher_for(one, method), searcher_for(many, method)
        assert (type(a), type(b)) == pair
        ranked_a = a.rank(a.prepare_doc("a.txt"), None)
        ranked_b = b.rank(b.prepare_doc("a.txt"), None)
        assert ranked_a == ranked_b and ranked_a.matches[0].doc_id == "a.txt" and ranked_a.matches[0].percent == 100.0
    with pytest.raises(CoderivError, match=r"^--strategy and --full-query apply to --method fingerprint$"):
        make_searcher(many, "containment", QueryOptions(full_query=True))


def test_a_method_without_a_sharded_searcher_is_refused_there_in_one_line(both: tuple[IndexReader, IndexReader]) -> None:
    one, many = both
    QUERY_METHODS.add("bare", QueryMethod(lambda index, o: MeasureSearcher(index, o.measure)))
    try:
        assert type(searcher_for(one, "bare")) is MeasureSearcher
        with pytest.raises(CoderivError) as refused:
            searcher_for(many, "bare")
        assert str(refused.value) == "--method bare is not available on a sharded index; use containment, fingerprint or ranking"
    finally:
        del QUERY_METHODS["bare"]


@pytest.mark.parametrize("searcher", [
    MeasureSearcher, ContainmentSearcher, FingerprintSearcher, PassageSearcher, VerifiedSearcher,
    ShardedMeasureSearcher, ShardedFingerprintSearcher, ShardedContainmentSearcher,
])
def test_rank_takes_label_and_threshold_by_keyword(searcher: type) -> None:
    params = list(inspect.signature(searcher.rank).parameters.values())
    assert [p.name for p in params[:3]] == ["self", "prepared", "top"]
    assert params[3:] and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[3:])


def test_rank_by_measure_takes_label_and_threshold_by_keyword() -> None:
    params = list(inspect.signature(Searcher.rank).parameters.values())
    assert [p.name for p in params[:4]] == ["self", "prepared", "measure", "top"]
    assert params[4:] and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[4:])


def test_only_the_registry_asks_an_index_its_kind() -> None:
    users = sorted(
        "/".join(path.relative_to(PACKAGE).parts) for path in PACKAGE.rglob("*.py")
        if ".dispatch(" in path.read_text("utf-8") and path.relative_to(PACKAGE).parts[0] != "index"
    )
    assert users == ["ranking/searchers.py"]


def test_evaluation_takes_either_kind_and_refuses_what_only_one_index_has(both: tuple[IndexReader, IndexReader]) -> None:
    from coderiv.evaluation.evaluate import Topics
    from coderiv.evaluation.variants import evaluate_variants

    topics = Topics({"q1": "a.txt"}, {"q1": {"b.txt"}})
    one, many = both
    results = [evaluate_variants(reader, ["identity5", "containment"], [None], topics, keep_rankings=True) for reader in both]
    assert [r.to_dict(True) for r in results[0]] == [r.to_dict(True) for r in results[1]]
    assert results[0][1].rankings["q1"][0] == ("a.txt", 100.0)
    with pytest.raises(CoderivError) as refused:
        evaluate_variants(many, ["identity5"], ["stop"], topics)
    assert str(refused.value) == "--analysis builds variant indexes of a single index; a sharded index has none"
    from coderiv.evaluation.methods import get_method

    with pytest.raises(CoderivError) as refused:
        get_method("verified:identity5,top=3")(many)
    assert str(refused.value) == "method verified:identity5 is not available on a sharded index; use containment, fingerprint or ranking"
