"""Reading reStructuredText against reading plain text (issue 28 item 3): CPU ms per document
over the dev collection's .rst files, for

- plain: the same bytes read as plain text (decoding: the floor);
- rst before: docutils as coderiv ran it until now (settings rebuilt for every document, the
  garbage collector running during the parse);
- rst after, each document once: settings built once, the collector held off while parsing;
- rst after, the whole list in order: the same, plus the same bytes not parsed twice (versions
  of a project repeat pages).

Each is timed twice, interleaved, and the smaller CPU time kept (the machine is shared).

    python benchmarks/bench_rst.py [--every 11] [--corpus ../shared/corpora/corpus.tar.gz]
"""

from __future__ import annotations

import argparse
import io
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

from coderiv.text.formats import rst
from coderiv.text.formats.html import html_to_text
from coderiv.text.formats.plain import decode, read_plain
from common import machine

ROOT = Path(__file__).resolve().parents[1]


def before(data: bytes) -> str:
    """coderiv's reST reading until now: publish_parts with settings overrides per document."""
    import docutils.core
    from docutils.writers import html5_polyglot

    text = decode(data).text
    rst._register_unknown(text)
    parts = docutils.core.publish_parts(
        text, writer=html5_polyglot.Writer(), settings_overrides={**rst._SETTINGS, "warning_stream": io.StringIO()}
    )
    return html_to_text(parts["html_body"])


def cpu_ms(fn: Callable[[bytes], object], documents: list[bytes]) -> float:
    start = time.process_time()
    for data in documents:
        fn(data)
    return 1000 * (time.process_time() - start) / len(documents)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "corpus.tar.gz")
    parser.add_argument("--every", type=int, default=1, help="take every Nth .rst file (1: all)")
    args = parser.parse_args()
    with tarfile.open(args.corpus) as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith(".rst")), key=lambda m: m.name)
        documents = [tar.extractfile(m).read() for m in members[:: args.every]]  # type: ignore[union-attr]
    unique = list(dict.fromkeys(documents))
    print(machine())
    print(f"load average at start: {open('/proc/loadavg').read().split()[:3]}")
    print(f"{len(documents)} .rst documents ({len(unique)} distinct), {sum(map(len, documents)) / len(documents) / 1024:.1f} KB mean")
    def after_once(data: bytes) -> None:
        rst._forget_recent()
        rst.read_rst(data)

    def whole(data: bytes) -> None:
        rst.read_rst(data)

    best: dict[str, float] = {}
    for _ in range(2):
        for name, fn, docs in (("plain text", read_plain, documents), ("rst before (per document)", before, unique),
                               ("rst after, each distinct once", after_once, unique)):
            best[name] = min(best.get(name, float("inf")), cpu_ms(fn, docs))
        rst._forget_recent()
        best["rst after, whole list in order"] = min(best.get("rst after, whole list in order", float("inf")), cpu_ms(whole, documents))
    rows = list(best.items())
    plain = rows[0][1]
    for name, ms in rows:
        print(f"{name:32} {ms:9.3f} CPU ms/document   {ms / plain:8.0f}x plain")
    print(f"load average at end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
