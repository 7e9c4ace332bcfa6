"""Text alignment: hand-built copies with known edits give one passage each, with exact offsets,
word counts and marked words; random edits within the documented rule never split a copy; an
unrelated stretch is never joined to a copy."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.overlap.align import AlignSettings, WordSpan, align_sources, align_texts
from coderiv.overlap.align.seeds import find_seeds, ngram_keys
from coderiv.overlap.align.words import split_words

SOURCE = (
    "Before the war the harbour town lived on fishing and on the salt works north of the river. "
    "Every spring the boats went out past the lighthouse and came back heavy with herring, which "
    "the women cleaned and packed in barrels of coarse grey salt from the pans along the shore. "
    "Merchants from the capital bought the barrels in autumn and shipped them inland by canal."
)
HOST_BEFORE = "My thesis studies regional economies in detail, using archives I consulted myself.\n\n"
HOST_AFTER = "\n\nThat concludes my summary; the next chapter compares two decades of tax rolls."


def _span(text: str, piece: str) -> tuple[int, int]:
    start = text.index(piece)
    return start, start + len(piece)


def test_verbatim_copy_is_one_identical_passage() -> None:
    copy = SOURCE[SOURCE.index("Every") : SOURCE.index("Merchants") - 1]
    susp = HOST_BEFORE + copy + HOST_AFTER
    (p,) = align_texts(susp, SOURCE)
    assert (p.a_start, p.a_end) == _span(susp, copy)
    assert (p.b_start, p.b_end) == _span(SOURCE, copy)
    assert p.a_words == p.b_words == p.same_words == 33
    assert p.identical_share == 1.0
    assert p.a_spans == (WordSpan(p.a_start, p.a_end - 1, "same"),)  # the full stop is not a word


def test_edited_copy_is_one_passage_with_its_changed_words_marked() -> None:
    # Two replacements ("harbour" -> "port", "heavy" -> "laden"), one insertion ("always"), one
    # deletion ("coarse"), OCR damage ("rn" read for "m": "wornen"), re-wrapped lines.
    copy = (
        "Before the war the port town lived on fishing and on the salt works north of the river.\n"
        "Every spring the boats always went out past the lighthouse and came back laden with\n"
        "herring, which the wornen cleaned and packed in barrels of grey salt from the pans along the shore."
    )
    susp = HOST_BEFORE + copy + HOST_AFTER
    (p,) = align_texts(susp, SOURCE)
    original = SOURCE[: SOURCE.index(" Merchants")]
    assert (p.a_start, p.a_end) == _span(susp, copy)
    assert (p.b_start, p.b_end) == _span(SOURCE, original)
    assert p.b_words == 51  # the source's first two sentences: 18 + 33 words
    assert p.a_words == 51  # one word inserted, one deleted
    assert p.same_words == 51 - 3 - 1  # port, laden, wornen replaced; coarse deleted
    changed_a = [susp[s.start : s.end] for s in p.a_spans if s.kind == "changed"]
    changed_b = [SOURCE[s.start : s.end] for s in p.b_spans if s.kind == "changed"]
    assert changed_a == ["port", "always", "laden", "wornen"]
    assert changed_b == ["harbour", "heavy", "women", "coarse"]
    # The spans tile each side's words in order: same and changed alternate without overlap.
    for spans in (p.a_spans, p.b_spans):
        assert all(x.end <= y.start for x, y in zip(spans, spans[1:]))
    assert round(p.identical_share, 4) == round(47 / 51, 4)


def test_two_copies_far_apart_are_two_passages_and_a_short_phrase_none() -> None:
    first = SOURCE[: SOURCE.index(" Every")]
    second = SOURCE[SOURCE.index("the women") : SOURCE.index(" Merchants")]
    filler = " ".join(f"unrelated{k}" for k in range(40))
    phrase = "the boats went out past the lighthouse"  # 7 words: below min_words
    susp = f"{first}\n{filler}\n{second}\n{filler} {phrase} {filler}"
    passages = align_texts(susp, SOURCE)
    assert [(p.a_start, p.a_end) for p in passages] == [_span(susp, first), _span(susp, second)]
    assert [(p.b_start, p.b_end) for p in passages] == [_span(SOURCE, first), _span(SOURCE, second)]


def test_a_source_repeating_the_copy_gives_one_passage() -> None:
    copy = SOURCE[SOURCE.index("Every") : SOURCE.index(" Merchants")]
    source = f"{SOURCE}\n\n{copy}"
    susp = HOST_BEFORE + copy + HOST_AFTER
    passages = align_texts(susp, source)
    assert [(p.a_start, p.a_end) for p in passages] == [_span(susp, copy)]
    assert source[passages[0].b_start : passages[0].b_end] == copy


def test_seeds_are_the_shared_trigrams() -> None:
    vocab: dict[str, int] = {}
    a = split_words("x a b c d y", vocab)
    b = split_words("A B C z b c d", vocab)
    seeds = find_seeds(a, b, 3, 8)
    assert list(zip(seeds.susp.tolist(), seeds.src.tolist())) == [(1, 0), (2, 4)]
    assert len(ngram_keys(a.ids, 7)) == 0
    assert (int(a.starts[1]), int(a.ends[1])) == (2, 3)


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        AlignSettings(n=0)


# --- properties -------------------------------------------------------------------------------

def _case(n: int, edits: list[tuple[int, str]], seed: int) -> tuple[str, str, int, int]:
    """A source of distinct words with a copy of ``n`` of them, edited at the given positions,
    between host words; returns (suspicious, source, start and end of the copy in it)."""
    rng = random.Random(seed)
    src_words = [f"s{k}" for k in range(n + 60)]
    start = rng.randrange(0, 60)
    copy = src_words[start : start + n]
    out: list[str] = []
    edits_at = dict(edits)
    k = 0
    filler = iter(f"x{m}" for m in range(10_000))
    while k < len(copy):
        op = edits_at.get(k)
        if op == "replace":
            out.append(next(filler))
        elif op == "insert":
            out.extend([next(filler), copy[k]])
        elif op == "swap" and k + 1 < len(copy):
            out.extend([copy[k + 1], copy[k]])
            k += 1
        elif op != "delete":
            out.append(copy[k])
        k += 1
    before = " ".join(f"h{m}" for m in range(30))
    pasted = " ".join(out)
    susp = f"{before} {pasted} " + " ".join(f"g{m}" for m in range(30))
    return susp, " ".join(src_words), len(before) + 1, len(before) + 1 + len(pasted)


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(40, 160),
    positions=st.lists(st.integers(0, 159), max_size=7, unique=True),
    seed=st.integers(0, 10**6),
)
def test_seven_replacements_never_split_a_copy(n: int, positions: list[int], seed: int) -> None:
    edits = [(p % n, "replace") for p in positions]
    susp, src, start, end = _case(n, edits, seed)
    passages = align_texts(susp, src)
    assert len(passages) == 1
    assert start <= passages[0].a_start and passages[0].a_end <= end


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(40, 160),
    edits=st.lists(
        st.tuples(st.integers(0, 159), st.sampled_from(["replace", "insert", "delete", "swap"])),
        max_size=4, unique_by=lambda e: e[0],
    ),
    seed=st.integers(0, 10**6),
)
def test_four_word_operations_never_split_a_copy(n: int, edits: list[tuple[int, str]], seed: int) -> None:
    susp, src, start, end = _case(n, [(p % n, op) for p, op in edits], seed)
    passages = align_texts(susp, src)
    assert len(passages) == 1
    assert start <= passages[0].a_start and passages[0].a_end <= end


@settings(max_examples=60, deadline=None)
@given(
    first=st.integers(15, 120), second=st.integers(15, 120), unrelated=st.integers(31, 200),
    contiguous=st.booleans(),
)
def test_an_unrelated_stretch_is_never_joined_to_a_copy(first: int, second: int, unrelated: int, contiguous: bool) -> None:
    """Two copies with more than 30 unrelated words between them (the longest gap a passage
    bridges) are two passages, whether or not they were contiguous in the source, and the
    unrelated words lie in neither."""
    src_words = [f"s{k}" for k in range(first + second + 50)]
    gap = 0 if contiguous else 50
    part1 = " ".join(src_words[:first])
    part2 = " ".join(src_words[first + gap : first + gap + second])
    stretch = " ".join(f"u{k}" for k in range(unrelated))
    susp = f"{part1} {stretch} {part2}"
    passages = align_texts(susp, " ".join(src_words))
    assert [(p.a_start, p.a_end) for p in passages] == [_span(susp, part1), _span(susp, part2)]


@settings(max_examples=40, deadline=None)
@given(first=st.integers(40, 120), second=st.integers(40, 120), unrelated=st.integers(1, 20))
def test_a_short_insertion_is_bridged(first: int, second: int, unrelated: int) -> None:
    """The other side of the rule: at most 20 inserted words never split a copy."""
    src_words = [f"s{k}" for k in range(first + second)]
    stretch = " ".join(f"u{k}" for k in range(unrelated))
    susp = f"{' '.join(src_words[:first])} {stretch} {' '.join(src_words[first:])}"
    (p,) = align_texts(susp, " ".join(src_words))
    assert (p.a_start, p.a_end) == (0, len(susp))
    assert p.same_words == first + second and p.a_words == first + second + unrelated


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(40, 120),
    edits=st.lists(
        st.tuples(st.integers(0, 119), st.sampled_from(["replace", "insert", "delete", "swap"])),
        max_size=12, unique_by=lambda e: e[0],
    ),
    seed=st.integers(0, 10**6),
)
def test_marked_words_tile_both_sides(n: int, edits: list[tuple[int, str]], seed: int) -> None:
    """Each side's spans cover its words in order, and the identical spans hold the same words
    on both sides (same count, same words, in order)."""
    susp, src, _, _ = _case(n, [(p % n, op) for p, op in edits], seed)
    for p in align_texts(susp, src):
        a_same = [w for s in p.a_spans if s.kind == "same" for w in susp[s.start : s.end].split()]
        b_same = [w for s in p.b_spans if s.kind == "same" for w in src[s.start : s.end].split()]
        assert a_same == b_same and len(a_same) == p.same_words
        assert sum(len(susp[s.start : s.end].split()) for s in p.a_spans) == p.a_words
        assert sum(len(src[s.start : s.end].split()) for s in p.b_spans) == p.b_words
        assert p.a_spans[0].start == p.a_start and p.b_spans[0].start == p.b_start
        assert all(x.end < y.start and x.kind != y.kind for x, y in zip(p.a_spans, p.a_spans[1:]))


def test_empty_and_wordless_texts_align_nothing() -> None:
    assert align_texts("", SOURCE) == [] and align_texts(SOURCE, "") == []
    assert align_texts("... !!! ---", "... !!! ---") == []
    assert align_texts("one two", "one two") == []  # fewer words than an n-gram


def test_one_text_against_several_sources() -> None:
    copy = SOURCE[SOURCE.index("Every") : SOURCE.index(" Merchants")]
    susp = HOST_BEFORE + copy + HOST_AFTER
    found = align_sources(susp, {"src": SOURCE, "other": HOST_AFTER * 3})
    assert found["src"] == align_texts(susp, SOURCE) and len(found["src"]) == 1
    assert found["other"] == []


def test_swapped_sentences_are_both_found() -> None:
    """A copy whose two sentences are swapped: the chain's increasing run keeps one, the other
    comes back as a passage of its own (not lost, not widened into the first)."""
    first = SOURCE[: SOURCE.index(" Every")]
    second = SOURCE[SOURCE.index("Every") : SOURCE.index(" Merchants")]
    susp = HOST_BEFORE + second + " " + first + HOST_AFTER
    passages = align_texts(susp, SOURCE)
    assert [(p.a_start, p.a_end) for p in passages] == [_span(susp, second), _span(susp, first)]
    assert [(p.b_start, p.b_end) for p in passages] == [_span(SOURCE, second), _span(SOURCE, first)]


def test_edits_next_to_the_edges_do_not_shorten_the_passage() -> None:
    """The second word and the second-to-last word changed: no 3-gram reaches the copy's first
    or last word, and the passage still runs from its first word to its last."""
    copy = SOURCE[SOURCE.index("Every") : SOURCE.index(" Merchants")]
    edited = copy.replace("Every spring", "Every summer").replace("along the shore", "by the shore")
    susp = HOST_BEFORE + edited + HOST_AFTER
    (p,) = align_texts(susp, SOURCE)
    assert (p.a_start, p.a_end) == _span(susp, edited)
    assert (p.b_start, p.b_end) == _span(SOURCE, copy)
    changed = [susp[s.start : s.end] for s in p.a_spans if s.kind == "changed"]
    assert changed == ["summer", "by"]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(40, 300), every=st.integers(4, 12), offset=st.integers(0, 11), seed=st.integers(0, 10**6))
def test_one_word_in_four_replaced_evenly_never_splits(n: int, every: int, offset: int, seed: int) -> None:
    """k/n up to 1/4, spread evenly (every ``every``-th word replaced): three untouched words
    between edits leave a 3-gram there, so the copy stays one passage, whatever its length."""
    positions = list(range(offset % every, n, every))
    susp, src, start, end = _case(n, [(p, "replace") for p in positions], seed)
    (p,) = align_texts(susp, src)
    assert start <= p.a_start and p.a_end <= end
    first = len(susp[: p.a_start].split()) - 30  # the copy's word index where the passage starts
    last = first + p.a_words  # (30 host words come first; replacements shift nothing)
    assert p.a_words - p.same_words == sum(1 for q in positions if first <= q < last)
    assert first <= 1 and last >= n - 1  # only an edited first or last word can be left out
