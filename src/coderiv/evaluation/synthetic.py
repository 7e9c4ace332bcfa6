"""A deterministic synthetic collection for scale benchmarks: Zipfian vocabulary, documents of
about 900 words, and injected families of coderivatives (edited copies of a base document).

Same arguments, same documents, on any machine (numpy's PCG64 with a fixed seed). Used by the
benchmarks in ``benchmarks/``; never by the index itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from coderiv.text.collection import RawDocument

_LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def vocabulary(size: int, seed: int = 0) -> list[str]:
    """``size`` distinct pseudo-words of 3–10 letters (no stopwords among them)."""
    rng = np.random.default_rng(seed)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        lengths = rng.integers(3, 11, size=size)
        letters = rng.integers(0, 26, size=(size, 10))
        for n, row in zip(lengths, letters):
            word = "".join(_LETTERS[row[:n]]) + "q"  # the trailing q keeps clear of real stopwords
            if word not in seen:
                seen.add(word)
                words.append(word)
                if len(words) == size:
                    break
    return words


@dataclass(frozen=True)
class SyntheticCollection:
    """Parameters of a synthetic collection; iterate :meth:`documents` to get it.

    ``family_share`` of the documents belong to families of 2–``max_family`` members: the first
    is a base document, the others copies of it with ``edit_rate`` of their words replaced,
    deleted or inserted. ``families()`` gives the true groups (doc ids), for recall figures.
    """

    n_docs: int
    mean_words: int = 900
    vocabulary_size: int = 100_000
    zipf_exponent: float = 1.07
    family_share: float = 0.2
    max_family: int = 6
    edit_rate: float = 0.1
    seed: int = 2003

    def _plan(self) -> list[tuple[int, int]]:
        """For every document, (base document number or -1, family id or -1)."""
        rng = np.random.default_rng([self.seed, 1])
        plan: list[tuple[int, int]] = []
        family = 0
        while len(plan) < self.n_docs:
            if rng.random() < self.family_share / 2:
                size = int(rng.integers(2, self.max_family + 1))
                base = len(plan)
                for member in range(min(size, self.n_docs - len(plan))):
                    plan.append((base if member else -1, family))
                family += 1
            else:
                plan.append((-1, -1))
        return plan

    def families(self) -> list[list[str]]:
        """The injected families as lists of document ids."""
        groups: dict[int, list[str]] = {}
        for number, (_, family) in enumerate(self._plan()):
            if family >= 0:
                groups.setdefault(family, []).append(doc_id(number))
        return [g for g in groups.values() if len(g) > 1]

    def documents(self) -> Iterator[RawDocument]:
        """The documents in id order (ids ``syn0000000.txt``…)."""
        words = np.array(vocabulary(self.vocabulary_size, self.seed))
        ranks = np.arange(1, self.vocabulary_size + 1, dtype=np.float64)
        cdf = np.cumsum(ranks ** -self.zipf_exponent)
        cdf /= cdf[-1]
        rng = np.random.default_rng([self.seed, 2])
        bases: dict[int, np.ndarray] = {}
        plan = self._plan()
        last_member = {base: n for n, (base, _) in enumerate(plan) if base >= 0}
        for number, (base, _) in enumerate(plan):
            if base < 0:
                length = max(50, int(rng.normal(self.mean_words, self.mean_words / 3)))
                ids = np.searchsorted(cdf, rng.random(length))
                if number in last_member:
                    bases[number] = ids
            else:
                ids = _edit(bases[base], self.edit_rate, cdf, rng)
                if last_member[base] == number:
                    del bases[base]
            yield RawDocument(doc_id(number), _text(words[ids]).encode("utf-8"))


def doc_id(number: int) -> str:
    """The id of synthetic document ``number``."""
    return f"syn{number:07d}.txt"


def _edit(ids: np.ndarray, rate: float, cdf: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A revision: each word replaced, deleted or followed by an insertion with prob. rate/3."""
    roll = rng.random(len(ids))
    out = ids.copy()
    replace = roll < rate / 3
    out[replace] = np.searchsorted(cdf, rng.random(int(replace.sum())))
    keep = ~((roll >= rate / 3) & (roll < 2 * rate / 3))
    insert_after = roll >= 1 - rate / 3
    pieces = []
    for chunk_ids, chunk_keep, chunk_insert in zip(
        np.array_split(out, 1 + len(out) // 64), np.array_split(keep, 1 + len(out) // 64),
        np.array_split(insert_after, 1 + len(out) // 64),
    ):
        kept = chunk_ids[chunk_keep]
        extra = np.searchsorted(cdf, rng.random(int(chunk_insert.sum())))
        pieces.append(np.concatenate((kept, extra)) if len(extra) else kept)
    return np.concatenate(pieces) if pieces else out


def _text(words: np.ndarray) -> str:
    """Words as prose-like text: sentences of ~15 words, paragraphs of ~6 sentences."""
    parts = []
    for start in range(0, len(words), 15):
        sentence = " ".join(words[start : start + 15].tolist())
        parts.append(sentence.capitalize() + ".")
        parts.append("\n\n" if (start // 15) % 6 == 5 else " ")
    return "".join(parts)
