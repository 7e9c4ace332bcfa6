"""The long fault sweep of issue 10, run by hand (the fast cases are in tests/): kills at many
moments of ``coderiv index`` and ``coderiv pairs``, damage to every file of an index, and a full
disk. It prints one table per part; every row must read ``ok``. Figures go to docs/reliability.md.

    python benchmarks/faults.py                 # 20 moments a scenario and signal (~15 min)
    python benchmarks/faults.py --moments 3     # a quick pass

What each part checks:

- **kills**: SIGKILL, SIGTERM and SIGHUP at ``--moments`` evenly spread moments of a fresh
  build, a fresh build with a fingerprint store, an update, and ``pairs`` adding its store: two
  seconds later no process the run started is alive (the process table), a query made then gives
  exactly the old or the new answer, the next ``coderiv index`` succeeds, and after it the
  answers equal a fresh build's;
- **damage**: 64 flipped bytes at the start, middle or end (``--places``) of, or the truncation
  of, every file of the live generation, and broken CURRENT and lock files: every query method
  (ranking with each measure, cosine's pruned top-k, ``--min-percent``, fingerprint, containment,
  ``--doc``) and ``info --verify`` is one ``Error:`` line with exit 1, or (damage the answer does
  not read) exactly the clean answer — never a traceback, never a different answer with exit 0;
- **fuzz**: ``--fuzz N`` hostile query files (random bytes, mutated valid documents of every
  format, ZIP bombs through ``mimetype`` and through a DOCX/ODT/EPUB member, nested archives,
  entity expansion) given to ``coderiv query`` through click in one process: exit 0 or one
  ``Error:`` line, never a traceback; the slowest input and the process's peak resident
  memory are printed;
- **web**: ``coderiv serve`` on loopback gets ``--uploads`` hostile uploads from four threads at
  once (DOCX of 48 MB of plain XML under the ratio cap, mimetype bombs, billion laughs, random
  bytes) while a fifth thread asks ``GET /api/info`` every 0.1 s: every upload is answered (200,
  or 4xx/503 with a one-line message, never 500 or a dropped connection) and no light request
  waits longer than ``WEB_BOUND`` seconds;
- **disk full**: a build onto a small tmpfs (root only; skipped with the reason otherwise) is
  one line, the previous generation stays intact, and the next build succeeds once space is freed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import machine

SRC = Path(__file__).resolve().parents[1] / "src"
WORDS = "river delta marsh wetland estuary sediment tide channel levee basin floodplain meander oxbow".split()
QUERIES = 3
#: The command as a user runs it (``python -m coderiv.cli.main`` adds a runpy warning to stderr).
CODERIV = [sys.executable, "-c", "import sys; from coderiv.cli.main import main; sys.argv[0] = 'coderiv'; main()"]
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP)


def coderiv(*args: str, check: bool = False, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [*CODERIV, *args], capture_output=True, text=True, env=env, timeout=timeout
    )
    if check and done.returncode != 0:
        raise SystemExit(f"coderiv {' '.join(args)} failed: {done.stderr.strip()}")
    return done


def start(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [*CODERIV, *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True,
    )


def write_collection(folder: Path, count: int, edition: int) -> Path:
    """reStructuredText documents (docutils makes each cost ~20 ms: runs last seconds). Edition 1
    changes every fifth document, drops every seventh and adds ten."""
    import numpy as np

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = np.random.default_rng(11)
    numbers = list(range(count)) if edition == 0 else [i for i in range(count + 10) if i % 7]
    for i in numbers:
        paras = [" ".join(rng.choice(WORDS, 40)) + f" doc{i} para{p}." for p in range(12)]
        if edition == 1 and i % 5 == 0:
            paras.append(f"an edited paragraph of revision two for doc{i}.")
        body = "\n\n".join(paras)
        (folder / f"d{i:04d}.rst").write_text(f"Title {i}\n========\n\n{body}\n", encoding="utf-8")
    return folder


def write_texts(folder: Path, count: int, seed: int) -> Path:
    """Plain texts of 400 words from a 20,000-word vocabulary: many distinct terms, so that an
    index of 1,500 of them does not fit a 3 MiB disk."""
    import random

    rng = random.Random(seed)
    vocabulary = [f"w{k}" for k in range(20000)]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"d{i:04d}.txt").write_text(" ".join(rng.choices(vocabulary, k=400)), encoding="utf-8")
    return folder


def answers(index: Path, queries: list[Path]) -> tuple[str, ...]:
    """The TSV answer of each query (or its error line), the thing a user reads."""
    out = []
    for q in queries:
        done = coderiv("query", str(q), "--index", str(index), "--format", "tsv", "-k", "10")
        out.append(done.stdout if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()}")
    return tuple(out)


# -- the process table, read from /proc (tests/support/processes.py reads it the same way for
# the fault tests; benchmarks never import the tests) -------------------------------------------

def _state_and_parent(pid: int) -> tuple[str, int] | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    found = _state_and_parent(pid)
    return found is not None and found[0] != "Z"


def descendants_of(pid: int) -> set[int]:
    """Every live process below ``pid``: children, grandchildren…"""
    parents = {}
    for entry in Path("/proc").iterdir():
        found = _state_and_parent(int(entry.name)) if entry.name.isdigit() else None
        if found is not None and found[0] != "Z":
            parents[int(entry.name)] = found[1]
    below: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - below
        below |= frontier
    return below


@dataclass
class Tally:
    """Outcomes of one scenario and signal."""

    runs: int = 0
    finished_first: int = 0
    orphans: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    next_index_failed: int = 0
    after_differs: int = 0
    #: what went wrong, for the rows that failed (the first few messages)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.orphans or self.answers["other"] or self.next_index_failed or self.after_differs)


@dataclass
class Scenario:
    name: str
    before: Path | None  # the index copied in before the run (None: no index yet)
    args: tuple[str, ...]  # the command run and killed, with INDEX standing for the index
    source: Path  # what the next `coderiv index` indexes
    extra_index_args: tuple[str, ...] = ()


def kill_sweep(work: Path, moments: int, only: str | None = None) -> list[tuple[str, str, Tally, float]]:
    old_src = write_collection(work / "old", 300, 0)
    new_src = write_collection(work / "new", 300, 1)
    queries = []
    for n, i in enumerate(range(0, 300, 300 // QUERIES)):  # copies: the queries stay while sources change
        queries.append(work / f"q{n}.rst")
        shutil.copy(old_src / f"d{i:04d}.rst", queries[-1])
    clean_old, clean_new, clean_fp = work / "clean-old", work / "clean-new", work / "clean-fp"
    coderiv("index", str(old_src), "--index", str(clean_old), "-q", check=True)
    coderiv("index", str(new_src), "--index", str(clean_new), "-q", check=True)
    coderiv("index", str(new_src), "--index", str(clean_fp), "--fingerprint", "anchor:g=4", "-q", check=True)
    old_answers, new_answers = answers(clean_old, queries), answers(clean_new, queries)
    fp_answers = answers(clean_fp, queries)
    scenarios = [
        Scenario("fresh build", None, ("index", str(new_src), "--index", "INDEX", "-q"), new_src),
        Scenario("fresh build + fingerprint store", None,
                 ("index", str(new_src), "--index", "INDEX", "--fingerprint", "anchor:g=4", "-q"), new_src,
                 ("--fingerprint", "anchor:g=4")),
        Scenario("update", clean_old, ("index", str(new_src), "--index", "INDEX", "-q"), new_src),
        Scenario("pairs adding its store", clean_new, ("pairs", "--index", "INDEX", "--method", "resemblance", "-q"), new_src),
    ]
    rows = []
    for sc in scenarios:
        if only and not sc.name.startswith(only):
            continue
        target = work / "t"
        # how long the run takes, to spread the moments over it
        shutil.rmtree(target, ignore_errors=True)
        if sc.before:
            shutil.copytree(sc.before, target)
        t0 = time.monotonic()
        coderiv(*(str(target) if a == "INDEX" else a for a in sc.args), check=True)
        duration = time.monotonic() - t0
        expected_after = fp_answers if sc.extra_index_args else new_answers
        before_answers = old_answers if sc.before == clean_old else new_answers
        for signum in SIGNALS:
            tally = Tally()
            for m in range(moments):
                tally.runs += 1
                shutil.rmtree(target, ignore_errors=True)
                if sc.before:
                    shutil.copytree(sc.before, target)
                proc = start(*(str(target) if a == "INDEX" else a for a in sc.args))
                deadline = time.monotonic() + duration * (m + 0.5) / moments
                seen: set[int] = set()
                while time.monotonic() < deadline and proc.poll() is None:
                    seen |= descendants_of(proc.pid)
                    time.sleep(0.02)
                if proc.poll() is not None:
                    tally.finished_first += 1
                else:
                    seen |= descendants_of(proc.pid)
                    os.kill(proc.pid, signum)
                proc.wait(timeout=120)
                time.sleep(2)
                if any(alive(p) for p in seen):
                    tally.orphans += 1
                    for p in seen:  # our own processes: clean up so the next run is fair
                        if alive(p):
                            os.kill(p, signal.SIGKILL)
                if sc.before or (target / "CURRENT").exists():
                    now = answers(target, queries)
                    allowed = {before_answers: "old", new_answers: "new", expected_after: "new"}
                    tally.answers[allowed.get(now, "other")] += 1
                else:
                    tally.answers["no index yet"] += 1
                done = coderiv("index", str(sc.source), "--index", str(target), *sc.extra_index_args, "-q")
                if done.returncode != 0:
                    tally.next_index_failed += 1
                    tally.problems.append(f"moment {m}: next index: {done.stderr.strip()[-300:]}")
                elif answers(target, queries) != expected_after:
                    tally.after_differs += 1
                    tally.problems.append(f"moment {m}: answers after the next index differ")
            rows.append((sc.name, signal.Signals(signum).name, tally, duration))
            print(f"  {sc.name:34} {signal.Signals(signum).name:7} {'ok' if tally.ok else 'FAIL'}  {tally}", flush=True)
            for problem in tally.problems[:3]:
                print(f"    {problem}", flush=True)
    return rows


def same_output(got: str, clean: str) -> bool:
    """The same answer; for ``info --format json``, the same facts but for the index's path."""
    if got == clean:
        return True
    try:
        a, b = json.loads(got), json.loads(clean)
    except ValueError:
        return False
    return isinstance(a, dict) and isinstance(b, dict) and {**a, "index": None} == {**b, "index": None}


