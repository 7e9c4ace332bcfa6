"""PAN-format text-alignment cases generated from a collection (``coderiv generate --format pan``).

A pair is a *host* document and a *source* document of the collection, from different top-level
folders when the collection has them (different projects in the dev collection, so the two share
no text by descent). One or two passages of the source (each 40-250 words, consecutive, not
overlapping) are obfuscated and pasted into the host at paragraph breaks; the result is the
suspicious document. The truth names each pasted passage's characters in the suspicious document
and its original's in the source, with ``obfuscation`` the level:

- ``none``: the passage verbatim;
- ``noise``: OCR-like damage, as text pasted out of a PDF (PAN 2013's public copy has it): one
  word in ten gets one character replaced by a look-alike ("rn" for "m", "1" for "l", "cl" for
  "d", "tights" for "rights"), and the passage is re-wrapped at about 70 characters;
- ``low`` / ``high``: PAN's *random text operations* (Potthast et al., "An Evaluation Framework
  for Plagiarism Detection", COLING 2010, §4): at 10% (low) or 30% (high) of the word positions,
  one of delete, insert (a word of the host), replace (by a word of the host) or swap (with the
  next word), chosen uniformly.

Output: ``susp/suspicious-documentNNNNN.txt``, ``src/source-documentNNNNN.txt``, ``pairs`` and
``truth/`` (:mod:`coderiv.overlap.align.pan_format`), all UTF-8 with offsets in characters.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from coderiv.errors import CoderivError, InputError
from coderiv.overlap.align.pan_format import PLAGIARISM, Feature, pair_file_name, write_pair
from coderiv.text.analysis import split_paragraphs
from coderiv.text.collection import RawDocument
from coderiv.text.extract import DEFAULT_MARKUP, Markup, extract

LEVELS = ("none", "noise", "low", "high")
#: Share of word positions an operation hits, per level (PAN's random obfuscation).
EDIT_RATE = {"low": 0.10, "high": 0.30}
#: Share of words given one damaged character at level ``noise``.
NOISE_RATE = 0.10
WRAP = 70
MIN_PASSAGE, MAX_PASSAGE = 40, 250
MIN_HOST_WORDS, MIN_SOURCE_WORDS = 150, 80

#: OCR confusions: a character sequence and what a scanner reads instead.
CONFUSIONS = (
    ("m", "rn"), ("rn", "m"), ("l", "1"), ("I", "l"), ("d", "cl"), ("cl", "d"), ("e", "c"), ("c", "e"),
    ("r", "t"), ("h", "b"), ("o", "0"), ("a", "o"), ("n", "ri"), ("u", "ii"), ("'", "C"), ("s", "5"),
)


@dataclass(frozen=True)
class Document:
    """A collection document usable in a pair: its id, text and the character spans of its words."""

    doc_id: str
    text: str
    words: list[tuple[int, int]]

    @property
    def group(self) -> str:
        """Top-level folder of the id, the project in the dev collection."""
        head = self.doc_id.split("/", 1)[0]
        return head.rsplit("-", 1)[0] if "/" in self.doc_id else ""


def usable_documents(documents: Iterable[RawDocument], markup: Markup = DEFAULT_MARKUP) -> list[Document]:
    """Documents with text of at least :data:`MIN_SOURCE_WORDS` words (markup read by ``markup``)."""
    out = []
    for doc in documents:
        try:
            text = extract(doc.data, doc.doc_id, markup).text
        except CoderivError:
            continue
        spans = [(s, s + len(w)) for s, w in _word_spans(text)]
        if len(spans) >= MIN_SOURCE_WORDS:
            out.append(Document(doc.doc_id, text, spans))
    return out


def _word_spans(text: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for token in text.split():
        pos = text.index(token, pos)
        out.append((pos, token))
        pos += len(token)
    return out


def add_noise(text: str, rng: random.Random, rate: float = NOISE_RATE, wrap: int = WRAP) -> str:
    """OCR-like damage: ``rate`` of the words get one confusion, then the text is re-wrapped."""
    words = text.split()
    for k, word in enumerate(words):
        if rng.random() >= rate:
            continue
        options = [(a, b) for a, b in CONFUSIONS if a in word]
        if options:
            a, b = rng.choice(options)
            at = [i for i in range(len(word)) if word.startswith(a, i)]
            i = rng.choice(at)
            words[k] = word[:i] + b + word[i + len(a):]
        else:
            i = rng.randrange(len(word))
            words[k] = word[:i] + rng.choice("il1|.,") + word[i + 1:]
    return _wrap(words, wrap)


def random_operations(text: str, rate: float, fillers: list[str], rng: random.Random, wrap: int = WRAP) -> str:
    """PAN's random text operations at ``rate`` of the word positions (module docstring)."""
    words = text.split()
    out: list[str] = []
    k = 0
    while k < len(words):
        if rng.random() >= rate:
            out.append(words[k])
            k += 1
            continue
        op = rng.choice(("delete", "insert", "replace", "swap"))
        if op == "insert":
            out.extend([rng.choice(fillers), words[k]])
        elif op == "replace":
            out.append(rng.choice(fillers))
        elif op == "swap" and k + 1 < len(words):
            out.extend([words[k + 1], words[k]])
            k += 1
        elif op == "swap":
            out.append(words[k])
        k += 1
    return _wrap(out or [rng.choice(fillers)], wrap)


