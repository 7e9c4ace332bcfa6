"""A bounded load test of ``coderiv serve`` on loopback: CLIENTS threads send CHECKS checks of
dev-collection documents to ``POST /api/check`` while the index is updated twice (documents
added, then changed). Every answer is compared with the library's ranking of the
same document on the index generation the answer names. Prints median/p99 latency,
throughput, refusals (503) and errors; the goal is no failed and no wrong answer.

    python benchmarks/bench_web_load.py [--corpora ../shared/corpora] [--clients 8] [--checks 400] [--verify | --report] [--queue N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from coderiv import Index, Searcher
from coderiv.ranking.containment import chunk_store_spec
from coderiv.report import build_report
from coderiv.text.extract import visible_text
from common import machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def post(url: str, fields: dict[str, str]) -> tuple[int, dict[str, Any], float]:
    data = urllib.parse.urlencode(fields).encode()
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=120) as response:
            body = json.loads(response.read())
            status = response.status
    except urllib.error.HTTPError as exc:
        body, status = json.loads(exc.read() or b"{}"), exc.code
    return status, body, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora")
    parser.add_argument("--work", type=Path, default=Path("/tmp/coderiv-bench-web"))
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--checks", type=int, default=400)
    parser.add_argument("--verify", action="store_true", help="Also verify each answer's matches with exact passages.")
    parser.add_argument("--report", action="store_true", help="Ask for evidence reports (POST /api/report) instead.")
    parser.add_argument("--queue", type=int, default=None, help="The server's --queue (checks waiting beyond the workers).")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    docs, index_dir = args.work / "docs", args.work / "index"
    with tarfile.open(args.corpora / "corpus.tar.gz") as archive:
        archive.extractall(docs, filter="data")
    query_ids = [line.split("\t")[1].strip() for line in (args.corpora / "queries.tsv").read_text().splitlines() if line.strip()]
    texts = {d: visible_text((docs / d).read_bytes(), d).text for d in query_ids}
    Index.update_from(docs, index_dir, stores=[chunk_store_spec()] if args.report else None)
    # documents the updates remove and put back: not queries, but in the queries' projects
    movable = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.rst") if "pytest-8" in p.as_posix())[:40]
    movable = [m for m in movable if m not in texts]

    snapshots: dict[str, Index] = {}
    lock = threading.Lock()

    def remember() -> None:
        index = Index.open(index_dir)
        with lock:
            snapshots[index.generation.name] = index

    remember()
    port = free_port()
    log = open(args.work / "serve.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "coderiv.cli.main", "serve", "--index", str(index_dir), "--port", str(port),
         *(["--queue", str(args.queue)] if args.queue is not None else [])],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{base}/api/info", timeout=2).close()
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        print(f"machine: {machine()}")
        documents = len(snapshots[next(iter(snapshots))].doc_ids)
        mode = "report" if args.report else "rank + verify" if args.verify else "rank"
        print(f"{documents} documents; {args.clients} clients, {args.checks} checks ({mode}), server queue {args.queue or 'default'}")

        results: list[tuple[str, int, dict[str, Any], float]] = []
        counter = iter(range(args.checks))

        def client() -> None:
            for n in counter:
                doc_id = query_ids[n % len(query_ids)]
                fields = {"text": texts[doc_id], "top": "10", "verify": "true" if args.verify else "false"}
                status, body, seconds = post(f"{base}/api/report" if args.report else f"{base}/api/check", fields)
                with lock:
                    results.append((doc_id, status, body, seconds))

        updates: list[str] = []

        def updater() -> None:
            # 1. a new release arrives: 40 documents copied under a new folder, each with a new paragraph;
            # 2. that release is corrected: the 40 documents change again. (Files are never deleted
            # before the index is updated: see docs/web.md on what a removed source file does.)
            time.sleep(0.2)
            for m in movable:
                target = docs / "bench-release" / m
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes((docs / m).read_bytes() + b"\n\nA paragraph of the new release.\n")
            report = Index.update_from(docs, index_dir)
            remember()
            updates.append(f"added {len(report.added)}")
            for m in movable:
                with open(docs / "bench-release" / m, "ab") as handle:
                    handle.write(b"\n\nA correction to the new release.\n")
            report = Index.update_from(docs, index_dir)
            remember()
            updates.append(f"changed {len(report.changed)}")

        threads = [threading.Thread(target=client) for _ in range(args.clients)]
        start = time.perf_counter()
        update_thread = threading.Thread(target=updater)
        update_thread.start()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - start
        update_thread.join()

        wrong = failed = refused = 0
        seen_generations: dict[str, int] = {}
        for doc_id, status, body, _ in results:
            if status == 503:
                refused += 1
                continue
            if status != 200:
                failed += 1
                print(f"failed: {doc_id}: {status} {body}")
                continue
            if args.report:  # a report names no generation: it must equal the report of one of them
                got_report = (body["overall"], [(s["doc_id"], s["share"]) for s in body["sources"]])
                expected_reports = [build_report(index, texts[doc_id], "pasted text") for index in snapshots.values()]
                if got_report not in [(r.overall, [(s.doc_id, s.share) for s in r.sources]) for r in expected_reports]:
                    wrong += 1
                    print(f"wrong report: {doc_id}")
                continue
            generation = body["generation"]
            seen_generations[generation] = seen_generations.get(generation, 0) + 1
            expected = Searcher(snapshots[generation]).search(texts[doc_id], top=10).matches
            got = [(m["doc_id"], round(m["percent"], 9)) for m in body["matches"]]
            if got != [(m.doc_id, round(m.percent, 9)) for m in expected]:
                wrong += 1
                print(f"wrong: {doc_id} on {generation}")
        ms = sorted(seconds * 1000 for *_, seconds in results)
        p99 = ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]
        print(f"index updates during the run: {', '.join(updates)}; answers per generation: {seen_generations}")
        print(
            f"{len(results)} checks in {wall:.1f} s = {len(results) / wall:.1f} checks/s; latency median "
            f"{statistics.median(ms):.0f} ms, p99 {p99:.0f} ms, max {ms[-1]:.0f} ms"
        )
        print(f"refused (503): {refused}; failed: {failed}; wrong answers: {wrong}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    main()
