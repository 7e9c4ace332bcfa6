"""Alignment that survives rewording (issue 40): sentence seeds by tf-isf cosine and Dice, their
clustering with a distance in sentences, summaries, and how they join the n-gram passages;
hand-built pairs with known offsets, and bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from coderiv.cli.align import align_command
from coderiv.errors import InputError
from coderiv.overlap.align import align_texts
from coderiv.overlap.align.clusters import cluster, fragments
from coderiv.overlap.align.pan import align_pairs
from coderiv.overlap.align.pan_format import pair_file_name, read_pair
from coderiv.overlap.align.pipeline import sentence_view
from coderiv.overlap.align.sentence_seeds import sentence_seeds
from coderiv.overlap.align.sentences import split_sentences
from coderiv.overlap.align.words import split_words
from tests.support.reworded import (
    HOST,
    INTRO,
    OUTRO,
    REWORDED,
    SOURCE_SENTENCES,
    TAIL,
    source_sentence,
    summary_sentence,
)


def test_reworded_and_reordered_sentences_are_one_passage() -> None:
    source = INTRO + " ".join(SOURCE_SENTENCES) + OUTRO
    copy = " ".join(REWORDED)
    susp = HOST + copy + TAIL
    (p,) = align_texts(susp, source)
    assert (p.a_start, p.a_end) == (len(HOST), len(HOST) + len(copy)) == (83, 581)
    assert (p.b_start, p.b_end) == (len(INTRO), len(INTRO) + len(" ".join(SOURCE_SENTENCES))) == (33, 515)
    assert (p.a_words, p.b_words) == (85, 84)


def test_without_the_sentence_seeds_the_reworded_copy_is_not_found() -> None:
    from coderiv.overlap.align import AlignSettings

    source = INTRO + " ".join(SOURCE_SENTENCES) + OUTRO
    assert align_texts(HOST + " ".join(REWORDED) + TAIL, source, AlignSettings(reworded=False)) == []


def test_a_summary_is_one_passage_over_the_source_it_condenses() -> None:
    """Four sentences, each five of the eight content words of one of the source sentences 1, 4,
    7 and 10 (of 12): the source side runs from sentence 1 to sentence 10."""
    source = " ".join(source_sentence(k) for k in range(12))
    summary = " ".join(summary_sentence(k) for k in (1, 4, 7, 10))
    susp = HOST + summary + TAIL
    (p,) = align_texts(susp, source)
    first, last = source_sentence(1), source_sentence(10)
    assert (p.a_start, p.a_end) == (len(HOST), len(HOST) + len(summary)) == (83, 330)
    assert (p.b_start, p.b_end) == (source.index(first), source.index(last) + len(last)) == (85, 934)
    assert (p.a_words, p.b_words) == (44, 150)
    # over 24 source sentences (1, 8, 15, 22) the two sides' cosine falls to 0.23, below 0.31:
    # a summary that leaves out most of a long source is not told from topical text
    far = " ".join(source_sentence(k) for k in range(24))
    assert align_texts(HOST + " ".join(summary_sentence(k) for k in (1, 8, 15, 22)) + TAIL, far) == []


def test_sentences_join_the_short_ones_and_cut_the_long_ones() -> None:
    words = split_words("One two three. Four. Five six seven eight.", {})
    s = split_sentences(words)
    assert (s.first.tolist(), s.end.tolist()) == ([0, 3], [3, 8])  # "Four." joined to the next
    long = split_words(" ".join(f"w{k}" for k in range(170)) + ".", {})
    s = split_sentences(long, max_words=80)
    assert (s.first.tolist(), s.end.tolist()) == ([0, 80, 160], [80, 160, 170])
    s = split_sentences(split_words("First sentence is here.\n\nSecond one then. Yes.", {}))
    assert (s.first.tolist(), s.end.tolist()) == ([0, 4], [4, 8])  # a short last sentence joins the one before


def test_sentence_seed_cosine_is_tf_isf() -> None:
    """A0 and B0 share alpha and beta, each in 2 of the 4 sentences (isf ln 2); gamma and omega
    are in one each (isf ln 4 = 2 ln 2): cosine = 2 ln²2 / (2 ln²2 + 4 ln²2) = 1/3 exactly, Dice
    = 2·2 / (3 + 3) = 2/3."""
    v: dict[str, int] = {}
    wa = split_words("Alpha beta gamma. Delta epsilon zeta.", v)
    wb = split_words("Alpha beta omega. Kappa lambda mu.", v)
    va, vb = sentence_view(wa), sentence_view(wb)
    seeds = sentence_seeds(va.terms, va.sentences, vb.terms, vb.sentences, min_cosine=0.333, min_dice=0.66)
    assert (seeds.susp.tolist(), seeds.src.tolist()) == ([0], [0])
    assert len(sentence_seeds(va.terms, va.sentences, vb.terms, vb.sentences, min_cosine=0.334)) == 0
    assert len(sentence_seeds(va.terms, va.sentences, vb.terms, vb.sentences, min_dice=0.67)) == 0
    assert len(sentence_seeds(va.terms, va.sentences, vb.terms, vb.sentences, min_shared=3)) == 0


def test_clustering_cuts_at_a_gap_in_either_text() -> None:
    susp = np.array([0, 1, 2, 10, 11, 12])
    src = np.array([5, 3, 4, 0, 1, 30])
    groups = cluster(susp, src, 4, 4)
    assert sorted(sorted(g.tolist()) for g in groups) == [[0, 1, 2], [3, 4], [5]]


def test_a_fragment_needs_two_sentences_on_each_side() -> None:
    """A text's words shuffled into one sentence match both of its sentences: one sentence of B,
    no fragment."""
    query = "Configuration files are read from the project folder before any plugin is loaded. " \
            "Every option can be overridden on the command line with a flag of the same name."
    shuffled = " ".join(sorted(query.replace(".", "").split(), key=str.lower))
    v: dict[str, int] = {}
    va, vb = sentence_view(split_words(query, v)), sentence_view(split_words(shuffled, v))
    seeds = sentence_seeds(va.terms, va.sentences, vb.terms, vb.sentences)
    assert (seeds.susp.tolist(), seeds.src.tolist()) == ([0, 1], [0, 0])
    assert fragments(seeds) == []
    assert align_texts(query, shuffled) == []


@pytest.mark.parametrize("a, b", [
    ("", "Some source text. With two sentences here."),
    ("Some source text. With two sentences here.", ""),
    ("One sentence only, nothing more to see.", "One sentence only, nothing more to see."),
])
def test_empty_and_one_sentence_documents_align_to_nothing(a: str, b: str) -> None:
    assert align_texts(a, b) == []


def test_one_sentence_repeated_thousands_of_times_is_boilerplate() -> None:
    """Every n-gram and every sentence is found more than 8 times: no seed of either kind, and
    the sparse product stays within its budget (3,000 × 3,000 sentences share every term)."""
    sentence = "The committee approved the annual budget after a long debate. "
    assert align_texts(sentence * 3000, sentence * 3000) == []
    assert align_texts(sentence * 3000, "A preface. " + sentence + "An epilogue follows here.") == []


def test_a_pair_naming_a_missing_file_leaves_the_others_aligned(tmp_path: Path) -> None:
    (tmp_path / "susp").mkdir()
    (tmp_path / "src").mkdir()
    text = INTRO + " ".join(SOURCE_SENTENCES) + OUTRO
    (tmp_path / "susp" / "s1.txt").write_text(HOST + text, "utf-8")
    (tmp_path / "src" / "a.txt").write_text(text, "utf-8")
    (tmp_path / "src" / "b.txt").write_text(text, "utf-8")
    (tmp_path / "pairs").write_text("s1.txt a.txt\ns1.txt missing.txt\ns1.txt b.txt\n", "utf-8")
    with pytest.raises(InputError, match=r"missing\.txt.*1 of 3 pairs not aligned"):
        align_pairs(tmp_path / "pairs", tmp_path / "susp", tmp_path / "src", tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [pair_file_name("s1.txt", "a.txt"), pair_file_name("s1.txt", "b.txt")]
    (found,) = read_pair(tmp_path / "out" / pair_file_name("s1.txt", "b.txt"))
    assert (found.this_offset, found.this_length, found.source_offset, found.source_length) == (len(HOST), len(text), 0, len(text))
    assert found.obfuscation == "verbatim"  # the kind of reuse, as PAN's obfuscation attribute
    result = CliRunner().invoke(align_command, [
        "--pairs", str(tmp_path / "pairs"), "--susp", str(tmp_path / "susp"), "--src", str(tmp_path / "src"),
        "--out", str(tmp_path / "out2"), "-q",
    ])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "missing.txt" in result.output and "Traceback" not in result.output


def test_each_passage_says_its_kind_of_reuse() -> None:
    from coderiv.overlap.align.kinds import reuse_kind

    source = INTRO + " ".join(SOURCE_SENTENCES) + OUTRO
    (p,) = align_texts(HOST + " ".join(REWORDED) + TAIL, source)
    assert (p.same_words, p.a_words, p.reuse) == (21, 85, "paraphrased")  # 21 of 85 words identical
    assert p.to_dict()["reuse"] == "paraphrased"
    summary = " ".join(summary_sentence(k) for k in (1, 4, 7, 10))
    (s,) = align_texts(HOST + summary + TAIL, " ".join(source_sentence(k) for k in range(12)))
    assert s.reuse == "summarised"  # 150 source words for 44
    (v,) = align_texts(HOST + source + TAIL, source)
    assert v.reuse == "verbatim"
    assert [reuse_kind(40, 40, 40), reuse_kind(40, 41, 40), reuse_kind(40, 40, 20), reuse_kind(40, 40, 19), reuse_kind(40, 120, 30)] == [
        "verbatim", "edited", "edited", "paraphrased", "summarised"]


def test_a_gap_whose_words_the_source_holds_is_bridged() -> None:
    """Words 40-79 of the copy in reverse order leave no 3-gram (two verbatim passages, 40 words
    apart): the source holds every word of the gap, so the copy is one passage; 40 unrelated
    words in the gap keep two."""
    words = [f"w{k}" for k in range(120)]
    source = " ".join(words)
    reordered = " ".join(words[:40] + words[40:80][::-1] + words[80:])
    (p,) = align_texts(reordered, source)
    assert (p.a_start, p.a_end, p.b_start, p.b_end, p.a_words) == (0, len(reordered), 0, len(source), 120)
    unrelated = " ".join(words[:40] + [f"u{k}" for k in range(40)] + words[80:])
    assert [(q.a_start, q.a_end) for q in align_texts(unrelated, source)] == [
        (0, len(" ".join(words[:40]))), (unrelated.index("w80"), len(unrelated))]
