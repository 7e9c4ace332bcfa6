"""Document fingerprints (SPEC §5, paper 004 "Fingerprinting"): minutiae and selection strategies.

A **phrase** is g consecutive terms of the analysed document (phrases run across sentence and
paragraph boundaries, as the paper reduced documents to strings of words); a document with fewer
than g terms has one phrase, all of its terms. A phrase's **minutia** is the Ramakrishna–Zobel
shift-add-xor hash of its terms joined by one space (:func:`minutia_hash`). A **strategy**
selects which phrases make the fingerprint; the fingerprint is the *set* of their minutiae.

Every strategy is a small function ``(Phrases, params) -> minutiae`` registered by name in
:data:`STRATEGIES` with the parameters it takes and their defaults (g, the granularity, is
common to all). The key kind ``fingerprint`` (:mod:`coderiv.keys.kinds`) stores a fingerprint per
document in the index, so fingerprint stores are built in the same worker pass as the terms and
updated incrementally with them; its canonical store name lists exactly the parameters the
strategy uses, e.g. ``fingerprint:g=4,strategy=anchor``.

A shared minutia is evidence, not proof, of a shared phrase: two different phrases can hash to
the same 32-bit minutia (about one pair in 4·10⁹), and the score counts distinct shared minutiae.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from coderiv.errors import InputError
from coderiv.keys.kinds import Extractor, KeyKind, StoreSpec, presence_keys, register_kind
from coderiv.registry import Registry
from coderiv.text.analysis import AnalyzedDocument

MASK32 = 0xFFFFFFFF
_FEW_SPANS = 32  # below this many spans, finishing them in Python beats an array operation
DEFAULT_MODULUS = 2**32
DEFAULT_GRANULARITY = 4
DEFAULT_RESOLUTION = 15

#: The 35 two-character anchors (paper 004: "selected at random, but extremely common strings
#: such as 'th' and 'it' were rejected"). Chosen once by ``benchmarks/choose_anchors.py``: the
#: 676 letter pairs shuffled with a fixed seed, keeping those that begin 0.2–1% of the terms of
#: a fixed English reference text (software licences), never looking at an evaluation collection.
ANCHORS: tuple[str, ...] = (
    "ag", "an", "ar", "as", "at", "au", "av", "ca", "ch", "da", "ei", "ev", "fa", "ge", "gi",
    "ho", "im", "la", "le", "lo", "mu", "nu", "ob", "of", "or", "ot", "ri", "ru", "si", "sp",
    "st", "su", "un", "wh", "wi",
)


# -- the minutia hash ---------------------------------------------------------------------------
def minutia_hash(phrase: str, m: int = DEFAULT_MODULUS) -> int:
    """The minutia of one phrase: h ← h ⊕ (A(c) + (h ≪ 6) + (h ≫ 2)) over its characters,
    h starting at 0, unsigned 32-bit arithmetic, then h mod m (SPEC §5, paper 004 eq. 1–2).

    The reference form, one character at a time; :class:`Phrases` computes the same values for
    all phrases of a document at once.
    """
    return _fold(0, map(ord, phrase)) % m


def _fold(h: int, code_points: Iterable[int]) -> int:
    """Equation 1 over a sequence of code points, from state h (the one scalar form)."""
    for c in code_points:
        h ^= (c + (h << 6) + (h >> 2)) & MASK32
    return h


def span_hashes(codes: np.ndarray, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Shift-add-xor hashes (uint32, before mod m) of the code-point spans ``codes[begin:end]``.

    Vectorized across spans: spans are sorted by length, longest first, and character j of the
    ``count[j]`` spans longer than j is folded in by one array operation, so the work is the
    total number of characters. Once only a few long spans remain (a long identifier or URL),
    they are finished one character at a time, which is cheaper than an array operation per
    character for a handful of spans.
    """
    begin = np.asarray(begin, np.int64)
    lengths = np.asarray(end, np.int64) - begin
    out = np.zeros(len(begin), np.uint32)
    if len(begin) == 0:
        return out
    order = np.argsort(-lengths, kind="stable")
    starts, lengths = begin[order], lengths[order]
    longest = int(lengths[0])
    active = np.searchsorted(-lengths, -np.arange(longest), side="left")  # spans longer than j
    h = np.zeros(len(starts), np.uint32)
    six, two = np.uint32(6), np.uint32(2)
    for j in range(longest):
        n = int(active[j])
        if n <= _FEW_SPANS:
            for i in range(n):
                h[i] = _fold(int(h[i]), codes[starts[i] + j : starts[i] + lengths[i]].tolist())
            break
        hv = h[:n]
        h[:n] = hv ^ (codes[starts[:n] + j] + (hv << six) + (hv >> two))
    out[order] = h
    return out


