"""The issue 44 campaign's check against new index generations, rerun: a real ``coderiv serve
--archive`` (two worker processes by default) checks --checks plain submissions while an
examiner archives --publications submissions one after another, each a new index generation
and pair table published by the server's writer (the old generation's folder removed):
--checks / --publications checks are queued, and the first of them taken by a worker, as each
publication starts. Each check pauses --delay seconds after it opened the index
(``CODERIV_ARCHIVE_FAULT_DELAY``; the worker before issue 44 paused before opening it, so a
run of that code moves the pause into its checker), and each checked text joins --query-docs
documents, so that publications land inside checks. The goal: no submission failed. Prints
how many checks a publication overlapped (a publication's end between a check's start and
end) and how many generations the checks ran on.

The collection: the first --docs documents of the dev corpus (../shared/corpora/corpus.tar.gz)
when present, else the bundled example collection; indexed with the chunk store and the chunks
pair table (what the report reads).

    python benchmarks/archive_generations_campaign.py [--checks 100] [--publications 10] [--workers 2]
        [--docs 300] [--delay 1.0] [--query-docs 4] [--database URL]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

import coderiv
from bench_archive_load import call, collection, free_port, ready, stop, upload
from coderiv.archive.db import Database
from coderiv.archive.models import Check, Submission
from coderiv.archive.users import add_user
from coderiv.index.index import Index
from coderiv.index.reader import live_version
from coderiv.pairs.methods import get_method
from coderiv.pairs.run import run_pairs
from common import machine


def start(index: Path, url: str, port: int, workers: int, delay: float, log: Path) -> object:
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(coderiv.__file__).parents[1]), *sys.path]),
           "CODERIV_ARCHIVE_FAULT_DELAY": str(delay)}
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "coderiv.cli.main", "serve", "--archive", "--index", str(index), "--database", url,
             "--port", str(port), "--check-workers", str(workers)], env=env, stdout=out, stderr=subprocess.STDOUT)


def wait_for(probe: object, seconds: float = 600.0) -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = probe()  # type: ignore[operator]
        if value:
            return value
        time.sleep(0.2)
    raise SystemExit(f"gave up after {seconds:g} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checks", type=int, default=100)
    parser.add_argument("--publications", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--query-docs", type=int, default=4, help="collection documents joined into one checked text")
    parser.add_argument("--database", default=None, help="a PostgreSQL URL (default: SQLite in the scratch folder)")
    parser.add_argument("--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="coderiv-generations-"))
    server = None
    try:
        docs, described = collection(root, args.corpora, args.docs)
        index = root / "index"
        Index.update_from(docs, index, workers=1)
        Index.update_from(docs, index, stores=[get_method("chunks").store], workers=1)
        run_pairs(Index.open(index), "chunks")
        url = args.database or f"sqlite:///{root / 'archive.sqlite'}"
        database = Database(url)
        with database.session() as session:
            eve, sam = add_user(session, "eve", "examiner"), add_user(session, "sam", "submitter")
        texts = sorted(docs.iterdir())
        first = live_version(index)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = start(index, url, port, args.workers, args.delay, root / "serve.log")
        ready(base, sam)
        plain: list[str] = []
        errors: list[str] = []

        def check(k: int) -> None:
            parts = [texts[(k * args.query_docs + j) % len(texts)].read_text("utf-8", errors="replace") for j in range(args.query_docs)]
            text = "\n\n".join(parts) + f"\nCheck {k} adds a sentence of its own."
            status, body = call(base, sam, "/api/submissions", *upload(f"c{k}.txt", text))
            if status == 202:
                plain.append(body["id"])
            else:
                errors.append(f"{status} {body}")

        began = time.perf_counter()
        archived: list[str] = []
        per_publication = -(-args.checks // args.publications)
        for k in range(args.publications):  # one publication after the other, each with checks queued under it
            text = texts[(7 * k + 3) % len(texts)].read_text("utf-8", errors="replace") + f"\nThesis {k}, archived, ends here."
            status, body = call(base, eve, "/api/submissions", *upload(f"t{k}.txt", text))
            sid = body["id"]
            wait_for(lambda: call(base, eve, f"/api/submissions/{sid}")[1]["state"] in ("done", "failed"))  # noqa: B023
            batch = len(plain)
            for n in range(k * per_publication, min((k + 1) * per_publication, args.checks)):
                check(n)
            wait_for(lambda: call(base, sam, f"/api/submissions/{plain[batch]}")[1]["state"] != "queued")  # noqa: B023
            call(base, eve, f"/api/submissions/{sid}/archive", b"", "application/x-www-form-urlencoded")  # the writer starts now
            wait_for(lambda: call(base, eve, f"/api/submissions/{sid}")[1]["archived_doc"])  # noqa: B023
            archived.append(sid)

        def settled() -> bool:
            with database.session() as session:
                return session.scalar(select(Submission.id).where(Submission.state.in_(("queued", "checking"))).limit(1)) is None

        wait_for(settled)
        elapsed = time.perf_counter() - began
        with database.session() as session:
            states = dict(session.execute(select(Submission.id, Submission.state)).all())
            reasons = [r for (r,) in session.execute(select(Submission.reason).where(Submission.state == "failed"))]
            moments = [m for (m,) in session.execute(select(Submission.archived).where(Submission.archived.is_not(None)))]
            checks = session.execute(select(Check.submission_id, Check.started, Check.finished, Check.generation, Check.state)).all()
        ours = [c for c in checks if c[0] in set(plain)]
        overlapped = sum(1 for _, s, f, _, _ in ours if f is not None and any(s < m < f for m in moments))
        generations = sorted({g for *_, g, _ in ours if g})
        failed = [i for i in plain + archived if states.get(i) == "failed"]
        published = int(live_version(index)[4:]) - int(first[4:])
        print(f"date: {dt.date.today().isoformat()}; machine: {machine()}; load average {os.getloadavg()[0]:.2f}")
        print(f"collection: {described}; database: {'PostgreSQL' if args.database else 'SQLite'}; {args.workers} workers;"
              f" each check paused {args.delay:g} s after opening the index;"
              f" {args.query_docs} documents a checked text")
        print(f"{len(plain)} checks (errors {len(errors)}) and {len(archived)} archived submissions in {elapsed:.0f} s;"
              f" {published} generations published")
        print(f"checks overlapped by a publication: {overlapped}; generations checked on: {len(generations)}")
        print(f"failed: {len(failed)} of {len(plain) + len(archived)}" + (f" ({sorted(set(reasons))[:3]})" if failed else ""))
        print(f"check rows: {len(ours)} for {len(plain)} checks ({sum(1 for *_, st in ours if st == 'interrupted')} interrupted)")
        ok = not errors and not failed and len(plain) == args.checks and published >= args.publications
        print("OK" if ok else "FAILED")
        database.dispose()
        if not ok:
            sys.exit(1)
    finally:
        if server is not None:
            stop(server)  # type: ignore[arg-type]
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
