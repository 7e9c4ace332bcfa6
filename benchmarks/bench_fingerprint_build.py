"""What fingerprint stores cost at indexing time: wall-clock of a full build with and without
them, and the one-off selection of rarest-in-collection when a searcher opens the index.

    python benchmarks/bench_fingerprint_build.py /work/shared/corpora/corpus.tar.gz
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from coderiv import FingerprintSearcher, Index
from coderiv.keys.fingerprint import parse_fingerprint

CONFIGS = {
    "terms only": [],
    "+ anchor:g=4": ["anchor:g=4"],
    "+ anchor, first-r-sliding, winnowing (g=4)": ["anchor:g=4", "first-r-sliding:g=4,r=15", "winnowing:g=4"],
    "+ rarest-in-collection:g=3": ["rarest-in-collection:g=3"],
}


def main(source: str) -> None:
    print("| build | seconds | index bytes |\n|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, stores in CONFIGS.items():
            path = Path(tmp) / label.replace(" ", "_").replace(":", "").replace(",", "")
            start = time.perf_counter()
            Index.update_from(source, path, stores=[parse_fingerprint(s) for s in stores])
            seconds = time.perf_counter() - start
            index = Index.open(path)
            size = sum(meta["bytes"] for meta in index.manifest["files"].values())
            print(f"| {label} | {seconds:.1f} | {size:,} |", flush=True)
        start = time.perf_counter()
        FingerprintSearcher(index, "rarest-in-collection")
        print(f"\nrarest-in-collection selection on open: {time.perf_counter() - start:.2f} s "
              f"({index.store('fingerprint:g=3,r=15,strategy=rarest-in-collection').n_postings:,} postings)")


if __name__ == "__main__":
    main(sys.argv[1])
