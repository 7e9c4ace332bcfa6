"""PAN's measures against hand-computed examples, the XML format both ways, the generator's truth,
and ``coderiv align``'s output parsed back."""

from __future__ import annotations

import hashlib
import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from coderiv.cli.align import align_command
from coderiv.cli.evaluate import evaluate_command
from coderiv.errors import CoderivError, InputError
from coderiv.evaluation.pan import evaluate, evaluate_folders, measure, union_size
from coderiv.evaluation.pan_generate import (
    Document,
    add_noise,
    generate_pairs,
    generate_pan,
    make_pair,
    random_operations,
    write_pairs,
)
from coderiv.overlap.align.pan_format import (
    DETECTED,
    PLAGIARISM,
    Feature,
    pair_file_name,
    parse_xml,
    read_folder,
    read_pair,
    read_pairs,
    to_xml,
    write_pair,
)
from coderiv.text.collection import RawDocument


def case(t0: int, t1: int, s0: int, s1: int, obfuscation: str | None = None, susp: str = "s.txt", src: str = "r.txt") -> Feature:
    return Feature(susp, t0, t1 - t0, src, s0, s1 - s0, PLAGIARISM, obfuscation)


def det(t0: int, t1: int, s0: int, s1: int, susp: str = "s.txt", src: str = "r.txt") -> Feature:
    return Feature(susp, t0, t1 - t0, src, s0, s1 - s0, DETECTED)


def test_half_overlap() -> None:
    # case: [0,100) x [0,100); detection: [50,150) x [50,150). s ⊓ r = 50 + 50 characters;
    # |∪ s| = |∪ r| = 200. P = R = 1/2, granularity 1, plagdet = 1/2 / log2(2) = 1/2.
    m = measure([case(0, 100, 0, 100)], [det(50, 150, 50, 150)])
    assert (m.detected_chars, m.case_chars, m.detection_chars) == (100, 200, 200)
    assert Fraction(m.detected_chars, m.case_chars) == Fraction(1, 2)
    assert (m.precision, m.recall, m.granularity, m.plagdet) == (0.5, 0.5, 1.0, 0.5)


def test_two_pieces_make_granularity_two() -> None:
    # Two detections [0,40) and [60,100) on both sides of one case [0,100): R = 160/200 = 4/5,
    # P = 1, granularity 2, F1 = 8/9, plagdet = (8/9) / log2 3.
    m = measure([case(0, 100, 0, 100)], [det(0, 40, 0, 40), det(60, 100, 60, 100)])
    assert Fraction(m.detected_chars, m.case_chars) == Fraction(4, 5)
    assert m.precision == 1.0 and m.granularity == 2.0
    assert m.f1 == pytest.approx(8 / 9)
    assert m.plagdet == pytest.approx((8 / 9) / math.log2(3))


def test_overlap_on_one_side_only_detects_nothing() -> None:
    m = measure([case(0, 100, 0, 100)], [det(0, 100, 500, 600)])
    assert (m.detected_chars, m.detected_cases) == (0, 0)
    assert (m.precision, m.recall, m.granularity, m.plagdet) == (0.0, 0.0, 1.0, 0.0)


def test_other_documents_detect_nothing() -> None:
    m = measure([case(0, 100, 0, 100)], [det(0, 100, 0, 100, src="other.txt")])
    assert m.recall == 0.0 and m.detection_chars == 200


def test_overlapping_detections_and_cases_count_characters_once() -> None:
    # Cases [0,100)x[0,100) and [80,180)x[200,300): |∪ s| = 180 + 200 = 380.
    # Detections [0,120)x[0,120) (detects case 1 only: [0,120) misses [200,300)) and
    # [90,180)x[210,300) (detects both? its source [210,300) misses case 1's [0,100): case 2 only).
    # s1 ⊓ r1 = [0,100)+[0,100) = 200; s2 ⊓ r2 = [90,180)+[210,300) = 180; union over the
    # suspicious side [0,100) ∪ [90,180) = 180, source [0,100) ∪ [210,300) = 190: 370.
    # |∪ r| = [0,180) + [0,120) ∪ [210,300) = 180 + 210 = 390.
    cases = [case(0, 100, 0, 100), case(80, 180, 200, 300)]
    found = [det(0, 120, 0, 120), det(90, 180, 210, 300)]
    m = measure(cases, found)
    assert (m.case_chars, m.detection_chars, m.detected_chars) == (380, 390, 370)
    assert m.recall == pytest.approx(370 / 380) and m.precision == pytest.approx(370 / 390)
    assert m.granularity == 1.0


