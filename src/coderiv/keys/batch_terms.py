"""Term counts of many ASCII texts at once, in whole-batch numpy passes over their bytes.

The per-document path (:meth:`~coderiv.text.analysis.Analyzer.counts` then
:func:`~coderiv.keys.kinds.counted_keys`) runs a regular expression, builds a Python string per
word, counts them in a :class:`~collections.Counter` and hashes the distinct words; that is
most of an index build's CPU time. For texts that are pure ASCII, SPEC §1 reduces to bytes:
a word is a maximal run of ``[0-9A-Za-z]``, case folding is ``A-Z → a-z``, and a word's code
points are its bytes. So a batch of texts is joined into one byte array and every step is a
numpy pass over it, with no Python object per word:

- **words:** a 256-entry table maps each byte to its folded value, 0 for a non-word byte;
  word starts and ends are where that becomes / stops being non-zero;
- **keys:** :func:`~coderiv.keys.kinds.term_keys` is ``mix64(Σ_j c_j·P^j ⊕ len·P ⊕ seed)``.
  With ``v_g = c_g·P^g`` over the byte position g (0 for non-word bytes) and its prefix sum
  ``S``, a word at ``s..e`` has ``Σ_j c_j·P^j = (S_e − S_{s−1})·P^{−s}`` (P is odd, hence
  invertible modulo 2⁶⁴), so every word's key costs a few array operations per byte;
- **stopping:** a word whose key is a stopword's key is then compared byte for byte with that
  stopword (no word is stopped because of a hash collision);
- **counting:** each text's keys are sorted and run-length counted.

The result equals the per-document path key for key and count for count (property-tested over
arbitrary text in ``tests/test_batch_terms.py``); non-ASCII texts keep the exact per-document
path. Long texts are cut at non-word bytes into pieces of at most :data:`GROUP_BYTES`, whose
counts are merged, so a huge document never needs more than a few times that in memory
beyond its own text.

The words and keys step has a compiled twin, :mod:`coderiv.keys.compiled_terms` (numba,
``coderiv[fast]``), used when the indexing parent has loaded it; same starts, lengths and keys.

numpy only (no compiled extension): measured on the synthetic 20,000-document collection
(docs/performance-history.md, "Build speed"), this takes analysis from ~0.45 ms to ~0.05 ms of CPU per
8 KB document, below the writer's own cost, with nothing to compile or import at start-up.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from coderiv.keys import compiled_terms
from coderiv.keys.kinds import _MULTIPLIER, _SEED, mix64, term_keys

#: Bytes of text hashed in one group of numpy passes (pieces of longer texts are this size).
GROUP_BYTES = 1 << 18

#: A long text's partial counts (one per piece) are merged whenever this many accumulate.
MERGE_PARTS = 32

_FOLD = np.zeros(256, np.uint8)
for _byte in b"0123456789abcdefghijklmnopqrstuvwxyz":
    _FOLD[_byte] = _byte
for _byte in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _FOLD[_byte] = _byte + 32
#: the same table for :meth:`bytes.translate` (a C pass, about 2.5× faster than a numpy gather)
_FOLD_BYTES = _FOLD.tobytes()


def _inverse(odd: int) -> int:
    """The multiplicative inverse of an odd number modulo 2⁶⁴ (Newton's iteration)."""
    inverse = odd
    for _ in range(6):
        inverse = inverse * (2 - odd * inverse) % (1 << 64)
    return inverse


_P = int(_MULTIPLIER)
_P_INVERSE = _inverse(_P)


def _geometric(ratio: int, count: int) -> np.ndarray:
    """ratio⁰ … ratio^(count−1) in wrapping uint64 arithmetic, by doubling."""
    powers = np.ones(1, np.uint64)
    with np.errstate(over="ignore"):
        while len(powers) < count:
            step = np.uint64(pow(ratio, len(powers), 1 << 64))
            powers = np.concatenate((powers, powers * step))
    return powers[:count]


_POWERS = np.ones(0, np.uint64)
_INVERSE_POWERS = np.ones(0, np.uint64)


def _power_tables(count: int) -> tuple[np.ndarray, np.ndarray]:
    """P^g and P^−g for 0 ≤ g < count (cached, grown on demand)."""
    global _POWERS, _INVERSE_POWERS
    if len(_POWERS) < count:
        size = max(count, GROUP_BYTES + 1)
        _POWERS, _INVERSE_POWERS = _geometric(_P, size), _geometric(_P_INVERSE, size)
    return _POWERS[:count], _INVERSE_POWERS[:count]


class StopTable:
    """A stoplist's ASCII words as sorted keys plus each one's bytes, for exact byte-level
    stopping of ASCII text. The batch path reads only ASCII pieces, whose words cannot equal a
    case-folded stopword with any other character (``für``), so those are left out."""

    def __init__(self, words: Iterable[str]) -> None:
        ordered = sorted((w for w in words if w.isascii()), key=lambda w: int(term_keys([w])[0]))
        self.keys = term_keys(ordered) if ordered else np.empty(0, np.uint64)
        self.lengths = np.array([len(w) for w in ordered], np.int64)
        self.width = max(self.lengths, default=1)
        #: true at the low 16 bits of every stopword's key: most words are ruled out by one lookup
        self.filter = np.zeros(1 << 16, bool)
        self.filter[(self.keys & np.uint64(0xFFFF)).astype(np.intp)] = True
        self.bytes = np.zeros((len(ordered), self.width), np.uint8)
        for row, word in enumerate(ordered):
            self.bytes[row, : len(word)] = np.frombuffer(word.encode(), np.uint8)

    def stopped(self, data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Which words of ``data`` (ASCII bytes, folded or not) are stopwords: same key, then
        same length and folded bytes."""
        if not len(self.keys) or not len(keys):
            return np.zeros(len(keys), bool)
        candidate = np.flatnonzero(self.filter[(keys & np.uint64(0xFFFF)).astype(np.intp)])
        row = np.minimum(np.searchsorted(self.keys, keys[candidate]), len(self.keys) - 1)
        hit = self.keys[row] == keys[candidate]
        candidate, row = candidate[hit], row[hit]
        same_length = self.lengths[row] == lengths[candidate]
        candidate, row = candidate[same_length], row[same_length]
        columns = np.arange(self.width)
        at = np.minimum(starts[candidate][:, None] + columns, len(data) - 1)
        inside = columns < lengths[candidate][:, None]
        same = np.all(np.where(inside, _FOLD[data[at]], 0) == self.bytes[row], axis=1)
        stopped = np.zeros(len(keys), bool)
        stopped[candidate[same]] = True
        return stopped


class LongWordError(ValueError):
    """A text has a word longer than :data:`LONGEST_WORD` bytes: the batch path would need
    tens of bytes of memory per byte of it, so such a batch takes the per-document path."""


#: Longest word (bytes) the batch path hashes.
LONGEST_WORD = 1 << 22


def _ascii(text: str | bytes, start: int, end: int) -> bytes:
    """``text[start:end]`` as ASCII bytes (a text given as bytes is sliced as it is)."""
    part = text[start:end]
    return part if isinstance(part, bytes) else part.encode("ascii")


def _after_next_gap(text: str | bytes, probe: int, start: int, limit: int) -> int:
    """The position just after the first non-word byte at or after ``probe`` (or the end)."""
    while probe < len(text):
        if probe - start > LONGEST_WORD:
            raise LongWordError(f"a word of more than {LONGEST_WORD} bytes")
        gap = _ascii(text, probe, probe + limit).translate(_FOLD_BYTES).find(0)
        if gap >= 0:
            return probe + gap + 1
        probe += limit
    return len(text)


def _pieces(text: str | bytes, limit: int) -> Iterator[bytes]:
    """An ASCII text's bytes in pieces of about ``limit``, each cut just after a non-word
    byte, so no word spans two pieces (a piece grows past ``limit`` only for a longer word,
    up to :data:`LONGEST_WORD`)."""
    if len(text) <= limit:
        if text:
            yield _ascii(text, 0, len(text))
        return
    start = 0
    while start < len(text):
        end = start + limit
        if end < len(text):
            gap = _ascii(text, start, end).translate(_FOLD_BYTES).rfind(0)
            end = start + gap + 1 if gap >= 0 else _after_next_gap(text, end, start, limit)
        yield _ascii(text, start, end)
        start = end


def numpy_word_keys(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, lengths, keys) of the words of ASCII bytes, in numpy passes (see the module's
    docstring); :func:`coderiv.keys.compiled_terms.word_keys` gives the same in one loop."""
    codes = np.frombuffer(data.translate(_FOLD_BYTES), np.uint8)
    inside = np.zeros(len(codes) + 2, bool)
    np.not_equal(codes, 0, out=inside[1:-1])
    edges = np.flatnonzero(inside[1:] != inside[:-1])
    starts, ends = edges[0::2], edges[1::2]
    lengths = ends - starts
    powers, inverse = _power_tables(len(codes))
    with np.errstate(over="ignore"):
        prefix = np.cumsum(np.multiply(codes, powers, dtype=np.uint64), dtype=np.uint64)
        sums = prefix[ends - 1]
        sums[1:] -= prefix[starts[1:] - 1]
        if len(starts) and starts[0] > 0:
            sums[0] -= prefix[starts[0] - 1]
        keys = mix64((sums * inverse[starts]) ^ (lengths.astype(np.uint64) * _MULTIPLIER) ^ _SEED)
    return starts, lengths, keys


def _group_counts(
    pieces: Sequence[bytes], stops: StopTable | None, sequences: list[np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(keys, counts, distinct keys per piece) of pieces hashed together; each piece's keys
    are sorted ascending. With ``sequences``, each piece's kept keys in text order are appended
    to it (views of one array), for the chunk ids of :mod:`coderiv.keys.batch_chunks`."""
    joined = b" ".join(pieces)
    data = np.frombuffer(joined, np.uint8)
    if compiled_terms.loaded():
        starts, lengths, keys = compiled_terms.word_keys(data, _FOLD)
    else:
        starts, lengths, keys = numpy_word_keys(joined)
    piece_starts = np.cumsum([0] + [len(p) + 1 for p in pieces[:-1]], dtype=np.int64)
    words_per_piece = np.diff(np.append(np.searchsorted(starts, piece_starts), len(starts)))
    owner = np.repeat(np.arange(len(pieces)), words_per_piece)
    if stops is not None:
        keep = ~stops.stopped(data, starts, lengths, keys)
        keys, owner = keys[keep], owner[keep]
    bounds = np.searchsorted(owner, np.arange(len(pieces) + 1))
    if sequences is not None:
        in_order = keys.copy()  # the sorts below are in place
        sequences.extend(in_order[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        keys[a:b].sort()
    if not len(keys):
        return keys, np.empty(0, np.int32), np.zeros(len(pieces), np.int64)
    new = np.empty(len(keys), bool)
    new[0] = True
    new[1:] = (keys[1:] != keys[:-1]) | (owner[1:] != owner[:-1])
    firsts = np.flatnonzero(new)
    counts = np.diff(np.append(firsts, len(keys))).astype(np.int32)  # a piece holds < 2³¹ words
    return keys[firsts], counts, np.bincount(owner[firsts], minlength=len(pieces))


def merge_counts(parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One text's (sorted distinct keys, counts) from its pieces' (sorted keys, counts)."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    keys = np.concatenate([k for k, _ in parts])
    counts = np.concatenate([c for _, c in parts])
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], counts[order]
    if not len(keys):
        return keys, counts
    firsts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    return keys[firsts], np.add.reduceat(counts, firsts)


def ascii_term_counts(
    texts: Sequence[str | bytes], stops: StopTable | None, group_bytes: int = GROUP_BYTES
) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each ASCII text (a string, or its bytes), its sorted distinct term keys and int32 counts (stopwords of
    ``stops`` removed): what ``counted_keys(Analyzer(...).counts(text).term_counts(),
    term_key)`` gives, without stemming."""
    return _ascii_terms(texts, stops, group_bytes, None)


def ascii_term_sequences(
    texts: Sequence[str | bytes], stops: StopTable | None, group_bytes: int = GROUP_BYTES
) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[np.ndarray]]:
    """:func:`ascii_term_counts` and, for each text, the keys of its terms in text order
    (``term_keys(Analyzer(...).terms(text))``): what the chunk ids are made of."""
    sequences: list[list[np.ndarray]] = [[] for _ in texts]
    counted = _ascii_terms(texts, stops, group_bytes, sequences)
    empty = np.empty(0, np.uint64)
    return counted, [parts[0] if len(parts) == 1 else np.concatenate([empty, *parts]) for parts in sequences]


def _ascii_terms(
    texts: Sequence[str | bytes], stops: StopTable | None, group_bytes: int, sequences: list[list[np.ndarray]] | None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`ascii_term_counts`; with ``sequences`` (one list per text), each text's pieces'
    keys in text order are appended to its list."""
    parts: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in texts]
    group: list[bytes] = []
    owners: list[int] = []
    size = 0

    def flush() -> None:
        in_order: list[np.ndarray] | None = None if sequences is None else []
        keys, counts, per_piece = _group_counts(group, stops, in_order)
        offsets = np.concatenate(([0], np.cumsum(per_piece))).tolist()
        for piece, text in enumerate(owners):
            a, b = offsets[piece], offsets[piece + 1]
            parts[text].append((keys[a:b], counts[a:b]))  # views of the group's arrays
            if sequences is not None and in_order is not None:
                sequences[text].append(in_order[piece])
            if len(parts[text]) >= MERGE_PARTS:  # a long text: keep its partial counts few
                parts[text] = [merge_counts(parts[text])]

    for number, text in enumerate(texts):
        for piece in _pieces(text, group_bytes):
            group.append(piece)
            owners.append(number)
            size += len(piece) + 1
            if size >= group_bytes:
                flush()
                group, owners, size = [], [], 0
    if group:
        flush()
    return [(k, c.astype(np.int32, copy=False)) for k, c in map(merge_counts, parts)]