def _wrap(words: list[str], width: int) -> str:
    lines, line = [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)


def obfuscate(passage: str, level: str, fillers: list[str], rng: random.Random) -> str:
    """The passage as the plagiarist pastes it at ``level`` (module docstring)."""
    if level == "none":
        return passage
    if level == "noise":
        return add_noise(passage, rng)
    return random_operations(passage, EDIT_RATE[level], fillers, rng)


@dataclass(frozen=True)
class GeneratedPair:
    """One pair: the suspicious and source texts and the truth (offsets in characters)."""

    susp_name: str
    src_name: str
    susp_text: str
    src_text: str
    cases: list[Feature]


def make_pair(number: int, host: Document, source: Document, level: str, rng: random.Random) -> GeneratedPair:
    """Paste one or two obfuscated passages of ``source`` into ``host`` (module docstring)."""
    susp_name, src_name = f"suspicious-document{number:05d}.txt", f"source-document{number:05d}.txt"
    count = 2 if len(source.words) >= 2 * MAX_PASSAGE and rng.random() < 0.5 else 1
    segment = len(source.words) // count
    spans = []
    for k in range(count):  # one passage inside each of ``count`` equal segments of the source
        size = min(rng.randint(MIN_PASSAGE, MAX_PASSAGE), segment)
        start = k * segment + rng.randrange(segment - size + 1)
        spans.append((source.words[start][0], source.words[start + size - 1][1]))
    fillers = [host.text[s:e] for s, e in host.words]
    breaks = [0, *(m for m in _paragraph_starts(host.text)), len(host.text)]
    where = sorted(rng.sample(breaks, min(len(spans), len(breaks))))
    pieces, cases, pos, last = [], [], 0, 0
    for at, (s0, s1) in zip(where, spans):
        pieces.append(host.text[last:at])
        pos += at - last
        pasted = obfuscate(source.text[s0:s1], level, fillers, rng)
        lead = "\n\n" if at else ""
        pieces.append(lead + pasted + "\n\n")
        cases.append(Feature(susp_name, pos + len(lead), len(pasted), src_name, s0, s1 - s0, PLAGIARISM, level, "artificial"))
        pos += len(lead) + len(pasted) + 2
        last = at
    pieces.append(host.text[last:])
    return GeneratedPair(susp_name, src_name, "".join(pieces), source.text, cases)


def _paragraph_starts(text: str) -> list[int]:
    starts, pos = [], 0
    for paragraph in split_paragraphs(text):
        pos = text.index(paragraph, pos)
        if pos:
            starts.append(pos)
        pos += len(paragraph)
    return starts


def generate_pairs(documents: list[Document], count: int, level: str, seed: int = 0) -> list[GeneratedPair]:
    """``count`` pairs at ``level``, hosts and sources drawn with ``seed``."""
    if level not in LEVELS:
        raise InputError(f"obfuscation must be one of {list(LEVELS)!r} (got {level!r})")
    hosts = [d for d in documents if len(d.words) >= MIN_HOST_WORDS]
    if len(hosts) < 2 or count < 1:
        raise InputError(f"need {MIN_HOST_WORDS}+-word documents for at least one pair (found {len(hosts)})")
    rng = random.Random(seed)
    pairs = []
    for number in range(1, count + 1):
        host = rng.choice(hosts)
        others = [d for d in documents if d.group != host.group or not host.group] or documents
        source = rng.choice([d for d in others if d.doc_id != host.doc_id])
        pairs.append(make_pair(number, host, source, level, rng))
    return pairs


def write_pairs(pairs: list[GeneratedPair], out_dir: Path) -> None:
    """``susp/``, ``src/``, ``pairs`` and ``truth/`` of the pairs under ``out_dir``."""
    for sub in ("susp", "src", "truth"):
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    lines = []
    for pair in pairs:
        (out_dir / "susp" / pair.susp_name).write_bytes(pair.susp_text.encode("utf-8"))
        (out_dir / "src" / pair.src_name).write_bytes(pair.src_text.encode("utf-8"))
        write_pair(out_dir / "truth", pair.susp_name, pair.src_name, pair.cases)
        lines.append(f"{pair.susp_name} {pair.src_name}\n")
    (out_dir / "pairs").write_text("".join(lines), "utf-8")


def generate_pan(
    documents: Iterable[RawDocument], out_dir: Path, count: int, level: str, seed: int = 0, sample: int | None = None,
    markup: Markup = DEFAULT_MARKUP,
) -> list[GeneratedPair]:
    """``coderiv generate --format pan``: ``count`` pairs at ``level`` from a collection's
    documents (``sample`` of them drawn with ``seed`` first, to spare extracting all; markup
    read by ``markup``), written under ``out_dir``."""
    raw = list(documents)
    if sample is not None and sample < len(raw):
        raw = random.Random(seed).sample(raw, sample)
    pairs = generate_pairs(usable_documents(raw, markup), count, level, seed)
    write_pairs(pairs, out_dir)
    return pairs


__all__ = ["LEVELS", "GeneratedPair", "generate_pairs", "generate_pan", "make_pair", "pair_file_name", "usable_documents", "write_pairs"]