def test_union_size() -> None:
    assert union_size([("a", 0, 10), ("a", 5, 15), ("b", 5, 15), ("a", 20, 20)]) == 25


def test_empty_sides() -> None:
    assert measure([], []).plagdet == 1.0
    assert measure([case(0, 10, 0, 10)], []).plagdet == 0.0
    assert measure([], [det(0, 10, 0, 10)]).precision == 0.0


def test_per_obfuscation_uses_the_type_s_pairs() -> None:
    cases = [case(0, 100, 0, 100, "none"), case(0, 100, 0, 100, "high", susp="t.txt")]
    found = [det(0, 100, 0, 100), det(0, 50, 0, 50, susp="t.txt"), det(0, 10, 0, 10, susp="u.txt")]
    result = evaluate(cases, found)
    assert result.by_obfuscation["none"].plagdet == 1.0
    assert result.by_obfuscation["high"].recall == 0.5 and result.by_obfuscation["high"].precision == 1.0
    # Overall, characters are counted per document: both cases share r.txt's [0,100), so
    # |∪ s| = 100 (s) + 100 (t) + 100 (r) = 300 and the met characters are 100 (s) + 50 (t) +
    # 100 (r) = 250; |∪ r| = 100 (s) + 50 (t) + 10 (u) + 100 (r) = 260.
    assert Fraction(result.overall.detected_chars, result.overall.case_chars) == Fraction(5, 6)
    assert Fraction(result.overall.detected_chars, result.overall.detection_chars) == Fraction(25, 26)


def test_xml_round_trip(tmp_path: Path) -> None:
    features = [det(3593, 4291, 1300, 1998, susp="suspicious-document00005.txt", src="source-document01090.txt")]
    path = write_pair(tmp_path, "suspicious-document00005.txt", "source-document01090.txt", features)
    assert path.name == "suspicious-document00005-source-document01090.xml"
    assert read_pair(path) == features
    truth = [case(1, 5, 2, 9, "low")]
    assert parse_xml(to_xml("s.txt", truth), "x") == truth


def test_pan_truth_file_is_read() -> None:
    text = (
        '<document reference="suspicious-document00005.txt">\n<feature name="plagiarism" obfuscation="none" '
        'source_length="698" source_offset="1300" source_reference="source-document01090.txt" '
        'this_length="698" this_offset="3593" type="artificial" />\n</document>\n'
    )
    (f,) = parse_xml(text, "t")
    assert (f.this_reference, f.this_offset, f.this_end, f.source_reference, f.source_offset, f.source_end) == (
        "suspicious-document00005.txt", 3593, 4291, "source-document01090.txt", 1300, 1998,
    )
    assert (f.obfuscation, f.type) == ("none", "artificial")


def test_bad_xml_is_one_clear_error() -> None:
    with pytest.raises(InputError, match="not PAN XML"):
        parse_xml("<document", "bad.xml")
    with pytest.raises(InputError, match="integer"):
        parse_xml('<document reference="a"><feature name="plagiarism" this_offset="x"/></document>', "bad.xml")


def test_pair_file_name() -> None:
    assert pair_file_name("suspicious-document00013.txt", "source-document00010.txt") == (
        "suspicious-document00013-source-document00010.xml"
    )
    # folders are kept, encoded, so two releases' index.txt get two files (issue 43)
    assert pair_file_name("thesis.txt", "django-3.0/docs/index.txt") == "thesis-django-3.0%2Fdocs%2Findex.xml"
    assert pair_file_name("thesis.txt", "django-3.1/docs/index.txt") == "thesis-django-3.1%2Fdocs%2Findex.xml"
    assert pair_file_name("a b.md", "x/../y.txt") == "a%20b-x%2F..%2Fy.xml"  # no '/' ever reaches the path