MEASURES = ("identity5", "identity1", "cosine", "inner", "normalized")


def damage_sweep(work: Path, places: tuple[str, ...] = ("middle",)) -> list[tuple[str, str, str]]:
    src = write_collection(work / "dmg-src", 120, 0)
    clean = work / "dmg-clean"
    coderiv("index", str(src), "--index", str(clean), "--fingerprint", "anchor:g=4", "-q", check=True)
    query = src / "d0003.rst"
    tsv = ("--format", "tsv")
    probes = {
        **{f"query -m {m}": ("query", str(query), "-m", m, *tsv) for m in MEASURES},
        "query cosine top-2 (pruned)": ("query", str(query), "-m", "cosine", "-k", "2", *tsv),
        "query --min-percent 20": ("query", str(query), "--min-percent", "20", *tsv),
        "query --doc": ("query", "--doc", "d0003.rst", *tsv),
        "query --doc cosine": ("query", "--doc", "d0005.rst", "-m", "cosine", *tsv),
        "query anchor": ("query", str(query), "--method", "fingerprint", *tsv),
        "query containment": ("query", str(query), "--method", "containment", *tsv),
        "info --verify": ("info", "--verify", "--format", "json"),
    }
    coderiv(*probes["query containment"], "--index", str(clean), check=True)  # adds the chunk store first
    clean_out = {name: coderiv(*args, "--index", str(clean)) for name, args in probes.items()}
    generation = (clean / "CURRENT").read_text().strip()
    files = sorted(p.relative_to(clean) for p in (clean / generation).rglob("*") if p.is_file())
    damages: list[tuple[str, object]] = []
    for rel in files:
        for place in places:
            damages.append((f"flip 64 bytes at the {place} of {rel}", ("flip-" + place, rel)))
        damages.append((f"truncate {rel} to half", ("truncate", rel)))
    damages += [
        ("CURRENT: invalid UTF-8", ("current", b"\xff\xfe\x00")),
        ("CURRENT: ../ outside the index", ("current", b"gen-000001/../../elsewhere/gen-000001")),
        ("CURRENT: a generation that is not there", ("current", b"gen-999999")),
        ("CURRENT: empty", ("current", b"")),
        ("CURRENT: a folder", ("current-dir", None)),
        ("lock: a folder", ("lock-dir", None)),
    ]
    rows = []
    for label, (kind, arg) in damages:  # type: ignore[misc]
        target = work / "damaged"  # not a prefix of any other path in the outputs
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(clean, target)
        if kind.startswith("flip") or kind == "truncate":
            path = target / arg
            data = bytearray(path.read_bytes())
            if kind.startswith("flip"):
                at = {"flip-start": 0, "flip-middle": max(0, len(data) // 2 - 32), "flip-end": max(0, len(data) - 64)}[kind]
                for i in range(at, min(at + 64, len(data))):
                    data[i] ^= 0xA5
            else:
                data = data[: len(data) // 2]
            path.write_bytes(bytes(data))
        elif kind == "current":
            (target / "CURRENT").write_bytes(arg)
        elif kind == "current-dir":
            (target / "CURRENT").unlink()
            (target / "CURRENT").mkdir()
        elif kind == "lock-dir":
            lock = target / "lock"
            if lock.exists():
                lock.unlink()
            lock.mkdir()
        # a truncated file fails every open alike (its size is checked): two probes say so
        chosen = {n: a for n, a in probes.items() if kind != "truncate" or n in ("query -m identity5", "info --verify")}
        for name, args in chosen.items():
            done = coderiv(*args, "--index", str(target))
            said = (done.stderr or "").strip().splitlines()
            if "Traceback" in done.stderr:
                outcome = "FAIL: traceback"
            elif done.returncode == 1 and said and said[-1].startswith("Error: "):
                outcome = "ok: one error line"
            elif done.returncode == 0 and same_output(done.stdout, clean_out[name].stdout):
                outcome = "ok: same answer"
            elif done.returncode == 0 and name == "info --verify" and '"verified": false' in done.stdout:
                outcome = "ok: verify reports the damage"
            else:
                outcome = f"FAIL: exit {done.returncode}, different answer"
            rows.append((label, name, outcome))
        # the next index run mends it (or refuses in one line)
        done = coderiv("index", str(src), "--index", str(target), "--fingerprint", "anchor:g=4", "-q")
        first = "query -m identity5"
        mended = done.returncode == 0 and coderiv(*probes[first], "--index", str(target)).stdout == clean_out[first].stdout
        line = (done.stderr or "").strip().splitlines()[-1:] or [""]
        rows.append((label, "next index", "ok: mended" if mended else (
            "ok: one error line" if done.returncode == 1 and line[0].startswith("Error: ") else "FAIL: not mended")))
    return rows


FUZZ_EXTENSIONS = (".txt", ".md", ".rst", ".html", ".xml", ".rtf", ".pdf", ".docx", ".odt", ".epub", ".zip", ".tar", "")


def _zip(members: dict[str, bytes], stored: bool = False) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _hostile(rng: Any, i: int) -> tuple[str, bytes]:
    """The i-th hostile input: a name and its bytes (kinds in turn, contents at random)."""
    kind = i % 8
    ext = FUZZ_EXTENSIONS[int(rng.integers(len(FUZZ_EXTENSIONS)))]
    if kind == 0:  # random bytes under any extension
        return f"r{i}{ext}", rng.bytes(int(rng.integers(0, 4096)))
    if kind == 1:  # the mimetype bomb of issue 25 item 1, under any name
        return f"m{i}{ext}", _zip({"mimetype": bytes(int(rng.integers(1, 64)) << 20)})
    if kind == 2:  # an office or EPUB body far past the ratio cap
        fmt = [".docx", ".odt", ".epub"][i % 3]
        body = {".docx": "word/document.xml", ".odt": "content.xml", ".epub": "OEBPS/c.xhtml"}[fmt]
        mimetype = b"application/epub+zip" if fmt == ".epub" else b""
        return f"b{i}{fmt}", _zip({"mimetype": mimetype, body: b"<a>" + b" " * (48 << 20) + b"</a>"})
    if kind == 3:  # billion laughs in an XML-based format
        laughs = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">'
                  b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]><w>&c;</w>')
        name = f"x{i}{['.docx', '.html', '.xml', '.odt'][i % 4]}"
        return name, _zip({"word/document.xml": laughs, "content.xml": laughs}) if i % 2 else laughs
    if kind == 4:  # a nested archive: a zip of zips
        inner = _zip({"a.txt": b"river " * 1000})
        return f"n{i}{ext}", _zip({f"z{j}.zip": inner for j in range(20)})
    if kind == 5:  # a valid zip container truncated or with flipped bytes
        data = bytearray(_zip({"word/document.xml": b"<w:document><w:body><w:p><w:r><w:t>river</w:t></w:r></w:p></w:body></w:document>"}))
        for _ in range(int(rng.integers(1, 16))):
            data[int(rng.integers(len(data)))] ^= int(rng.integers(1, 256))
        return f"c{i}.docx", bytes(data[: int(rng.integers(1, len(data) + 1))])
    if kind == 6:  # a PDF-looking header with garbage
        return f"p{i}.pdf", b"%PDF-1.7\n" + rng.bytes(int(rng.integers(0, 8192)))
    text = "".join(chr(int(c)) for c in rng.integers(0, 0x2FFF, int(rng.integers(0, 2000))))
    return f"t{i}{ext}", text.encode("utf-8", "surrogatepass")


def fuzz(work: Path, count: int) -> list[tuple[str, str]]:
    """``count`` hostile query files through ``coderiv query``, in one child process that imports
    coderiv from this tree (:func:`fuzz_here`)."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    child = [sys.executable, __file__, "--parts", "fuzz-here", "--fuzz", str(count), "--work", str(work)]
    done = subprocess.run(child, capture_output=True, text=True, env=env, timeout=7200)
    if done.returncode != 0:
        return [("fuzzing process", f"FAIL: exit {done.returncode}: {done.stderr.strip()[-300:]}")]
    return [(label, outcome) for label, outcome in json.loads(done.stdout)]


def fuzz_here(work: Path, count: int) -> list[tuple[str, str]]:
    """The fuzz loop (click, this process): what :func:`fuzz` runs in its child."""
    import resource

    import numpy as np
    from click.testing import CliRunner

    from coderiv.cli.main import main as cli

    src = write_texts(work / "fz-src", 40, 3)
    index = work / "fz-index"
    coderiv("index", str(src), "--index", str(index), "-q", check=True)
    rng = np.random.default_rng(25)
    runner = CliRunner()
    folder = work / "fz-inputs"
    folder.mkdir(exist_ok=True)
    rows, slowest = [], (0.0, "")
    tally: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for i in range(count):
        name, data = _hostile(rng, i)
        path = folder / name
        path.write_bytes(data)
        start = time.perf_counter()
        result = runner.invoke(cli, ["query", str(path), "--index", str(index), "-q", "--format", "tsv"])
        took = time.perf_counter() - start
        slowest = max(slowest, (took, name))
        lines = result.output.strip().splitlines()
        if (result.exception is not None and not isinstance(result.exception, SystemExit)) or "Traceback" in result.output:
            outcome = f"FAIL: {type(result.exception).__name__}"
        elif result.exit_code == 0:
            outcome = "ok: answered"
        elif result.exit_code == 1 and lines and lines[-1].startswith("Error: "):
            outcome = "ok: one error line"
            reasons[lines[-1].split(": ", 2)[-1][:70]] += 1
        else:
            outcome = f"FAIL: exit {result.exit_code}"
        tally[outcome] += 1
        if outcome.startswith("FAIL"):
            rows.append((name, outcome))
        path.unlink()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows += [(f"{n} inputs", outcome) for outcome, n in sorted(tally.items())]
    rows += [(f"  error ({n})", f"ok: {reason}") for reason, n in reasons.most_common(6)]
    rows.append(("slowest input", f"ok: {slowest[1]} in {slowest[0]:.2f} s"))
    rows.append(("peak resident memory of the fuzzing process", f"ok: {peak:.0f} MB"))
    return rows


#: The longest a light request may wait while hostile uploads are read (the event loop never
#: reads an upload: docs/web.md).
WEB_BOUND = 1.0
_TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)


def _heavy_docx(paragraphs: int) -> bytes:
    """A DOCX of plain paragraphs: 600,000 of them are ~48 MB of XML in ~1.5 MB, under the ratio cap."""
    body = "".join(f"<w:p><w:r><w:t>word{i} alpha beta gamma delta</w:t></w:r></w:p>" for i in range(paragraphs))
    xml = ('<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
           f"<w:body>{body}</w:body></w:document>")
    return _zip({"[Content_Types].xml": _TYPES.encode(), "word/document.xml": xml.encode()})


def web_sweep(work: Path, uploads: int, kept: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Hostile uploads to a live server, four at once, while light requests are timed (``kept``:
    only these kinds of upload, by name: heavy, bomb, laughs, random)."""
    import socket
    import threading
    import urllib.error
    import urllib.request
    import uuid

    import numpy as np

    src = write_texts(work / "web-src", 40, 5)
    index = work / "web-index"
    coderiv("index", str(src), "--index", str(index), "-q", check=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = start("serve", "--index", str(index), "--port", str(port), "--workers", "2", "--read-seconds", "30")
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(base + "/api/info", timeout=2).read()
            break
        except (OSError, urllib.error.URLError):
            time.sleep(0.2)
    heavy = _heavy_docx(600_000)
    rng = np.random.default_rng(9)
    kinds = [
        ("heavy.docx", heavy),
        ("bomb.txt", _zip({"mimetype": bytes(48 << 20)})),
        ("laughs.docx", _zip({"[Content_Types].xml": _TYPES.encode(), "word/document.xml": (
            b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><w>&b;</w>')})),
        ("random.pdf", b"%PDF-1.7\n" + rng.bytes(1 << 20)),
    ]
    kinds = [kind for kind in kinds if kind[0].split(".")[0] in kept] if kept else kinds
    outcomes: Counter[str] = Counter()
    latencies: list[float] = []
    done = threading.Event()

    def upload(i: int) -> None:
        name, data = kinds[i % len(kinds)]
        boundary = uuid.uuid4().hex
        body = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n").encode() + data + (
                f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="verify"\r\n\r\nfalse\r\n--{boundary}--\r\n').encode()
        request = urllib.request.Request(base + "/api/check", data=body, method="POST",
                                         headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                outcomes[f"{name}: {answer.status}"] += 1
        except urllib.error.HTTPError as exc:
            message = exc.read().decode("utf-8", "replace")
            outcomes[f"{name}: {exc.code}" + (" FAIL" if exc.code >= 500 and exc.code != 503 else "")] += 1
            if "Traceback" in message:
                outcomes[f"{name}: traceback FAIL"] += 1
        except OSError as exc:
            outcomes[f"{name}: {type(exc).__name__} FAIL"] += 1

    def light() -> None:
        while not done.is_set():
            start_at = time.perf_counter()
            try:
                urllib.request.urlopen(base + "/api/info", timeout=30).read()
            except OSError:
                outcomes["light request failed FAIL"] += 1
            latencies.append(time.perf_counter() - start_at)
            time.sleep(0.1)

    watcher = threading.Thread(target=light)
    watcher.start()
    started = time.perf_counter()
    try:
        queue = list(range(uploads))
        lock = threading.Lock()

        def worker() -> None:
            while True:
                with lock:
                    if not queue:
                        return
                    i = queue.pop()
                upload(i)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        done.set()
        watcher.join()
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    took = time.perf_counter() - started
    rows = [(label, ("FAIL: " if "FAIL" in label else "ok: ") + f"{n}") for label, n in sorted(outcomes.items())]
    worst = max(latencies, default=0.0)
    median = sorted(latencies)[len(latencies) // 2] if latencies else 0.0
    rows.append((f"{len(latencies)} light requests during {took:.0f} s, slowest",
                 f"{'ok' if worst <= WEB_BOUND else 'FAIL'}: {worst:.3f} s (bound {WEB_BOUND} s; median {median:.3f} s)"))
    return rows


def disk_full(work: Path) -> list[tuple[str, str]]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return [("disk full", "skipped: needs root to mount a tmpfs")]
    mnt = work / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True).returncode:
        return [("disk full", "skipped: mounting a tmpfs was refused")]
    try:
        small = write_texts(work / "small-src", 20, 1)
        big = write_texts(work / "big-src", 1500, 2)
        index = mnt / "i"
        coderiv("index", str(small), "--index", str(index), "-q", check=True)
        before = answers(index, [small / "d0003.txt"])
        done = coderiv("index", str(big), "--index", str(index), "-q")
        said = done.stderr.strip().splitlines()
        rows = [("update onto a full disk", "ok: one error line" if done.returncode == 1 and said
                 and said[-1].startswith("Error: ") and "Traceback" not in done.stderr else f"FAIL: {done.stderr[-300:]}")]
        rows.append(("previous generation after it", "ok: same answers" if answers(index, [small / "d0003.txt"]) == before
                     else "FAIL: answers changed"))
        verify = coderiv("info", "--verify", "--index", str(index))
        rows.append(("info --verify after it", "ok" if verify.returncode == 0 else f"FAIL: {verify.stderr.strip()}"))
        again = coderiv("index", str(small), "--index", str(index), "-q")
        rows.append(("next run with space", "ok" if again.returncode == 0 else f"FAIL: {again.stderr.strip()}"))
        return rows
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moments", type=int, default=20, help="kill moments per scenario and signal")
    parser.add_argument("--parts", default="kills,damage,fuzz,web,disk", help="which parts to run")
    parser.add_argument("--uploads", type=int, default=40, help="hostile uploads of the web part")
    parser.add_argument("--upload-kinds", default="", help="only these uploads (heavy,bomb,laughs,random)")
    parser.add_argument("--places", default="start,middle,end", help="where in each file the damage's 64 bytes go")
    parser.add_argument("--fuzz", type=int, default=3000, help="hostile query files of the fuzz part")
    parser.add_argument("--scenario", default=None, help="only the kill scenario whose name starts so")
    parser.add_argument("--work", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if parts == {"fuzz-here"}:  # the child of the fuzz part
        print(json.dumps(fuzz_here(args.work, args.fuzz)))
        return
    print(f"# {machine()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="coderiv-faults-") as tmp:
        work = Path(tmp)
        if "kills" in parts:
            print("\n## kills: scenario, signal, runs (killed / finished first), orphans, query after the kill, next index")
            rows = kill_sweep(work, args.moments, args.scenario)
            print("\n| scenario | signal | runs | killed | orphans | answer right after | next index fails | answers after differ |")
            print("|---|---|---|---|---|---|---|---|")
            for name, sig, t, duration in rows:
                after = ", ".join(f"{k} {v}" for k, v in sorted(t.answers.items()))
                print(f"| {name} ({duration:.1f} s) | {sig} | {t.runs} | {t.runs - t.finished_first} | {t.orphans} "
                      f"| {after} | {t.next_index_failed} | {t.after_differs} |")
                failures += not t.ok
        if "damage" in parts:
            rows3 = damage_sweep(work, tuple(args.places.split(",")))
            outcomes = Counter(o for _, _, o in rows3)
            print("\n## damage: outcomes over", len({d for d, _, _ in rows3}), "kinds of damage")
            for outcome, n in sorted(outcomes.items()):
                print(f"  {n:4}  {outcome}")
            for label, probe, outcome in rows3:
                if outcome.startswith("FAIL"):
                    print(f"  {label} / {probe}: {outcome}")
            failures += sum(o.startswith("FAIL") for o in outcomes.elements())
        if "fuzz" in parts:
            print(f"\n## fuzz: {args.fuzz} hostile query files")
            for label, outcome in fuzz(work, args.fuzz):
                print(f"  {label}: {outcome}", flush=True)
                failures += outcome.startswith("FAIL")
        if "web" in parts:
            print(f"\n## web: {args.uploads} hostile uploads, four at once, while light requests are timed")
            for label, outcome in web_sweep(work, args.uploads, tuple(filter(None, args.upload_kinds.split(",")))):
                print(f"  {label}: {outcome}", flush=True)
                failures += outcome.startswith("FAIL")
        if "disk" in parts:
            print("\n## disk full")
            for label, outcome in disk_full(work):
                print(f"  {label}: {outcome}")
                failures += outcome.startswith("FAIL")
    print(f"\n{failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
