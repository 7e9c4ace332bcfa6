"""The cost of checking every block a query reads (issue 25 item 3): one process opens the dev
index and runs the 50 dev queries with every measure (exact top-10, pruned) twice, the first
pass checking each block as it is first read, the second with every touched block checked.
Prints the open time and both passes' CPU time (the machine is shared: CPU time, not wall).
Run it with each code tree first on PYTHONPATH, alternating (A B A B):

    PYTHONPATH=../main/src python benchmarks/bench_integrity.py --index /tmp/ix-main
    PYTHONPATH=src python benchmarks/bench_integrity.py --index /tmp/ix-integrity

It builds the index at --index from the dev collection if none is there.
"""

from __future__ import annotations

import argparse
import json
import tarfile
import time
import zlib
from pathlib import Path

from coderiv import MEASURES, Index, Searcher
from coderiv.text.extract import visible_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora")
    parser.add_argument("--index", type=Path, required=True)
    args = parser.parse_args()
    tar = args.corpora / "corpus.tar.gz"
    if not (args.index / "CURRENT").exists():
        Index.update_from(tar, args.index, workers=2)
    query_ids = [line.split("\t")[1].strip() for line in (args.corpora / "queries.tsv").read_text().splitlines() if line.strip()]
    texts = {}
    with tarfile.open(tar) as archive:
        for member in archive:
            if member.name in query_ids:
                extracted = archive.extractfile(member)
                if extracted is not None:
                    texts[member.name] = visible_text(extracted.read(), member.name).text
    start = time.perf_counter()
    index = Index.open(args.index)
    open_ms = 1000 * (time.perf_counter() - start)
    searcher = Searcher(index)
    prepared = [searcher.prepare(texts[q]) for q in query_ids]
    passes = []
    for _ in range(2):
        cpu = time.process_time()
        for measure in MEASURES:
            for query in prepared:
                searcher.rank(query, measure, top=10)
        passes.append(time.process_time() - cpu)
    data = bytes(64 << 20)
    cpu = time.process_time()
    for _ in range(4):
        zlib.crc32(data)
    crc_gbs = 4 * 64 * (1 << 20) / (time.process_time() - cpu) / 1e9
    print(json.dumps({
        "format": index.manifest["format_version"], "open_ms": round(open_ms, 1), "queries": len(prepared) * len(MEASURES),
        "first_pass_cpu_s": round(passes[0], 3), "second_pass_cpu_s": round(passes[1], 3), "crc32_GB_per_s": round(crc_gbs, 2),
    }))


if __name__ == "__main__":
    main()