def test_align_keeps_the_sources_paths_and_writes_a_file_per_pair(tmp_path: Path) -> None:
    passage = " ".join(f"w{k}" for k in range(60))
    (tmp_path / "susp").mkdir()
    (tmp_path / "susp" / "thesis.txt").write_text(f"my own opening words. {passage} my own closing words.", "utf-8")
    for release in ("django-3.0", "django-3.1"):
        (tmp_path / "src" / release / "docs").mkdir(parents=True)
        (tmp_path / "src" / release / "docs" / "index.txt").write_text(f"release {release}: {passage}", "utf-8")
    (tmp_path / "src" / "a-b.txt").write_text(passage, "utf-8")
    (tmp_path / "src" / "b.txt").write_text(passage, "utf-8")
    (tmp_path / "susp" / "thesis-a.txt").write_text(passage, "utf-8")
    # 'thesis'+'django-3.0/...' and 'thesis'+'django-3.1/...' share a base name; 'thesis-a'+'b'
    # and 'thesis'+'a-b' share PAN's name: every pair still gets its own file
    pairs = [("thesis.txt", "django-3.0/docs/index.txt"), ("thesis.txt", "django-3.1/docs/index.txt"),
             ("thesis-a.txt", "b.txt"), ("thesis.txt", "a-b.txt")]
    (tmp_path / "pairs").write_text("".join(f"{s} {r}\n" for s, r in pairs), "utf-8")
    result = CliRunner().invoke(align_command, [
        "--pairs", str(tmp_path / "pairs"), "--susp", str(tmp_path / "susp"), "--src", str(tmp_path / "src"),
        "--out", str(tmp_path / "out"), "-q",
    ])
    assert result.exit_code == 0, result.output
    written = read_folder(tmp_path / "out")
    assert len(written) == 4
    assert sorted((f.this_reference, f.source_reference) for features in written.values() for f in features) == sorted(pairs)
    assert "thesis-django-3.0%2Fdocs%2Findex.xml" in written and "thesis-a-b.xml" in written
    digest = hashlib.sha256(b"thesis.txt\0a-b.txt").hexdigest()[:12]
    assert written[f"thesis-a-b-{digest}.xml"][0].source_reference == "a-b.txt"  # the later of the two
    (only,) = written["thesis-django-3.1%2Fdocs%2Findex.xml"]
    assert (only.this_offset, only.this_length) == (len("my own opening words. "), len(passage))


# --- generator ----------------------------------------------------------------------------------

def _document(doc_id: str, words: int, tag: str) -> Document:
    paragraphs = [" ".join(f"{tag}{k}" for k in range(start, min(start + 30, words))) for start in range(0, words, 30)]
    text = "\n\n".join(paragraphs)
    spans, pos = [], 0
    for token in text.split():
        pos = text.index(token, pos)
        spans.append((pos, pos + len(token)))
        pos += len(token)
    return Document(doc_id, text, spans)


@pytest.mark.parametrize("level", ["none", "noise", "low", "high"])
def test_generated_truth_points_at_the_pasted_passage(level: str) -> None:
    host, source = _document("a-1/host.txt", 300, "h"), _document("b-1/src.txt", 600, "w")
    pair = make_pair(7, host, source, level, random.Random(3))
    assert pair.susp_name == "suspicious-document00007.txt"
    for c in pair.cases:
        pasted = pair.susp_text[c.this_offset : c.this_end]
        original = pair.src_text[c.source_offset : c.source_end]
        assert pasted == pasted.strip() and original == original.strip()
        assert c.obfuscation == level
        if level == "none":
            assert pasted == original
        else:
            assert pasted != original
    # The host's words are all still there, in order, outside the pasted passages.
    rest = pair.susp_text
    for c in sorted(pair.cases, key=lambda c: -c.this_offset):
        rest = rest[: c.this_offset] + rest[c.this_end :]
    assert rest.split() == host.text.split()


def test_random_operations_rate() -> None:
    words = " ".join(f"w{k}" for k in range(1000))
    assert random_operations(words, 0.0, ["x"], random.Random(1)).split() == words.split()
    edited = random_operations(words, 0.3, ["x"], random.Random(1)).split()
    kept = sum(1 for a, b in zip(edited, words.split()) if a == b)
    assert kept < 900 and edited != words.split()


def test_noise_damages_a_tenth_of_the_words_and_rewraps() -> None:
    words = " ".join(["information"] * 1000)
    noisy = add_noise(words, random.Random(2))
    damaged = sum(1 for w in noisy.split() if w != "information")
    assert 70 <= damaged <= 130  # binomial(1000, 0.1): mean 100, sd 9.5
    assert all(len(line) <= 70 for line in noisy.splitlines())


# --- the align command, parsed back -------------------------------------------------------------