class Phrases:
    """An analysed document as phrases of g terms, with their minutiae computed on demand.

    Phrase i covers terms ``i … min(i + g, n) − 1``; phrases start at 0 … ``n_phrases − 1``
    where ``n_phrases = max(n − g + 1, 1)`` (0 for an empty document), so every phrase has g
    terms unless the whole document is shorter than g.
    """

    def __init__(self, doc: AnalyzedDocument, g: int, m: int = DEFAULT_MODULUS) -> None:
        self.doc = doc
        self.terms = doc.terms
        self.g = g
        self.m = m
        n = len(self.terms)
        self.n = n
        self.n_phrases = max(n - g + 1, 1) if n else 0
        lengths = np.fromiter(map(len, self.terms), np.int64, n)
        self.word_begin = np.cumsum(lengths + 1) - (lengths + 1)
        self.word_end = self.word_begin + lengths
        self.codes = np.frombuffer(" ".join(self.terms).encode("utf-32-le"), np.uint32)

    def valid_starts(self, starts: np.ndarray) -> np.ndarray:
        """The given start positions that begin a phrase (in range), in the given order."""
        starts = np.asarray(starts, np.int64)
        return starts[(starts >= 0) & (starts < self.n_phrases)]

    def span_minutiae(self, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        """Minutiae of the phrases made of terms ``first[i] … last[i]`` (inclusive), as uint64."""
        first = np.asarray(first, np.int64)
        last = np.asarray(last, np.int64)
        h = span_hashes(self.codes, self.word_begin[first], self.word_end[last]).astype(np.uint64)
        return h if self.m == DEFAULT_MODULUS else h % np.uint64(self.m)

    def minutiae(self, starts: np.ndarray) -> np.ndarray:
        """Minutiae of the g-term phrases starting at ``starts`` (out-of-range starts dropped)."""
        starts = self.valid_starts(starts)
        if "all_minutiae" in self.__dict__:  # every phrase is hashed already (another store)
            return np.asarray(self.all_minutiae[starts], np.uint64)
        return self.span_minutiae(starts, np.minimum(starts + self.g, self.n) - 1)

    @cached_property
    def all_minutiae(self) -> np.ndarray:
        """The minutia of every phrase, in text order (the ``full`` fingerprint, with repeats)."""
        return self.minutiae(np.arange(self.n_phrases))


# -- the strategy registry ----------------------------------------------------------------------
Params = Mapping[str, Any]
SelectFn = Callable[[Phrases, Params], np.ndarray]


@dataclass(frozen=True)
class Strategy:
    """A registered selection strategy: its function, its parameters' defaults, what it is."""

    name: str
    select: SelectFn
    params: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    needs_collection: bool = False  # selection finished at query time from collection statistics


STRATEGIES: Registry[Strategy] = Registry("strategy")


def register_strategy(
    name: str, description: str, needs_collection: bool = False, **params: Any
) -> Callable[[SelectFn], SelectFn]:
    """Register a strategy function under ``name`` with its parameters' defaults."""

    def add(fn: SelectFn) -> SelectFn:
        STRATEGIES.add(name, Strategy(name, fn, dict(params), description, needs_collection))
        return fn

    return add


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name``, or a clear error listing the known ones."""
    return STRATEGIES.get(name)


@register_strategy("full", "every overlapping phrase")
def full(doc: Phrases, params: Params) -> np.ndarray:
    return doc.all_minutiae


@register_strategy("random", "r phrases drawn at random, seeded by the document's own terms", r=DEFAULT_RESOLUTION, seed=0)
def random_phrases(doc: Phrases, params: Params) -> np.ndarray:
    content = hashlib.blake2b("\0".join(doc.terms).encode("utf-8"), digest_size=8, key=str(params["seed"]).encode())
    rng = np.random.default_rng(int.from_bytes(content.digest(), "little"))
    count = min(int(params["r"]), doc.n_phrases)
    return doc.minutiae(np.sort(rng.choice(doc.n_phrases, count, replace=False)))


@register_strategy("all-substrings", "non-overlapping phrases at 0, g, 2g, …")
def all_substrings(doc: Phrases, params: Params) -> np.ndarray:
    return doc.minutiae(np.arange(0, doc.n_phrases, doc.g))


@register_strategy("first-r", "the first r non-overlapping phrases (at 0, g, …, (r−1)g)", r=DEFAULT_RESOLUTION)
def first_r(doc: Phrases, params: Params) -> np.ndarray:
    return doc.minutiae(np.arange(0, doc.n_phrases, doc.g)[: int(params["r"])])


@register_strategy("first-r-sliding", "the phrases at 0, 1, …, r−1", r=DEFAULT_RESOLUTION)
def first_r_sliding(doc: Phrases, params: Params) -> np.ndarray:
    return doc.minutiae(np.arange(min(int(params["r"]), doc.n_phrases)))


@register_strategy(
    "rarest-prefix",
    "r phrases starting at the words whose p-character prefix is rarest in the document",
    r=DEFAULT_RESOLUTION,
    p=3,
)
def rarest_prefix(doc: Phrases, params: Params) -> np.ndarray:
    """Start words ordered by (occurrences of their prefix in the document, prefix, position):
    the tie-break on the prefix itself, not the position, keeps the choice independent of where
    text was inserted."""
    p = int(params["p"])
    prefixes = [t[:p] for t in doc.terms]
    counts = Counter(prefixes)
    starts = list(range(doc.n_phrases))
    starts.sort(key=lambda i: (counts[prefixes[i]], prefixes[i], i))
    return doc.minutiae(np.array(starts[: int(params["r"])], np.int64))


@register_strategy(
    "rarest-in-document",
    "the r distinct minutiae occurring least often in the document (ties: smallest minutia)",
    r=DEFAULT_RESOLUTION,
)
def rarest_in_document(doc: Phrases, params: Params) -> np.ndarray:
    values, counts = np.unique(doc.all_minutiae, return_counts=True)
    return values[np.lexsort((values, counts))[: int(params["r"])]]


@register_strategy(
    "rarest-in-collection",
    "the r minutiae with the fewest documents in the collection (ties: smallest minutia); the "
    "store keeps every minutia and the selection is made from the live collection at query time",
    needs_collection=True,
    r=DEFAULT_RESOLUTION,
)
def rarest_in_collection(doc: Phrases, params: Params) -> np.ndarray:
    """The candidate pool: every minutia (the choice needs the whole collection's frequencies,
    which change with every update, so :func:`rarest_selection` makes it exactly when queried)."""
    return doc.all_minutiae


@register_strategy("lowest-hash", "the r smallest distinct minutiae (Heintze)", r=DEFAULT_RESOLUTION)
def lowest_hash(doc: Phrases, params: Params) -> np.ndarray:
    return np.unique(doc.all_minutiae)[: int(params["r"])]


@register_strategy("anchor", "a phrase at every word beginning with one of the 35 ANCHORS")
def anchor(doc: Phrases, params: Params) -> np.ndarray:
    # a word's first two code points as one number, compared with the anchors' (vectorized)
    long_enough = doc.word_end - doc.word_begin >= 2
    second = doc.codes[np.minimum(doc.word_begin + 1, len(doc.codes) - 1)].astype(np.int64)
    pairs = (doc.codes[doc.word_begin].astype(np.int64) << 21) | second
    return doc.minutiae(np.flatnonzero(long_enough & np.isin(pairs, _ANCHOR_PAIRS)))


_ANCHOR_PAIRS = np.array([(ord(a[0]) << 21) | ord(a[1]) for a in ANCHORS], np.int64)


def _kth_of_units(unit_starts: list[int], n: int, k: int) -> np.ndarray:
    """Position of the k-th term (1-based) of each unit (sentence, paragraph) that has k terms."""
    starts = np.array(unit_starts, np.int64)
    ends = np.append(starts[1:], n) if len(starts) else starts
    kth = starts + (k - 1)
    return kth[kth < ends]


@register_strategy("kth-in-sentence", "a phrase at the K-th word of each sentence", k=5)
def kth_in_sentence(doc: Phrases, params: Params) -> np.ndarray:
    return doc.minutiae(_kth_of_units(doc.doc.sentence_starts, doc.n, int(params["k"])))


@register_strategy("kth-sentence", "a phrase at the start of sentences 1, K+1, 2K+1, …", k=5)
def kth_sentence(doc: Phrases, params: Params) -> np.ndarray:
    return doc.minutiae(np.array(doc.doc.sentence_starts[:: int(params["k"])], np.int64))


@register_strategy("kth-in-paragraph", "a phrase at the K-th word of each paragraph", k=15)
def kth_in_paragraph(doc: Phrases, params: Params) -> np.ndarray:
    return doc.minutiae(_kth_of_units(doc.doc.paragraph_starts, doc.n, int(params["k"])))


@register_strategy(
    "hashed-breakpoints",
    "COPS: phrases of variable length, each ending after a word whose hash is 0 mod k (k: g)",
    k=None,
)
def hashed_breakpoints(doc: Phrases, params: Params) -> np.ndarray:
    """Breakpoint words are those whose own minutia hash is 0 mod k (k = g unless given), so
    phrases average k words; the text after the last breakpoint is a phrase too."""
    if doc.n == 0:
        return np.empty(0, np.uint64)
    k = int(params["k"])
    word_hashes = span_hashes(doc.codes, doc.word_begin, doc.word_end)
    last = np.flatnonzero(word_hashes % np.uint32(k) == 0)
    if len(last) == 0 or last[-1] != doc.n - 1:
        last = np.append(last, doc.n - 1)
    first = np.concatenate(([0], last[:-1] + 1))
    return doc.span_minutiae(first, last)


@register_strategy(
    "winnowing",
    "the smallest minutia of every window of w consecutive phrases (Schleimer, Wilkerson & Aiken 2003)",
    w=8,
)
def winnowing(doc: Phrases, params: Params) -> np.ndarray:
    """Winnowing keeps the minimum of each window of w consecutive phrase minutiae, so any
    shared run of at least w + g − 1 words yields a shared minutia (the paper's guarantee);
    the fingerprint is a set, so which of tied minima is "selected" does not matter."""
    hashes = doc.all_minutiae
    w = int(params["w"])
    if len(hashes) <= w:  # one window (or none)
        return hashes[np.argsort(hashes)[:1]]
    return np.asarray(np.lib.stride_tricks.sliding_window_view(hashes, w).min(axis=1), np.uint64)


# -- the key kind -------------------------------------------------------------------------------
def normalize_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Validated, canonical parameters of a fingerprint store: ``strategy``, ``g``, exactly the
    strategy's own parameters (defaults filled), and ``m`` only when it is not 2³²."""
    given = dict(params)
    strategy = get_strategy(str(given.pop("strategy", "anchor")))
    allowed = {"g", "m", *strategy.params}
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise InputError(
            f"strategy {strategy.name} takes parameters {sorted(allowed)!r} (got {', '.join(unknown)})"
        )
    out: dict[str, Any] = {"strategy": strategy.name}
    merged = {"g": DEFAULT_GRANULARITY, **strategy.params, **given}
    if merged.get("k", 0) is None:  # hashed-breakpoints: phrases of g words on average
        merged["k"] = merged["g"]
    for key, value in merged.items():
        if key == "seed":  # any integer
            out[key] = _int(value, key, strategy.name)
        elif key != "m":
            out[key] = _positive_int(key, value, strategy.name)
    m = _positive_int("m", merged.get("m", DEFAULT_MODULUS), strategy.name)
    if not 2 <= m <= DEFAULT_MODULUS:
        raise InputError(f"m must be in 2..2**32 (got {m})")
    if m != DEFAULT_MODULUS:
        out["m"] = m
    return out


def _int(value: Any, key: str, strategy: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{strategy}: {key} must be an integer (got {value!r})") from None
    if isinstance(value, float) and value != number:
        raise InputError(f"{strategy}: {key} must be an integer (got {value!r})")
    return number


def _positive_int(key: str, value: Any, strategy: str) -> int:
    number = _int(value, key, strategy)
    if number < 1:
        raise InputError(f"{strategy}: {key} must be at least 1 (got {number})")
    return number


_LAST: list[Phrases] = []


def phrases_of(doc: AnalyzedDocument, g: int, m: int = DEFAULT_MODULUS) -> Phrases:
    """The :class:`Phrases` of ``doc``, shared by the stores of one indexing pass: a worker
    runs every store's extractor on a document in turn, so stores of the same g hash each
    phrase once (a few recent entries are kept; they hold the document, so identity is safe)."""
    for phrases in _LAST:
        if phrases.doc is doc and phrases.g == g and phrases.m == m:
            return phrases
    phrases = Phrases(doc, g, m)
    _LAST.insert(0, phrases)
    del _LAST[4:]
    return phrases


def fingerprint_function(params: Mapping[str, Any]) -> Callable[[AnalyzedDocument], np.ndarray]:
    """``doc -> its distinct minutiae (sorted uint64)`` for canonical store parameters."""
    params = normalize_params(params)
    strategy = STRATEGIES[params["strategy"]]
    g, m = params["g"], params.get("m", DEFAULT_MODULUS)

    def fingerprint(doc: AnalyzedDocument) -> np.ndarray:
        phrases = phrases_of(doc, g, m)
        if phrases.n == 0:
            return np.empty(0, np.uint64)
        return np.unique(np.asarray(strategy.select(phrases, params), np.uint64))

    return fingerprint


def _make_extractor(params: dict[str, Any]) -> Extractor:
    fingerprint = fingerprint_function(params)

    def extract(doc: AnalyzedDocument) -> tuple[np.ndarray, np.ndarray]:
        return presence_keys(fingerprint(doc))

    return extract


FINGERPRINT_KIND = register_kind(KeyKind(
    "fingerprint",
    _make_extractor,
    defaults={"strategy": "anchor", "g": DEFAULT_GRANULARITY},
    needs_structure=True,
    description="distinct minutiae of the phrases a selection strategy picks (SPEC §5)",
    normalize=normalize_params,
))


def parse_params(text: str) -> dict[str, Any]:
    """``STRATEGY[:KEY=VALUE[,KEY=VALUE…]]`` → ``{"strategy": …, KEY: VALUE…}`` as written.

    ``:`` may also separate the parameters (``anchor:g=3:r=15``), so that a name survives a
    comma-separated list of names; a store's canonical name (``fingerprint:g=4,strategy=anchor``)
    is accepted too.
    """
    strategy, _, rest = text.strip().removeprefix("fingerprint:").partition(":")
    params: dict[str, Any] = {}
    if "=" in strategy:  # a store's own name: fingerprint:g=4,strategy=anchor
        rest = strategy + "," + rest
    else:
        params["strategy"] = strategy.strip()
    for item in rest.replace(":", ",").split(","):
        if not item.strip():
            continue
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InputError(f"fingerprint {text!r}: expected KEY=VALUE, got {item!r}")
        params[key.strip()] = value.strip()
    return params


def parse_fingerprint(text: str) -> StoreSpec:
    """The store described by ``STRATEGY[:KEY=VALUE,…]``, e.g. ``first-r-sliding:g=4,r=15``."""
    return StoreSpec.create("fingerprint", **parse_params(text))
