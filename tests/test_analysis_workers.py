"""The analysis workers' batch path gives what analysing each document on its own gives:
the same entries (format, lossy, note, length, keys and counts) and the same skips."""

from __future__ import annotations

from pathlib import Path

from coderiv.index.builder.analysis_workers import AnalyzedEntry, Skipped, _ascii_plain_text, _Worker
from coderiv.keys.kinds import TERMS
from coderiv.text.analysis import AnalysisSettings, Analyzer
from coderiv.text.collection import RawDocument, iter_folder


def _outcome(result: AnalyzedEntry | Skipped) -> object:
    if isinstance(result, Skipped):
        return result
    stores = {name: (keys.tolist(), values.tolist()) for name, (keys, values) in result.stores.items()}
    return result.doc_id, result.sha256, result.length, result.lossy, result.format, result.note, stores


def test_batch_equals_one_by_one(tmp_path: Path) -> None:
    files = {
        "ascii.txt": b"The river Rivers flow; the 2 rivers.",
        "noext": b"plain words without an extension",
        "empty.txt": b"",
        "stops.txt": b"the and of",
        "bom.txt": b"\xef\xbb\xbfwords after a mark",
        "latin1.txt": "caf\xe9 words".encode("latin-1"),
        "accent.txt": "déjà vu words".encode(),
        "page.txt": b"<!DOCTYPE html><p>html words</p>",
        "notes.md": b"# Title\n\nmarkdown *words*",
        "fake.pdf": b"not a pdf at all, plain words",
        "zeros.txt": bytes(100),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    docs = list(iter_folder(tmp_path))
    docs.append(RawDocument("given.txt", b"words given by a program"))  # not looked at by a reader
    assert {d.doc_id for d in docs if _ascii_plain_text(d)} == {"ascii.txt", "noext", "empty.txt", "stops.txt"}
    worker = _Worker(Analyzer(AnalysisSettings()), [TERMS])
    batched = [_outcome(r) for r in worker.run_batch(docs)]
    alone = [_outcome(worker.run(d)) for d in docs]
    assert batched == alone
    by_id = {o.doc_id if isinstance(o, Skipped) else o[0]: o for o in batched}  # type: ignore[index, attr-defined]
    assert by_id["empty.txt"] == Skipped("empty.txt", "empty (no words after analysis)", "text")
    assert by_id["zeros.txt"] == Skipped("zeros.txt", "binary", "text")
    assert by_id["latin1.txt"][3] is True and by_id["page.txt"][4] == "html"  # type: ignore[index]
    assert by_id["fake.pdf"][5] == "content is TEXT, not PDF: read as TEXT"  # type: ignore[index]
    # river, rivers (twice, folded), flow, 2: "the" is stopped
    assert sorted(by_id["ascii.txt"][6]["terms"][1]) == [1, 1, 1, 2] and by_id["ascii.txt"][2] == 5  # type: ignore[index]