def test_align_command_writes_pan_xml_parsed_back(tmp_path: Path) -> None:
    host, source = _document("a-1/host.txt", 300, "h"), _document("b-1/src.txt", 600, "w")
    pairs = [make_pair(k, host, source, "low", random.Random(k)) for k in (1, 2)]
    write_pairs(pairs, tmp_path / "data")
    data = tmp_path / "data"
    assert read_pairs(data / "pairs") == [(p.susp_name, p.src_name) for p in pairs]
    result = CliRunner().invoke(align_command, [
        "--pairs", str(data / "pairs"), "--susp", str(data / "susp"), "--src", str(data / "src"),
        "--out", str(tmp_path / "out"), "-q",
    ])
    assert result.exit_code == 0, result.output
    for pair in pairs:
        found = read_pair(tmp_path / "out" / pair_file_name(pair.susp_name, pair.src_name))
        assert len(found) == len(pair.cases)
        for f, c in zip(found, pair.cases):
            assert f.name == DETECTED and (f.this_reference, f.source_reference) == (pair.susp_name, pair.src_name)
            assert c.this_offset <= f.this_offset < f.this_end <= c.this_end
    result_eval = evaluate_folders(data / "truth", tmp_path / "out")
    assert result_eval.pairs == 2 and result_eval.overall.granularity == 1.0
    shown = CliRunner().invoke(evaluate_command, ["--pan", str(data / "truth"), str(tmp_path / "out")])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[0].split() == ["obfuscation", "cases", "detections", "plagdet", "precision", "recall", "granularity"]
    assert shown.output.splitlines()[2].split()[:3] == ["all", str(result_eval.overall.cases), str(result_eval.overall.detections)]
    as_json = CliRunner().invoke(evaluate_command, ["--pan", str(data / "truth"), str(tmp_path / "out"), "--format", "json"])
    assert json.loads(as_json.output) == result_eval.to_dict()


def test_align_command_bad_pairs_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "pairs").write_text("only-one-name.txt\n")
    result = CliRunner().invoke(align_command, [
        "--pairs", str(tmp_path / "pairs"), "--susp", str(tmp_path), "--src", str(tmp_path), "--out", str(tmp_path / "o"),
    ])
    assert result.exit_code == 1 and "expected 'SUSPICIOUS SOURCE'" in result.output


def test_generate_pan_writes_a_collection_s_pairs(tmp_path: Path) -> None:
    texts = {
        f"p{k}-1/doc.txt": "\n\n".join(" ".join(f"t{k}w{m}" for m in range(p * 40, p * 40 + 40)) for p in range(5))
        for k in range(4)
    }
    raw = [RawDocument(doc_id, text.encode()) for doc_id, text in texts.items()]
    pairs = generate_pan(raw, tmp_path, 3, "high", seed=5)
    assert read_pairs(tmp_path / "pairs") == [(p.susp_name, p.src_name) for p in pairs]
    for pair in pairs:
        (case_,) = read_pair(tmp_path / "truth" / pair_file_name(pair.susp_name, pair.src_name))
        susp = (tmp_path / "susp" / pair.susp_name).read_bytes().decode()
        src = (tmp_path / "src" / pair.src_name).read_bytes().decode()
        tag = src.split()[0].split("w")[0]  # the source's own words: t<k>w<m>
        outside = (susp[: case_.this_offset] + " " + susp[case_.this_end :]).split()
        assert {w.split("w")[0] for w in outside} - {tag} and not any(w.startswith(tag + "w") for w in outside)
        pasted = susp[case_.this_offset : case_.this_end].split()
        original = src[case_.source_offset : case_.source_end].split()
        assert sum(w.startswith(tag + "w") for w in pasted) >= 0.6 * len(original)


def test_unknown_level_is_refused() -> None:
    with pytest.raises(InputError, match="obfuscation must be one of"):
        generate_pairs([_document("a/x", 300, "h"), _document("b/y", 300, "w")], 1, "medium")


def test_unwritable_output_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where a folder should be")
    with pytest.raises(CoderivError, match="cannot write"):
        write_pair(tmp_path / "taken" / "out", "s.txt", "r.txt", [])


def test_exact_and_aligned_passages_as_detections() -> None:
    from coderiv.overlap.align import align_texts
    from coderiv.overlap.align.pan import detections
    from coderiv.overlap.matching import normalize, shared_passages

    source = " ".join(f"w{k}" for k in range(100))
    susp = "intro words here. " + " ".join(f"w{k}" for k in range(20, 60)) + " outro."
    exact = detections("dir/s.txt", "dir/r.txt", shared_passages(normalize(susp), normalize(source)))
    aligned = detections("dir/s.txt", "dir/r.txt", align_texts(susp, source))
    start = susp.index("w20")
    expected = Feature("dir/s.txt", start, len("w20") + susp.index("w59") - start, "dir/r.txt", source.index("w20"),
                       source.index("w59") + 3 - source.index("w20"), DETECTED, "verbatim")
    assert aligned == [expected]  # the names keep their folders (issue 43)
    # The exact passage runs on to the space after w59 (both texts continue with a space there).
    assert exact == [Feature("dir/s.txt", start, 160, "dir/r.txt", source.index("w20"), 160, DETECTED, "verbatim")]
