"""coderiv against its peers on one synthetic collection, side by side in one run.

    python benchmarks/peers.py --docs 20000 [--words 900] [--queries 50] [--threads 2]
        [--coderiv before=/path/to/old/src --coderiv after=src] [--peers tantivy,bm25s] [--rounds N]

Indexes the deterministic synthetic collection of ``bench_scale.py`` (Zipfian vocabulary,
~900-word documents, or ``--words`` for thesis-length ones; an uncompressed tar made once) with
every engine, each in a fresh process (so its peak RSS is its own), and queries it with whole
documents of the collection:

- **coderiv** identity5 and cosine, exact top-20 with pruning (one row per ``--coderiv LABEL=SRC``
  tree, so an old and a new version are measured in the same run);
- **tantivy** (the Rust engine's Python binding, ``pip install 'coderiv[bench]'``) BM25 top-20,
  two queries per document: the OR of every distinct word of the query (``bm25 all words``), and
  the realistic one a search engine user would send for a whole document, the OR of its 1,000
  words of highest tf-idf (``bm25 top-1,000 tf-idf``: tf · ln(N/df), df counted over the
  collection with tantivy's tokenizer, the words chosen before the clock starts, as coderiv's
  analysis is; a ~900-word document has fewer distinct words, so the two queries then differ
  only by that analysis), on ``--threads`` indexing threads and on one. The
  main rows index the text field without word positions (``index_option="freq"``: documents and
  counts, as coderiv keeps), so that sizes compare like for like; one more row keeps positions
  (tantivy's default, which phrase queries need), labelled so;
- **bm25s** BM25 top-20, if installed (optional: the table says so when it is missing).

Prints one table: build seconds, build CPU seconds (user + system of the process and its
workers: the cost a loaded machine disturbs least), peak RSS of the build process and its
workers, index bytes on disk, bytes per posting (whole index, and the postings files alone:
coderiv's terms store, tantivy's ``.idx`` files; a posting is one (word, document) pair after
each engine's own analysis: coderiv drops stop words, tantivy does not), and query median / p90
in ms and median CPU ms of the querying process (query analysis excluded for coderiv and for
the top-1,000 query, included for the other peer queries since they take text), plus each figure's ratio to tantivy's freq-only index; under
the table, each coderiv measure's median, p90 and CPU ÷ tantivy freq-only's BM25 top-1,000 tf-idf
query (issue 27's goal for cosine: ≤ 0.6). Read ratios, not absolutes, on a shared machine; the
1-minute load average at the start and end of each engine's run is printed in its row.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench_scale import DEFAULT_WORDS, materialize
from common import machine, peak_rss_mb, tar_texts

WORD = re.compile(r"\w+")
TOKEN = re.compile(r"[^\W_]+")


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children (pool workers):
    a build's cost that other jobs on a shared machine disturb far less than wall time."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _latencies(run: Any, queries: dict[str, str]) -> tuple[float, float, int, float]:
    """(median ms, p90 ms, queries whose own document came first, median CPU ms of this process:
    what a shared machine's load disturbs least)."""
    times, cpus, first = [], [], 0
    for qid, text in queries.items():
        start, cpu = time.perf_counter(), time.process_time()
        top = run(text)
        times.append((time.perf_counter() - start) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        first += bool(top) and top[0] == qid
    times.sort()
    cpus.sort()
    return times[len(times) // 2], times[min(len(times) - 1, round(0.9 * (len(times) - 1)))], first, cpus[len(cpus) // 2]


def run_coderiv(tar: Path, out: Path, queries: dict[str, str], threads: int) -> dict[str, Any]:
    from coderiv import Index, Searcher

    start, cpu = time.perf_counter(), _cpu_seconds()
    Index.update_from(tar, out, workers=threads)
    build, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    own, children = peak_rss_mb()
    index = Index.open(out)
    searcher = Searcher(index)
    with contextlib.suppress(ImportError):  # a tree with compiled query loops: loaded as a long-lived process would
        importlib.import_module("coderiv.ranking.compiled_probes").load()
    rows = {}
    for measure in ("identity5", "cosine"):
        prepared = {qid: searcher.prepare(text) for qid, text in queries.items()}

        def rank(qid_text: str, measure: str = measure, prepared: dict[str, Any] = prepared) -> list[str]:
            result = searcher.rank(prepared[qid_text], measure, top=20, prune=True)
            return [m.doc_id for m in result.matches]

        median, p90, first, cpu_ms = _latencies(rank, {qid: qid for qid in queries})
        rows[measure] = {"median_ms": median, "p90_ms": p90, "self_first": first, "cpu_ms": cpu_ms}
    files = index.manifest["files"]
    terms_dir = index.manifest["stores"]["terms"]["dir"] + "/"
    return {"build_s": build, "build_cpu_s": cpu, "rss_mb": own, "workers_rss_mb": children,
            "index_bytes": sum(m["bytes"] for m in files.values()), "postings": index.info()["postings"],
            "postings_bytes": sum(m["bytes"] for name, m in files.items() if name.startswith(terms_dir)), "queries": rows}


#: Words of a whole-document query kept for the realistic peer query (highest tf-idf first).
TOP_WORDS = 1000


def _tantivy_words(text: str) -> list[str]:
    """tantivy's default tokenizer (alphanumeric runs, lowercased, tokens over 40 bytes dropped):
    the synthetic text is plain words, so a regex reproduces it."""
    return [w for w in (m.lower() for m in TOKEN.findall(text)) if len(w.encode()) <= 40]


def _document_frequencies(tar: Path) -> tuple[Counter[str], int]:
    """(df of every word, documents) over the collection, by tantivy's tokenizer."""
    df: Counter[str] = Counter()
    n = 0
    for _, text in tar_texts(tar):
        df.update(set(_tantivy_words(text)))
        n += 1
    return df, n


def top_tfidf_words(text: str, df: Counter[str], n_docs: int, top: int = TOP_WORDS) -> list[str]:
    """The ``top`` words of ``text`` of highest tf · ln(N/df) (ties by the word), the query a
    BM25 engine is given for a whole document (it cannot take thousands of terms cheaply)."""
    tf = Counter(_tantivy_words(text))
    weight = {w: f * math.log(n_docs / df[w]) if df[w] else 0.0 for w, f in tf.items()}
    return sorted(weight, key=lambda w: (-weight[w], w))[:top]


def run_tantivy(tar: Path, out: Path, queries: dict[str, str], threads: int, positions: bool = False) -> dict[str, Any]:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", stored=False, index_option="position" if positions else "freq")
    schema = builder.build()
    out.mkdir(parents=True)
    index = tantivy.Index(schema, path=str(out))
    start, cpu = time.perf_counter(), _cpu_seconds()
    writer = index.writer(heap_size=256_000_000, num_threads=threads)
    for doc_id, text in tar_texts(tar):
        writer.add_document(tantivy.Document(id=doc_id, body=text))
    writer.commit()
    writer.wait_merging_threads()
    build, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    own, children = peak_rss_mb()
    index.reload()
    searcher = index.searcher()
    df, n_docs = _document_frequencies(tar)

    def ranked(words: list[str]) -> list[str]:
        query = tantivy.Query.boolean_query([(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", w)) for w in words])
        return [searcher.doc(address)["id"][0] for _, address in searcher.search(query, 20).hits]

    def search_all(text: str) -> list[str]:
        return ranked(sorted({w.lower() for w in WORD.findall(text)}))

    # choosing a query's words by tf-idf is query analysis, which coderiv's rows exclude too:
    # done before the clock starts, the query built and run on it
    chosen = {qid: top_tfidf_words(text, df, n_docs) for qid, text in queries.items()}

    def search_top(qid: str) -> list[str]:
        return ranked(chosen[qid])

    rows = {}
    for name, search, given in (("bm25 all words", search_all, queries),
                                (f"bm25 top-{TOP_WORDS:,} tf-idf", search_top, {qid: qid for qid in queries})):
        median, p90, first, cpu_ms = _latencies(search, given)
        rows[name] = {"median_ms": median, "p90_ms": p90, "self_first": first, "cpu_ms": cpu_ms}
    return {"build_s": build, "build_cpu_s": cpu, "rss_mb": own, "workers_rss_mb": children, "index_bytes": _folder_bytes(out),
            "postings": sum(df.values()), "postings_bytes": sum(p.stat().st_size for p in out.glob("*.idx")),
            "queries": rows}


def run_tantivy_positions(tar: Path, out: Path, queries: dict[str, str], threads: int) -> dict[str, Any]:
    """tantivy's default text field: word positions kept too (``.pos`` files)."""
    return run_tantivy(tar, out, queries, threads, positions=True)


def run_bm25s(tar: Path, out: Path, queries: dict[str, str], threads: int) -> dict[str, Any]:
    import bm25s

    start, cpu = time.perf_counter(), _cpu_seconds()
    ids, texts = zip(*tar_texts(tar))
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False), show_progress=False)
    build, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    own, children = peak_rss_mb()
    retriever.save(str(out))

    def search(text: str) -> list[str]:
        found, _ = retriever.retrieve(bm25s.tokenize([text], stopwords="en", show_progress=False), k=20, show_progress=False)
        return [ids[i] for i in found[0]]

    median, p90, first, cpu_ms = _latencies(search, queries)
    return {"build_s": build, "build_cpu_s": cpu, "rss_mb": own, "workers_rss_mb": children, "index_bytes": _folder_bytes(out),
            "queries": {"bm25": {"median_ms": median, "p90_ms": p90, "self_first": first, "cpu_ms": cpu_ms}}}


ENGINES = {"coderiv": run_coderiv, "tantivy": run_tantivy, "tantivy-positions": run_tantivy_positions, "bm25s": run_bm25s}


def child(args: argparse.Namespace) -> None:
    """One engine, in this fresh process: prints its figures as JSON."""
    texts = json.loads(args.tar.with_suffix(".queries.json").read_text("utf-8"))
    queries = dict(list(sorted(texts.items()))[: args.queries])
    shutil.rmtree(args.out, ignore_errors=True)
    try:
        print(json.dumps(ENGINES[args.child](args.tar, args.out, queries, args.threads)))
    finally:
        shutil.rmtree(args.out, ignore_errors=True)


def _run(engine: str, label: str, src: str | None, tar: Path, threads: int, queries: int) -> dict[str, Any] | str:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(src).resolve()), env.get("PYTHONPATH", "")])
    command = [sys.executable, __file__, "--child", engine, "--tar", str(tar), "--threads", str(threads),
               "--queries", str(queries), "--out", f"/tmp/coderiv-peers-{os.getpid()}-{label}"]  # not another run's
    load_before = os.getloadavg()[0]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["load"] = (load_before, os.getloadavg()[0])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--words", type=int, default=DEFAULT_WORDS, help="mean words per document (8000: thesis length)")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--coderiv", action="append", default=[], metavar="LABEL=SRC",
                        help="a coderiv source tree to measure (repeatable); default: the installed one")
    parser.add_argument("--peers", default="tantivy,bm25s",
                        help="comma-separated peers to run besides coderiv (tantivy, bm25s; empty: none)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every engine this many times, alternating (a shared machine's load drifts)")
    parser.add_argument("--child", choices=sorted(ENGINES), help=argparse.SUPPRESS)
    parser.add_argument("--tar", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    tar = materialize(args.docs, max(args.queries, 50), args.words)
    print(f"machine: {machine()}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before: {os.getloadavg()}")
    print(f"collection: {args.docs} documents of ~{args.words} words, {tar.stat().st_size / 1e6:.0f} MB tar; "
          f"{args.queries} whole-document queries")
    runs: list[tuple[str, str, str | None, int]] = []
    for spec in args.coderiv or ["="]:
        label, _, src = spec.partition("=")
        runs.append((f"coderiv {label}".strip(), "coderiv", src or None, args.threads))
    peers = {p.strip() for p in args.peers.split(",") if p.strip()}
    if "tantivy" in peers:
        runs += [(f"tantivy freq-only {args.threads} threads", "tantivy", None, args.threads),
                 ("tantivy freq-only 1 thread", "tantivy", None, 1),
                 (f"tantivy with positions {args.threads} threads", "tantivy-positions", None, args.threads)]
    if "bm25s" in peers:
        runs.append(("bm25s", "bm25s", None, 1))
    results: dict[str, dict[str, Any] | str] = {}
    for round_ in range(1, args.rounds + 1):
        for name, engine, src, threads in runs:
            key = name if args.rounds == 1 else f"{name} #{round_}"
            results[key] = _run(engine, name.replace(" ", "-"), src, tar, threads, args.queries)
            if args.rounds > 1:
                print(f"  {key}: done at {time.strftime('%H:%M:%S', time.gmtime())}, load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"load average after: {os.getloadavg()}")
    base = results.get(f"tantivy freq-only {args.threads} threads" + ("" if args.rounds == 1 else " #1"))
    print("| engine | load | build s | build CPU s | peak RSS MB (workers) | index MB | bytes/posting index (postings files) "
          "| query | median / p90 ms (CPU median) | own doc first |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, result in results.items():
        if isinstance(result, str):
            print(f"| {name} | not run: {result} | | | | | | | | |")
            continue
        def ratio(key: str, result: dict[str, Any] = result) -> str:
            return f" ({result[key] / base[key]:.2f}×)" if isinstance(base, dict) else ""

        def per_posting(result: dict[str, Any] = result) -> str:
            if "postings" not in result:
                return "–"
            whole, files = result["index_bytes"] / result["postings"], result["postings_bytes"] / result["postings"]
            if not isinstance(base, dict):
                return f"{whole:.2f} ({files:.2f})"
            base_whole, base_files = base["index_bytes"] / base["postings"], base["postings_bytes"] / base["postings"]
            return f"{whole:.2f} ({files:.2f}); {whole / base_whole:.2f}× ({files / base_files:.2f}×)"

        for measure, q in result["queries"].items():
            print(f"| {name} | {result['load'][0]:.1f}→{result['load'][1]:.1f} "
                  f"| {result['build_s']:.1f}{ratio('build_s')} | {result['build_cpu_s']:.1f}{ratio('build_cpu_s')} "
                  f"| {result['rss_mb']:.0f} ({result['workers_rss_mb']:.0f}) "
                  f"| {result['index_bytes'] / 1e6:.1f}{ratio('index_bytes')} | {per_posting()} | {measure} "
                  f"| {q['median_ms']:.1f} / {q['p90_ms']:.1f} ({q['cpu_ms']:.1f}) | {q['self_first']}/{args.queries} |")
    print(f"ratios in parentheses: to tantivy freq-only on {args.threads} threads" + ("" if args.rounds == 1 else " (its first round)")
          + "; load: 1-minute load average when the engine's process started → ended")
    _query_ratios(results, args.threads, args.rounds)


def _query_ratios(results: dict[str, dict[str, Any] | str], threads: int, rounds: int) -> None:
    """Each coderiv measure's median and p90 (wall) and median CPU ms a query ÷ tantivy
    freq-only's BM25 top-1,000 tf-idf query of the same round (issue 27's goal for cosine: ≤ 0.6)."""
    peer = f"bm25 top-{TOP_WORDS:,} tf-idf"
    for round_ in range(1, rounds + 1):
        suffix = "" if rounds == 1 else f" #{round_}"
        base = results.get(f"tantivy freq-only {threads} threads{suffix}")
        if not isinstance(base, dict):
            continue
        for name, result in results.items():
            if not name.startswith("coderiv") or not name.endswith(suffix) or isinstance(result, str):
                continue
            for measure, q in result["queries"].items():
                b = base["queries"][peer]
                print(f"{name} {measure} ÷ tantivy {peer}: median {q['median_ms'] / b['median_ms']:.2f}×, "
                      f"p90 {q['p90_ms'] / b['p90_ms']:.2f}×, median CPU {q['cpu_ms']:.2f} / {b['cpu_ms']:.2f} ms = "
                      f"{q['cpu_ms'] / b['cpu_ms']:.2f}×")


if __name__ == "__main__":
    main()
