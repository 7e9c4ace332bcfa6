"""Fingerprints (SPEC §5): the minutia hash by hand, every strategy on hand-made documents, the
store inside the index (built, updated, queried), exact percentages, CLI and evaluation."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv import FingerprintSearcher, Index, StoreSpec
from coderiv.cli.main import main
from coderiv.errors import CoderivError, InputError, UnknownNameError
from coderiv.evaluation.methods import get_method
from coderiv.index.format.postings import from_forward
from coderiv.keys.fingerprint import (
    ANCHORS,
    STRATEGIES,
    Phrases,
    fingerprint_function,
    minutia_hash,
    parse_fingerprint,
    phrases_of,
    span_hashes,
)
from coderiv.ranking.fingerprint_search import fingerprint_stores, rarest_keys, rarest_selection
from coderiv.text.analysis import AnalysisSettings, AnalyzedDocument, Analyzer
from tests.support.files import write_docs

RAW = Analyzer(AnalysisSettings(stop=False))


def doc(*terms: str) -> AnalyzedDocument:
    return AnalyzedDocument(list(terms), [0] if terms else [], [0] if terms else [])


def fp(d: AnalyzedDocument, strategy: str, **params: object) -> list[int]:
    return fingerprint_function({"strategy": strategy, **params})(d).tolist()


def mins(*phrases: str) -> list[int]:
    return sorted({minutia_hash(p) for p in phrases})


# -- the minutia hash ---------------------------------------------------------------------------
def test_minutia_hash_by_hand() -> None:
    assert minutia_hash("") == 0
    assert minutia_hash("a") == 0 ^ (97 + (0 << 6) + (0 >> 2)) == 97
    # 'b' = 98: 97 ^ (98 + 6208 + 24) = 97 ^ 6330 = 0b1100001 ^ 0b1100010111010 = 6363
    assert minutia_hash("ab") == 97 ^ (98 + (97 << 6) + (97 >> 2)) == 6363
    # 'c' = 99: 6363 ^ (99 + 407232 + 1590) = 0x018DB ^ 0x63D59 = 0x62582
    assert minutia_hash("abc") == 6363 ^ (99 + (6363 << 6) + (6363 >> 2)) == 0x62582 == 402818
    assert minutia_hash("é") == 233  # A(c) is the code point
    assert minutia_hash("ab", m=100) == 63  # 6363 mod 100


def test_minutia_hash_wraps_at_32_bits() -> None:
    # after "zzzzz" h is 2^31 or more, so h << 6 overflows: the result stays below 2^32
    h = 0
    for c in "zzzzzzzz":
        h = h ^ ((ord(c) + h * 64 + h // 4) % 2**32)
    assert h >= 2**20
    assert minutia_hash("zzzzzzzz") == h < 2**32


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30), max_size=90))
@settings(max_examples=60, deadline=None)
def test_vectorized_hash_equals_reference(strings: list[str]) -> None:
    # more than 32 spans exercise the array path, the last few long ones the scalar path
    text = "".join(strings)
    codes = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    ends = np.cumsum([len(s) for s in strings]).astype(np.int64)
    begins = ends - np.array([len(s) for s in strings], np.int64)
    assert span_hashes(codes, begins, ends).tolist() == [minutia_hash(s) for s in strings]


def test_phrases_of_are_shared_between_stores_of_one_granularity() -> None:
    d = doc("aa", "bb", "cc")
    assert phrases_of(d, 2) is phrases_of(d, 2)
    assert phrases_of(d, 3) is not phrases_of(d, 2)
    assert phrases_of(doc("aa", "bb", "cc"), 2) is not phrases_of(d, 2)  # equal terms, other document


def test_phrases_are_g_terms_joined_by_one_space() -> None:
    p = Phrases(doc("aa", "bb", "cc", "dd", "ee"), g=3)
    assert p.n_phrases == 3  # 5 − 3 + 1
    assert p.all_minutiae.tolist() == [minutia_hash(s) for s in ("aa bb cc", "bb cc dd", "cc dd ee")]
    short = Phrases(doc("aa", "bb"), g=3)  # shorter than g: one phrase of all its terms
    assert short.all_minutiae.tolist() == [minutia_hash("aa bb")]
    assert Phrases(doc(), g=3).n_phrases == 0


# -- the strategies -----------------------------------------------------------------------------
TEN = doc(*[f"w{i}" for i in range(10)])  # w0 … w9; with g = 3 phrases start at 0 … 7


def test_positional_strategies() -> None:
    assert fp(TEN, "full", g=3) == mins(*[f"w{i} w{i + 1} w{i + 2}" for i in range(8)])
    # non-overlapping at 0, 3, 6 (a phrase at 9 would have one word)
    assert fp(TEN, "all-substrings", g=3) == mins("w0 w1 w2", "w3 w4 w5", "w6 w7 w8")
    assert fp(TEN, "first-r", g=3, r=2) == mins("w0 w1 w2", "w3 w4 w5")
    assert fp(TEN, "first-r-sliding", g=3, r=2) == mins("w0 w1 w2", "w1 w2 w3")
    assert fp(TEN, "first-r-sliding", g=3, r=15) == fp(TEN, "full", g=3)  # r > phrases: all of them


def test_random_is_reproducible_and_draws_r_phrases() -> None:
    first = fp(TEN, "random", g=3, r=4)
    assert first == fp(TEN, "random", g=3, r=4)
    assert len(first) == 4 and set(first) <= set(fp(TEN, "full", g=3))
    assert fp(TEN, "random", g=3, r=50) == fp(TEN, "full", g=3)
    draws = {tuple(fp(TEN, "random", g=3, r=2, seed=s)) for s in range(12)}
    assert len(draws) > 1  # the seed parameter changes the draw


def test_frequency_strategies() -> None:
    # one-letter words with g = 1: a phrase's minutia is its code point (x = 120, y = 121, z = 122)
    xyz = doc("x", "y", "x", "z")
    assert fp(xyz, "rarest-in-document", g=1, r=2) == [121, 122]  # y, z once each; x twice
    assert fp(xyz, "rarest-in-document", g=1, r=3) == [120, 121, 122]
    assert fp(doc("d", "b", "c", "b"), "lowest-hash", g=1, r=2) == [98, 99]
    # prefixes (p = 3): app ×2, ban, che, ape ×1 → order ape, ban, che (count 1, then prefix)
    fruit = doc("apple", "apply", "banana", "cherry", "apex")
    assert fp(fruit, "rarest-prefix", g=1, r=2) == mins("apex", "banana")
    assert fp(fruit, "rarest-prefix", g=1, r=4) == mins("apex", "banana", "cherry", "apple")


@given(st.lists(st.sampled_from(["st", "start", "s", "an", "x", "xan", "wh", "whé", "é", "th", "it", "ag1"]), max_size=20))
@settings(max_examples=60, deadline=None)
def test_anchor_selects_words_starting_with_an_anchor(terms: list[str]) -> None:
    starts = [i for i, t in enumerate(terms) if t[:2] in ANCHORS and i <= len(terms) - 2]
    expected = sorted({minutia_hash(" ".join(terms[i : i + 2])) for i in starts})
    if len(terms) == 1 and terms[0][:2] in ANCHORS:  # a one-term document is one phrase
        expected = [minutia_hash(terms[0])]
    assert fp(doc(*terms), "anchor", g=2) == expected


def test_anchor_strategy() -> None:
    assert {"th", "it"}.isdisjoint(ANCHORS) and len(set(ANCHORS)) == 35
    assert {"st", "an"} <= set(ANCHORS) and "zz" not in ANCHORS and "qq" not in ANCHORS
    d = doc("start", "zzz", "qq", "anchor", "yy", "xx")
    assert fp(d, "anchor", g=2) == mins("start zzz", "anchor yy")
    assert fp(doc("zz", "start"), "anchor", g=2) == []  # phrases start at 0 only: "start" is last


def test_structure_strategies() -> None:
    d = RAW.analyze("One two three. Four five. Six.\n\nSeven eight nine ten.")
    assert d.sentence_starts == [0, 3, 5, 6] and d.paragraph_starts == [0, 6]
    # 2nd word of each sentence with two or more: two, five, eight (g = 2; phrases cross sentences)
    assert fp(d, "kth-in-sentence", g=2, k=2) == mins("two three", "five six", "eight nine")
    # sentences 1, 3 start at "one" and "six"
    assert fp(d, "kth-sentence", g=2, k=2) == mins("one two", "six seven")
    # 3rd word of each paragraph: three, nine
    assert fp(d, "kth-in-paragraph", g=2, k=3) == mins("three four", "nine ten")


def test_hashed_breakpoints() -> None:
    # k = 2: a phrase ends after a word whose hash (a = 97, b = 98) is even, i.e. after each b
    d = doc("a", "b", "a", "a", "b", "a")
    assert fp(d, "hashed-breakpoints", g=3, k=2) == mins("a b", "a a b", "a")
    spec = StoreSpec.create("fingerprint", strategy="hashed-breakpoints", g=3)
    assert spec.param_dict["k"] == 3  # k defaults to g: phrases of g words on average


def test_winnowing_by_hand() -> None:
    d = doc("d", "a", "c", "b", "e")  # g = 1: hashes 100, 97, 99, 98, 101
    # windows of 3: (100 97 99) (97 99 98) (99 98 101) → minima 97, 97, 98
    assert fp(d, "winnowing", g=1, w=3) == [97, 98]
    assert fp(d, "winnowing", g=1, w=9) == [97]  # fewer phrases than w: one window


words = st.lists(st.sampled_from([f"t{i}" for i in range(40)]), min_size=0, max_size=25)


@given(words, words, st.lists(st.sampled_from([f"t{i}" for i in range(40)]), min_size=7, max_size=12))
@settings(max_examples=80, deadline=None)
def test_winnowing_guarantee(left: list[str], right: list[str], shared: list[str]) -> None:
    # a run of at least w + g − 1 = 4 + 3 − 1 = 6 shared words always yields a shared minutia
    a = fp(doc(*left, *shared), "winnowing", g=3, w=4)
    b = fp(doc(*shared, *right), "winnowing", g=3, w=4)
    assert set(a) & set(b)


@given(st.sampled_from(sorted(STRATEGIES)), words)
@settings(max_examples=80, deadline=None)
def test_every_strategy_picks_minutiae_of_the_document(name: str, terms: list[str]) -> None:
    d = doc(*terms)
    chosen = fp(d, name, g=2)
    assert chosen == sorted(set(chosen))
    if name != "hashed-breakpoints":  # its phrases have variable length
        assert set(chosen) <= set(fp(d, "full", g=2))
    assert fp(d, name, g=2) == chosen  # deterministic


# -- store parameters ---------------------------------------------------------------------------
def test_store_names_list_exactly_the_strategy_parameters() -> None:
    assert StoreSpec.create("fingerprint", strategy="anchor", g=4).name == "fingerprint:g=4,strategy=anchor"
    assert StoreSpec.create("fingerprint").name == "fingerprint:g=4,strategy=anchor"
    assert parse_fingerprint("first-r-sliding:g=4").name == "fingerprint:g=4,r=15,strategy=first-r-sliding"
    assert parse_fingerprint("first-r-sliding:g=4,r=15") == parse_fingerprint("first-r-sliding:g=4:r=15")
    assert parse_fingerprint("fingerprint:g=4,strategy=anchor") == parse_fingerprint("anchor")
    assert parse_fingerprint("anchor:m=1000").name == "fingerprint:g=4,m=1000,strategy=anchor"
    assert parse_fingerprint("anchor:m=4294967296").name == "fingerprint:g=4,strategy=anchor"


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("anchr", UnknownNameError, "strategy must be one of"),
        ("anchor:r=15", InputError, "strategy anchor takes parameters ['g', 'm'] (got r)"),
        ("anchor:g=0", InputError, "g must be at least 1"),
        ("anchor:g=x", InputError, "g must be an integer"),
        ("anchor:g", InputError, "expected KEY=VALUE"),
        ("anchor:m=1", InputError, "m must be in 2..2**32"),
    ],
)
def test_bad_store_parameters(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        parse_fingerprint(text)


# -- rarest in collection -----------------------------------------------------------------------
def test_rarest_keys_and_selection() -> None:
    keys = np.array([5, 7, 9, 11], np.uint64)
    # by df: 11 (0), then 7 and 9 (1 each; the tie goes to the smaller key 7)
    assert rarest_keys(keys, np.array([3, 1, 1, 0]), 2).tolist() == [7, 11]
    assert rarest_keys(keys, np.array([3, 1, 1, 2]), 2).tolist() == [7, 9]
    one = np.ones
    pool = from_forward([
        (np.array([1, 2, 3], np.uint64), one(3, np.int32)),  # df: 1→3, 2→2, 3→1
        (np.array([1, 2], np.uint64), one(2, np.int32)),
        (np.array([1, 4], np.uint64), one(2, np.int32)),  # df: 4→1
    ])
    two = rarest_selection(pool, 2)
    assert [two.doc_keys(d)[0].tolist() for d in range(3)] == [[2, 3], [1, 2], [1, 4]]
    one_each = rarest_selection(pool, 1)  # doc 0: 3 (df 1); doc 1: 2 (df 2 < 3); doc 2: 4 (df 1)
    assert [one_each.doc_keys(d)[0].tolist() for d in range(3)] == [[3], [2], [4]]
    assert one_each.doc_freqs.tolist() == [1, 1, 1]  # keys 2, 3, 4: each chosen by one document


# -- the index and queries ----------------------------------------------------------------------
DOCS = {
    "a.txt": "alpha beta gamma delta",
    "b.txt": "alpha beta gamma epsilon",
    "c.txt": "zeta eta theta iota",
}


@pytest.fixture
def full_index(tmp_path):
    write_docs(tmp_path / "docs", DOCS)
    Index.update_from(tmp_path / "docs", tmp_path / "idx", stores=[parse_fingerprint("full:g=2")], workers=1)
    return Index.open(tmp_path / "idx")


def test_shared_minutiae_and_percentages(full_index: Index) -> None:
    searcher = FingerprintSearcher(full_index)  # the only fingerprint store
    # a: {alpha beta, beta gamma, gamma delta}; b shares the first two; c none → 3/3, 2/3
    result = searcher.rank(searcher.prepare_doc("a.txt"))
    assert [(m.doc_id, m.score, m.percent) for m in result.matches] == [
        ("a.txt", 3.0, 100.0), ("b.txt", 2.0, pytest.approx(200 / 3)),
    ]
    assert result.self_score == 3 and result.measure == "fingerprint:g=2,strategy=full"
    text = searcher.search("Alpha beta: gamma! Omega.")  # alpha beta, beta gamma, gamma omega
    assert [(m.doc_id, m.score, m.percent) for m in text.matches] == [
        ("a.txt", 2.0, pytest.approx(200 / 3)), ("b.txt", 2.0, pytest.approx(200 / 3)),
    ]
    assert (text.query_terms, text.matched_terms) == (3, 2)  # omega's phrase is in no document
    at_least = searcher.rank(searcher.prepare_doc("a.txt"), top=None, min_percent=70)
    assert [m.doc_id for m in at_least.matches] == ["a.txt"]  # b's 66.7% is below 70%
    assert len(searcher.rank(searcher.prepare_doc("a.txt"), min_percent=66.6).matches) == 2
    empty = searcher.search("!!!")
    assert empty.matches == [] and empty.self_score == 0 and "empty" in (empty.note or "")


def test_full_query_self_score_is_the_stored_fingerprint(tmp_path) -> None:
    write_docs(tmp_path / "docs", {
        "a.txt": "start zzz qq anchor yy xx",  # anchor phrases (g = 2): start zzz, anchor yy
        "b.txt": "qq anchor yy xx",  # anchor yy
        "c.txt": "zzz qq anchor",
    })
    Index.update_from(tmp_path / "docs", tmp_path / "idx", stores=[parse_fingerprint("anchor:g=2")], workers=1)
    index = Index.open(tmp_path / "idx")
    plain = FingerprintSearcher(index, "anchor").rank(FingerprintSearcher(index, "anchor").prepare_doc("a.txt"))
    assert [(m.doc_id, m.percent) for m in plain.matches] == [("a.txt", 100.0), ("b.txt", 50.0)]
    full = FingerprintSearcher(index, "anchor", full_query=True)
    # full query of a: 5 phrases; S(q,q) = |F_full(a) ∩ F_anchor(a)| = 2
    for prepared in (full.prepare_doc("a.txt"), full.prepare("start zzz qq anchor yy xx")):
        assert len(prepared.keys) == 5 and prepared.self_score == 2
        result = full.rank(prepared)
        assert [(m.doc_id, m.percent) for m in result.matches] == [("a.txt", 100.0), ("b.txt", 50.0)]
    # b as a full query: qq anchor, anchor yy, yy xx; S = |{anchor yy}| = 1; a holds it too
    assert full.percentages(full.prepare_doc("b.txt")).tolist() == [100.0, 100.0, 0.0]
    # the full query of an indexed document re-reads its text from the source …
    (tmp_path / "docs" / "a.txt").unlink()
    with pytest.raises(CoderivError, match="cannot read .*a.txt"):
        full.prepare_doc("a.txt")
    # … unless the index holds a full store of the same g, read instead
    write_docs(tmp_path / "docs", {"a.txt": "start zzz qq anchor yy xx"})
    stores = [parse_fingerprint("anchor:g=2"), parse_fingerprint("full:g=2")]
    Index.update_from(tmp_path / "docs", tmp_path / "both", stores=stores, workers=1)
    (tmp_path / "docs" / "a.txt").unlink()
    both = FingerprintSearcher(Index.open(tmp_path / "both"), "anchor", full_query=True)
    prepared = both.prepare_doc("a.txt")
    assert len(prepared.keys) == 5 and prepared.self_score == 2
    assert full.method == "fingerprint:g=2,strategy=anchor+full-query"


def test_full_query_can_exceed_100_percent(tmp_path) -> None:
    # g = 2, all-substrings: q = alpha beta gamma delta epsilon keeps "alpha beta", "gamma delta";
    # d = q twice keeps starts 0, 2, 4, 6, 8: alpha beta, gamma delta, epsilon alpha, beta gamma,
    # delta epsilon — four of them are phrases of q, and S(q,q) = |F_full(q) ∩ F(q)| = 2
    q = "alpha beta gamma delta epsilon"
    write_docs(tmp_path / "docs", {"q.txt": q, "twice.txt": f"{q} {q}"})
    Index.update_from(tmp_path / "docs", tmp_path / "idx", stores=[parse_fingerprint("all-substrings:g=2")], workers=1)
    index = Index.open(tmp_path / "idx")
    full = FingerprintSearcher(index, full_query=True)
    assert [(m.doc_id, m.score, m.percent) for m in full.search(q).matches] == [
        ("twice.txt", 4.0, 200.0), ("q.txt", 2.0, 100.0),
    ]
    own = FingerprintSearcher(index)  # with the store's strategy: 2 of 2 each, never above 100%
    assert [(m.doc_id, m.percent) for m in own.search(q).matches] == [("q.txt", 100.0), ("twice.txt", 100.0)]


texts = st.lists(st.sampled_from("alpha beta gamma delta epsilon zeta. eta theta\n\n".split(" ")), max_size=30)


@pytest.fixture(scope="module")
def every_strategy(tmp_path_factory) -> Index:
    """Five small documents (repeats, shared runs, sentences, paragraphs), a g = 2 store of
    every strategy."""
    root = tmp_path_factory.mktemp("every")
    write_docs(root / "docs", {
        "d0.txt": "alpha beta gamma delta. epsilon zeta eta theta.\n\nalpha beta gamma",
        "d1.txt": "beta gamma delta epsilon zeta eta. theta iota kappa lambda mu nu xi omicron pi rho",
        "d2.txt": "zeta eta theta. zeta eta theta. alpha alpha alpha",
        "d3.txt": "kappa lambda mu nu\n\nxi omicron pi rho sigma tau upsilon phi chi psi omega alpha beta",
        "d4.txt": "omega",
    })
    small = {"r": 3, "k": 2}  # resolutions and K small enough for these short documents
    stores = [
        StoreSpec.create("fingerprint", strategy=name, g=2, **{k: v for k, v in small.items() if k in STRATEGIES[name].params})
        for name in STRATEGIES
    ]
    Index.update_from(root / "docs", root / "idx", stores=stores, workers=1)
    return Index.open(root / "idx")


@given(texts)
@settings(max_examples=25, deadline=None)
def test_own_strategy_percentages_are_at_most_100(every_strategy: Index, query: list[str]) -> None:
    for spec in fingerprint_stores(every_strategy):
        searcher = FingerprintSearcher(every_strategy, spec)
        assert searcher.percentages(searcher.prepare(" ".join(query))).max(initial=0) <= 100


def test_a_copy_of_the_query_scores_100(every_strategy: Index) -> None:
    for spec in fingerprint_stores(every_strategy):
        searcher = FingerprintSearcher(every_strategy, spec)
        checked = 0
        for number, doc_id in enumerate(every_strategy.doc_ids):
            prepared = searcher.prepare_doc(doc_id)
            if prepared.self_score:  # an empty fingerprint (no anchor word, …) scores 0% throughout
                assert searcher.percentages(prepared)[number] == 100.0, (spec.name, doc_id)
                checked += 1
        assert checked >= 2, spec.name


def test_store_is_updated_incrementally_like_a_rebuild(tmp_path) -> None:
    stores = [parse_fingerprint("anchor:g=2"), parse_fingerprint("rarest-in-collection:g=1,r=1")]
    write_docs(tmp_path / "docs", DOCS)
    Index.update_from(tmp_path / "docs", tmp_path / "idx", stores=stores, workers=2)  # worker processes
    write_docs(tmp_path / "docs", {"b.txt": "alpha beta gamma zeta", "d.txt": "alpha start anchor"})
    (tmp_path / "docs" / "c.txt").unlink()
    report = Index.update_from(tmp_path / "docs", tmp_path / "idx", workers=1)
    assert (report.added, report.changed, report.removed) == (["d.txt"], ["b.txt"], ["c.txt"])
    Index.update_from(tmp_path / "docs", tmp_path / "fresh", stores=stores, workers=1)
    updated, fresh = Index.open(tmp_path / "idx"), Index.open(tmp_path / "fresh")
    for spec in stores:
        for name in ("keys", "ptr", "docs"):
            assert np.array_equal(getattr(updated.store(spec.name), name), getattr(fresh.store(spec.name), name))
    # rarest in collection (g = 1, r = 1) follows the live collection: df alpha 3, beta 2,
    # gamma 2, delta 1, zeta 1 (c, which held it too, is gone), start 1, anchor 1
    rare = FingerprintSearcher(updated, "rarest-in-collection")
    assert [rare.postings.doc_keys(d)[0].tolist() for d in range(3)] == [
        [minutia_hash("delta")], [minutia_hash("zeta")], sorted([minutia_hash("anchor"), minutia_hash("start")])[:1],
    ]


def test_store_choice_errors(tmp_path) -> None:
    write_docs(tmp_path / "docs", DOCS)
    Index.update_from(tmp_path / "docs", tmp_path / "plain", workers=1)
    with pytest.raises(CoderivError, match="no fingerprint store"):
        FingerprintSearcher(Index.open(tmp_path / "plain"))
    stores = [parse_fingerprint("anchor:g=2"), parse_fingerprint("anchor:g=3")]
    Index.update_from(tmp_path / "docs", tmp_path / "two", stores=stores, workers=1)
    two = Index.open(tmp_path / "two")
    with pytest.raises(InputError, match="several fingerprint stores"):
        FingerprintSearcher(two)
    with pytest.raises(InputError, match="matches several"):
        FingerprintSearcher(two, "anchor")
    assert FingerprintSearcher(two, "anchor:g=3").spec.name == "fingerprint:g=3,strategy=anchor"
    with pytest.raises(InputError, match="no fingerprint store for 'full'"):
        FingerprintSearcher(two, "full")
    windows = [parse_fingerprint("winnowing:g=2,w=4"), parse_fingerprint("winnowing:g=2")]
    Index.update_from(tmp_path / "docs", tmp_path / "windows", stores=windows, workers=1)
    both = Index.open(tmp_path / "windows")
    assert FingerprintSearcher(both, "winnowing:w=4").spec.name == "fingerprint:g=2,strategy=winnowing,w=4"
    # both match winnowing:g=2, but only w=8 has every parameter the name implies (w's default)
    assert FingerprintSearcher(both, "winnowing:g=2").spec.name == "fingerprint:g=2,strategy=winnowing,w=8"


# -- command line and evaluation ----------------------------------------------------------------
def test_cli_index_and_query(tmp_path, runner) -> None:
    write_docs(tmp_path / "docs", DOCS)
    idx = str(tmp_path / "idx")
    out = runner.invoke(main, ["index", str(tmp_path / "docs"), "--index", idx, "-q",
                               "--fingerprint", "full:g=2", "--fingerprint", "first-r-sliding:g=2,r=1"])
    assert out.exit_code == 0, out.output
    query = tmp_path / "q.txt"
    query.write_text("alpha beta gamma omega", "utf-8")
    out = runner.invoke(main, ["query", str(query), "--index", idx, "--method", "fingerprint",
                               "--strategy", "full", "--format", "tsv"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[1:] == [
        f"{query}\t1\t66.6667\t2\ta.txt", f"{query}\t2\t66.6667\t2\tb.txt",
    ]
    out = runner.invoke(main, ["query", "--doc", "a.txt", "--index", idx, "--method", "fingerprint",
                               "--strategy", "first-r-sliding"])
    assert out.exit_code == 0, out.output
    assert "1 of 1 distinct minutiae in the collection, self-score 1 = 100%" in out.output
    assert "100.0%" in out.output and "b.txt" in out.output and "c.txt" not in out.output
    out = runner.invoke(main, ["query", "--doc", "b.txt", "--index", idx, "--method", "fingerprint",
                               "--strategy", "full:g=2", "--full-query", "--format", "json"])
    assert out.exit_code == 0, out.output
    (result,) = json.loads(out.output)
    assert result["measure"] == "fingerprint:g=2,strategy=full+full-query" and result["self_score"] == 3
    assert [(m["doc_id"], m["score"]) for m in result["matches"]] == [("b.txt", 3.0), ("a.txt", 2.0)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["index", "DOCS", "--fingerprint", "anchor:r=3"], "strategy anchor takes parameters"),
        (["query", "--doc", "a.txt", "--method", "fingerprint"], "several fingerprint stores"),
        (["query", "--doc", "a.txt", "--strategy", "anchor"], "apply to --method fingerprint"),
        (["query", "--doc", "a.txt", "--method", "fingerprint", "--strategy", "winnowing"], "no fingerprint store"),
    ],
)
def test_cli_errors(tmp_path, runner, args: list[str], message: str) -> None:
    write_docs(tmp_path / "docs", DOCS)
    idx = str(tmp_path / "idx")
    stores = [parse_fingerprint("full:g=2"), parse_fingerprint("anchor:g=2")]
    Index.update_from(tmp_path / "docs", idx, stores=stores, workers=1)
    out = runner.invoke(main, [a.replace("DOCS", str(tmp_path / "docs")) for a in args] + ["--index", idx])
    assert out.exit_code == 1
    assert message in out.output and "Traceback" not in out.output


def test_evaluation_methods(full_index: Index) -> None:
    percentages = get_method("fingerprint:full:g=2")(full_index)("a.txt")
    assert percentages.tolist() == pytest.approx([100.0, 200 / 3, 0.0])
    full_query = get_method("fingerprint:full:g=2:full-query")(full_index)("b.txt")
    assert full_query.tolist() == pytest.approx([200 / 3, 100.0, 0.0])
    with pytest.raises(UnknownNameError):
        get_method("fingerprint:nonsense")
    with pytest.raises(CoderivError, match="no fingerprint store"):
        get_method("fingerprint:anchor")(full_index)
