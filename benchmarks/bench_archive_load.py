"""A bounded load test of ``coderiv serve --archive`` on loopback: CLIENTS threads submit
SUBMISSIONS documents (each a collection document with a sentence of its own added) through
``POST /api/submissions`` and follow them until checked; then the server is restarted and every
report is read back. The goal: every submission checked exactly once (one check row, attempt 1),
every report retrievable after the restart, no error. Prints the acceptance latency, the time
until all were checked, the checks per second and each check's duration (from the database).

The collection: the first --docs documents of the dev corpus (../shared/corpora/corpus.tar.gz)
when present, else the bundled example collection.

    python benchmarks/bench_archive_load.py [--submissions 200] [--clients 10] [--workers 2] [--docs 500]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from sqlalchemy import select

import coderiv
from coderiv.archive.db import Database
from coderiv.archive.models import Check, Submission
from coderiv.archive.users import add_user
from coderiv.index.index import Index
from coderiv.pairs.methods import get_method
from common import machine

EXAMPLE = Path(coderiv.__file__).parent / "data" / "example"
BOUNDARY = "coderiv-bench-boundary"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def call(base: str, token: str, path: str, body: bytes | None = None, kind: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}", **({"Content-Type": kind} if kind else {})}
    request = urllib.request.Request(base + path, body, headers, method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, {"error": exc.read().decode(errors="replace")}


def upload(name: str, text: str) -> tuple[bytes, str]:
    body = (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: text/plain\r\n\r\n").encode() + text.encode() + f"\r\n--{BOUNDARY}--\r\n".encode()
    return body, f"multipart/form-data; boundary={BOUNDARY}"


def collection(root: Path, corpora: Path, limit: int) -> tuple[Path, str]:
    docs = root / "docs"
    docs.mkdir()
    tar = corpora / "corpus.tar.gz"
    if tar.exists():
        taken = 0
        with tarfile.open(tar) as archive:
            for member in archive:
                if taken >= limit:
                    break
                suffix = Path(member.name).suffix.lower()
                if member.isfile() and suffix in (".txt", ".rst", ".md") and member.size > 500:
                    data = archive.extractfile(member)
                    assert data is not None
                    (docs / f"d{taken:05d}{suffix}").write_bytes(data.read())
                    taken += 1
        return docs, f"the first {taken} text, reST and Markdown documents (over 500 bytes) of the dev corpus"
    for path in EXAMPLE.glob("*.txt"):
        shutil.copy(path, docs / path.name)
    return docs, "the bundled example collection"


def start(index: Path, url: str, port: int, workers: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(coderiv.__file__).parents[1]), *sys.path])}
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "coderiv.cli.main", "serve", "--archive", "--index", str(index), "--database", url,
             "--port", str(port), "--check-workers", str(workers)], env=env, stdout=out, stderr=subprocess.STDOUT)


def ready(base: str, token: str) -> None:
    for _ in range(600):
        try:
            if call(base, token, "/api/submissions")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not start")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="coderiv-archive-load-"))
    server: subprocess.Popen[bytes] | None = None
    try:
        docs, described = collection(root, args.corpora, args.docs)
        index = root / "index"
        Index.update_from(docs, index, workers=1)
        spec = get_method("chunks").store
        Index.update_from(docs, index, stores=[spec], workers=1)
        url = f"sqlite:///{root / 'archive.sqlite'}"
        database = Database(url)
        with database.session() as session:
            tokens = [add_user(session, f"client{i}", "submitter") for i in range(args.clients)]
        texts = sorted(docs.iterdir())
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = start(index, url, port, args.workers, root / "serve.log")
        ready(base, tokens[0])

        accepted: list[float] = []
        ids: dict[str, str] = {}  # id -> token
        errors: list[str] = []
        lock = threading.Lock()

        def client(number: int) -> None:
            for k in range(number, args.submissions, args.clients):
                source = texts[k % len(texts)]
                text = source.read_text("utf-8", errors="replace") + f"\nSubmission {k} adds this sentence of its own."
                began = time.perf_counter()
                status, body = call(base, tokens[number], "/api/submissions", *upload(f"s{k}.txt", text))
                with lock:
                    accepted.append(time.perf_counter() - began)
                    if status == 202:
                        ids[body["id"]] = tokens[number]
                    else:
                        errors.append(f"{status} {body}")

        began = time.perf_counter()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        submitted = time.perf_counter() - began
        while True:
            with database.session() as session:
                waiting = session.scalar(select(Submission.id).where(Submission.state.in_(("queued", "checking"))).limit(1))
            if waiting is None:
                break
            time.sleep(0.2)
        checked = time.perf_counter() - began
        with database.session() as session:
            states = [s for (s,) in session.execute(select(Submission.state))]
            attempts = [a for (a,) in session.execute(select(Submission.attempts))]
            checks = session.execute(select(Check.submission_id, Check.started, Check.finished)).all()
        durations = sorted((f - s).total_seconds() for _, s, f in checks if f is not None and s is not None)
        per_submission = {sid for sid, _, _ in checks}
        stop(server)
        server = start(index, url, port, args.workers, root / "serve.log")  # the restart
        ready(base, tokens[0])
        after = [call(base, token, f"/api/submissions/{sid}/report?format=json")[0] for sid, token in ids.items()]
        stop(server)
        server = None

        def pct(values: list[float], q: float) -> float:
            return sorted(values)[min(len(values) - 1, int(q * len(values)))]

        print(f"date: {dt.date.today().isoformat()}; machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
        print(f"collection: {described}; {args.submissions} submissions from {args.clients} clients, {args.workers} worker processes")
        print(f"accepted: {len(ids)} (errors {len(errors)}) in {submitted:.1f} s;"
              f" acceptance median {statistics.median(accepted) * 1000:.0f} ms, p99 {pct(accepted, 0.99) * 1000:.0f} ms")
        print(f"checked: all {states.count('done')} done ({states.count('failed')} failed) {checked:.1f} s after the first submission:"
              f" {len(ids) / checked:.1f} checks/s; a check median {statistics.median(durations):.2f} s, p99 {pct(durations, 0.99):.2f} s")
        print(f"checked once: {attempts.count(1)} of {len(attempts)} at attempt 1,"
              f" {len(checks)} check rows for {len(per_submission)} submissions")
        print(f"after a restart: {after.count(200)} of {len(after)} reports retrievable")
        ok = (not errors and states.count("done") == args.submissions and attempts == [1] * args.submissions
              and len(checks) == args.submissions and after.count(200) == args.submissions)
        print("OK" if ok else "FAILED")
        if not ok:
            sys.exit(1)
    finally:
        if server is not None:
            stop(server)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
