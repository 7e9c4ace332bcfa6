"""Collections named by an fsspec URL (coderiv.text.remote): the same index, byte for byte, as
the plain path over the same files (one index, shards, updates), the folder rules (hidden
files, index folders, size limit, binary files), and one-line errors. No network: ``file://``,
``memory://`` and fsspec's ``tar://`` chain over a local archive."""

from __future__ import annotations

import io
import json
import shutil
import sys
import tarfile
import tempfile
import uuid
from pathlib import Path

import fsspec
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.cli.main import main
from coderiv.errors import CoderivError, InputError, MissingExtraError
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.format.generation import MODIFIED_FILE
from coderiv.index.format.integrity import BLOCKS_FILE
from coderiv.index.format.storage import MANIFEST_COPY
from coderiv.index.index import Index
from coderiv.index.shards import ShardedIndex
from coderiv.text.collection import iter_collection
from coderiv.text.extract import MAX_DOCUMENT_BYTES
from coderiv.text.remote import is_url, iter_source, source_name, source_size
from coderiv.text.sources import DocumentTexts
from tests.support.files import write_docs
from tests.support.strategies import collection, document

#: fields of a manifest that say when and from where, not what the index holds
_WHEN_AND_WHERE = ("created", "source")


def index_bytes(root: Path, modified: bool = True) -> dict[str, bytes]:
    """Every file of an index folder (one index or a sharded set) by relative path, manifests
    (and the manifest's copy) without their time and source, lock files left out; ``modified=False`` also leaves out the
    modification times (a memory:// file system has its own)."""
    files: dict[str, bytes] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        if path.name == "lock" or (not modified and path.name in (MODIFIED_FILE, BLOCKS_FILE)):
            continue  # without times, the block checksums (which cover the times too) go as well
        data = path.read_bytes()
        if path.name in ("manifest.json", "SHARDS.json", MANIFEST_COPY):
            record = json.loads(data)
            for key in _WHEN_AND_WHERE:
                record.pop(key, None)
            if not modified:
                record.get("files", {}).pop(MODIFIED_FILE, None)
                record.get("files", {}).pop(BLOCKS_FILE, None)
            data = json.dumps(record, sort_keys=True).encode()
        files[name] = data
    return files


def to_memory(folder: Path) -> str:
    """A copy of ``folder`` in fsspec's in-memory file system (this process only); its URL."""
    url = f"memory://coll-{uuid.uuid4().hex}"
    fs = fsspec.filesystem("memory")
    for path in folder.rglob("*"):
        if path.is_file():
            fs.pipe(f"{url[len('memory://'):]}/{path.relative_to(folder).as_posix()}", path.read_bytes())
    return url


def tar_of(folder: Path, archive: Path) -> Path:
    with tarfile.open(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            out.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return archive


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("remote")


def test_is_url() -> None:
    assert is_url("s3://bucket/prefix") and is_url("file:///abs/path") and is_url("memory://x")
    assert is_url("tar://::file:///a.tar") and is_url("simplecache::s3://b/k")
    assert not is_url("folder/sub") and not is_url("/abs/path") and not is_url("C:\\data") and not is_url("c://x"[1:])
    assert not is_url(Path("s3://b")) and not is_url(["s3://b"])
    assert source_name("memory://x/") == "memory://x/" and source_name(Path("rel")) == str(Path("rel").resolve())


@settings(max_examples=10, deadline=None)
@given(docs=collection, names=st.lists(st.sampled_from(["a", "b/c", "b/d", ".h", "e/.f"]), min_size=1, max_size=12))
def test_a_url_indexes_as_its_path(cases: Path, docs: list[str], names: list[str]) -> None:
    """file://, memory:// and a tar read through fsspec give the plain path's index."""
    case = Path(tempfile.mkdtemp(dir=cases))
    files = {f"{names[i % len(names)] if i else 'a'}{i}.txt": text for i, text in enumerate(docs)}  # one not hidden
    source = write_docs(case / "src", files)
    Index.update_from(source, case / "path", workers=1)
    expected, without_times = index_bytes(case / "path"), index_bytes(case / "path", modified=False)
    Index.update_from(f"file://{source}", case / "file", workers=1)
    assert index_bytes(case / "file") == expected
    Index.update_from(to_memory(source), case / "memory", workers=1)
    assert index_bytes(case / "memory", modified=False) == without_times
    archive = tar_of(source, case / "src.tar")
    Index.update_from(archive, case / "tar", workers=1)
    tarred = index_bytes(case / "tar")
    Index.update_from(f"tar://::file://{archive}", case / "tarfs", workers=1)  # the archive as an fsspec folder
    assert index_bytes(case / "tarfs") == tarred
    fsspec.filesystem("memory").pipe(f"/{case.name}.tar", archive.read_bytes())
    Index.update_from(f"memory:///{case.name}.tar", case / "memtar", workers=1)  # an archive at a URL
    assert index_bytes(case / "memtar") == tarred
    assert Index.open(case / "memory").source.startswith("memory://")  # type: ignore[union-attr]
    shutil.rmtree(case)


def test_folder_rules_over_a_url(tmp_path: Path) -> None:
    """Hidden entries, a folder holding an index, an oversize and a binary file: as a folder."""
    source = write_docs(tmp_path / "src", {"a.txt": "river bank water", ".hidden/b.txt": "kept out", "c/.d.txt": "out"})
    (source / "big.txt").write_bytes(b"x " * (MAX_DOCUMENT_BYTES // 2 + 1))
    (source / "blob.bin").write_bytes(bytes(range(256)) * 64)
    Index.update_from(write_docs(tmp_path / "inner", {"z.txt": "an index inside"}), source / "idx", workers=1)
    url = to_memory(source)

    def seen(where: str | Path, hidden: bool = False) -> list[tuple[str, int, str]]:
        from coderiv.text.collection import ReadOptions

        return [(d.doc_id, d.oversize, d.problem) for d in iter_source(where, ReadOptions(hidden=hidden))]

    plain = seen(source)
    assert plain == seen(url) == seen(f"file://{source}")
    assert [d for d, _, _ in plain] == ["a.txt", "big.txt", "blob.bin"]
    assert plain[1][1] == MAX_DOCUMENT_BYTES + 2 and plain[2][2] == "binary"
    assert seen(source, hidden=True) == seen(url, hidden=True)
    assert ".hidden/b.txt" in [d for d, _, _ in seen(url, hidden=True)]
    assert source_size(url) == source_size(source) == 16 + MAX_DOCUMENT_BYTES + 2 + 256 * 64


def test_updates_on_a_url_detect_the_same_changes(tmp_path: Path) -> None:
    """An edit sequence applied to a folder and to its memory:// copy: each update reports the
    same added/changed/removed/unchanged and leaves the same index."""
    source = write_docs(tmp_path / "src", {f"d{i}.txt": f"alpha beta doc{i} gamma" for i in range(6)})
    url = to_memory(source)
    fs = fsspec.filesystem("memory")
    root = url[len("memory://"):]
    edits = [
        ({"d1.txt": "alpha changed text"}, ["d2.txt"]),
        ({"new/e.txt": "a new document here"}, []),
        ({}, ["d0.txt", "d3.txt"]),
        ({}, []),
    ]
    for step, (write, remove) in enumerate([({}, []), *edits]):
        for name, text in write.items():
            write_docs(source, {name: text})
            fs.pipe(f"{root}/{name}", text.encode())
        for name in remove:
            (source / name).unlink()
            fs.rm(f"{root}/{name}")
        a = Index.update_from(source, tmp_path / "path", workers=1)
        b = Index.update_from(url, tmp_path / "url", workers=1)
        assert (a.added, a.changed, a.removed, a.unchanged) == (b.added, b.changed, b.removed, b.unchanged), step
        assert index_bytes(tmp_path / "url", modified=False) == index_bytes(tmp_path / "path", modified=False)
        if step == 1:
            assert (b.added, b.changed, b.removed, b.unchanged) == ([], ["d1.txt"], ["d2.txt"], 4)
    assert (b.added, b.changed, b.removed, b.unchanged) == ([], [], [], 4)


def test_shards_of_a_url_are_the_path_s(tmp_path: Path) -> None:
    source = write_docs(tmp_path / "src", {f"d{i:02d}.txt": f"alpha beta w{i % 5} gamma w{i % 3}" for i in range(14)})
    build_sharded(source, tmp_path / "path", 3, workers=1)
    url = to_memory(source)
    build_sharded(url, tmp_path / "url", 3, workers=1)
    assert index_bytes(tmp_path / "url", modified=False) == index_bytes(tmp_path / "path", modified=False)
    assert ShardedIndex.open(tmp_path / "url").source == url
    fsspec.filesystem("memory").pipe(f"{url[len('memory://'):]}/d03.txt", b"now something else")
    report = build_sharded(url, tmp_path / "url", 3, workers=1)  # an update from the recorded URL
    assert report.updated and (report.changed, report.added, report.removed, report.unchanged) == (1, 0, 0, 13)
    texts = ShardedIndex.open(tmp_path / "url").source_texts()
    assert texts.text("d03.txt") == "now something else"


def test_texts_are_reread_from_a_url(tmp_path: Path) -> None:
    source = write_docs(tmp_path / "src", {"a.txt": "river bank", "sub/b.txt": "water mill"})
    archive = tar_of(source, tmp_path / "src.tar")
    with tarfile.open(tmp_path / "src.tar.gz", "w:gz") as gz:
        gz.add(source / "a.txt", "a.txt")
        gz.add(source / "sub" / "b.txt", "sub/b.txt")
    fsspec.filesystem("memory").pipe(f"/{tmp_path.name}.tar.gz", (tmp_path / "src.tar.gz").read_bytes())
    gzipped = f"memory:///{tmp_path.name}.tar.gz"  # a compressed archive at a URL
    for url in (to_memory(source), f"file://{source}", f"tar://::file://{archive}", f"file://{archive}", gzipped):
        assert DocumentTexts(url).get(["sub/b.txt", "a.txt"]) == {"sub/b.txt": "water mill", "a.txt": "river bank"}
        with pytest.raises(InputError, match=r"gone\.txt"):
            DocumentTexts(url).text("gone.txt")
    with pytest.raises(InputError, match="is gone"):
        DocumentTexts("memory://no-such-collection")


def test_cli_index_and_query_over_a_url(tmp_path: Path) -> None:
    source = write_docs(tmp_path / "src", {f"d{i}.txt": f"river bank water {'mill ' * i} flow {i}" for i in range(5)})
    url = to_memory(source)
    cli = CliRunner()
    built = cli.invoke(main, ["index", url, "--index", str(tmp_path / "i"), "-q", "--workers", "1"])
    assert built.exit_code == 0 and built.output.startswith("5 documents in"), built.output
    plain = cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "p"), "-q", "--workers", "1"])
    assert plain.exit_code == 0
    args = ["query", "--doc", "d2.txt", "-k", "3", "--verify"]
    a = cli.invoke(main, [*args, "--index", str(tmp_path / "p")])
    b = cli.invoke(main, [*args, "--index", str(tmp_path / "i")])
    assert a.exit_code == 0 and a.output == b.output
    sharded = cli.invoke(main, ["index", url, "--index", str(tmp_path / "s"), "--shards", "2", "-q", "--workers", "1"])
    assert sharded.exit_code == 0 and "2 shards" in sharded.output, sharded.output


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("memory://no-such-folder", "Error: no such folder or archive: memory://no-such-folder"),
        ("nosuchprotocol://x/y", "Error: cannot read nosuchprotocol://x/y: Protocol not known: nosuchprotocol"),
    ],
)
def test_bad_urls_are_one_line(tmp_path: Path, url: str, message: str) -> None:
    result = CliRunner().invoke(main, ["index", url, "--index", str(tmp_path / "i"), "-q"])
    assert result.exit_code == 1 and result.output.strip() == message
    assert not (tmp_path / "i" / "CURRENT").exists()


def test_a_file_that_is_not_an_archive_is_one_line(tmp_path: Path) -> None:
    fsspec.filesystem("memory").pipe("/plain.txt", b"just text")
    with pytest.raises(InputError, match=r"^memory:///plain.txt is neither a folder nor a tar archive$"):
        list(iter_source("memory:///plain.txt"))
    fsspec.filesystem("memory").pipe("/broken.tar", tarfile_bytes()[:700])
    with pytest.raises(CoderivError, match="memory:///broken.tar"):
        list(iter_source("memory:///broken.tar"))


def tarfile_bytes() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        data = b"some text " * 200
        info = tarfile.TarInfo("a.txt")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_a_protocol_without_its_package_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        import s3fs  # noqa: F401
    except ImportError:
        result = CliRunner().invoke(main, ["index", "s3://bucket/prefix", "--index", str(tmp_path / "i"), "-q"])
        assert result.exit_code == 1 and result.output.strip() == "Error: cannot read s3://bucket/prefix: Install s3fs to access S3"
    monkeypatch.setitem(sys.modules, "fsspec", None)  # import fsspec now raises ImportError
    with pytest.raises(MissingExtraError, match=r"reading memory:// URLs needs the optional dependencies coderiv\[remote\]"):
        list(iter_source("memory://x"))
    assert [d.doc_id for d in iter_collection(write_docs(tmp_path / "p", {"a.txt": "x"}))] == ["a.txt"]  # paths need no fsspec


@settings(max_examples=10, deadline=None)
@given(text=document)
def test_document_bytes_round_trip(text: str) -> None:
    """Whatever a document holds, the URL reader gives the bytes the folder reader gives."""
    with tempfile.TemporaryDirectory() as tmp:
        source = write_docs(Path(tmp) / "s", {"x.txt": text})
        assert [(d.doc_id, d.data, d.sha256) for d in iter_source(to_memory(source))] == [
            (d.doc_id, d.data, d.sha256) for d in iter_collection(source)
        ]


@pytest.mark.cluster
def test_workers_of_a_real_cluster_read_the_url(tmp_path: Path) -> None:
    """``dask scheduler`` + two ``dask worker`` processes: each shard task reads the URL itself
    (a file:// folder, and an archive as an fsspec tar:// folder: the generic reader), and the
    sharded index is the one built from the plain path in this process."""
    from coderiv.system.cluster import process_cluster

    source = write_docs(tmp_path / "src", {f"s{i % 3}/d{i:02d}.txt": f"river w{i % 4} bank w{i % 7} mill {i}" for i in range(15)})
    archive = tar_of(source, tmp_path / "src.tar")
    build_sharded(source, tmp_path / "path", 4, workers=1)
    build_sharded(archive, tmp_path / "tar", 4, workers=1)
    with process_cluster(2) as cluster:
        build_sharded(f"file://{source}", tmp_path / "file", 4, dask_address=cluster.address)
        build_sharded(f"tar://::file://{archive}", tmp_path / "tarfs", 4, dask_address=cluster.address)
        cli = CliRunner().invoke(main, ["index", f"file://{source}", "--index", str(tmp_path / "cli"), "--shards", "4",
                                        "--dask", cluster.address, "--quiet"])
        assert cli.exit_code == 0 and cli.output.startswith("15 documents in"), cli.output
        assert index_bytes(tmp_path / "cli") == index_bytes(tmp_path / "path")
        write_docs(source, {"s0/d00.txt": "now changed"})
        update = CliRunner().invoke(main, ["index", f"file://{source}", "--index", str(tmp_path / "cli"), "--dask", cluster.address])
        assert update.exit_code == 0 and "added 0, changed 1, removed 0, unchanged 14" in update.output, update.output
    assert index_bytes(tmp_path / "file") == index_bytes(tmp_path / "path")
    assert index_bytes(tmp_path / "tarfs") == index_bytes(tmp_path / "tar")
    assert ShardedIndex.open(tmp_path / "tarfs").source == f"tar://::file://{archive}"


def test_a_shard_reads_only_its_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``wanted`` gives exactly the documents a filter after reading would keep, from a folder,
    an archive and a URL, and a folder's other files are never opened."""
    from coderiv.index.format.shard_set import shard_of
    from coderiv.text import collection as collection_module

    source = write_docs(tmp_path / "src", {f"d{i:02d}.txt": f"text number {i}" for i in range(20)})
    archive = tar_of(source, tmp_path / "src.tar")
    for where in (source, archive, to_memory(source), f"tar://::file://{archive}"):
        for shard in range(3):
            def wanted(doc_id: str, shard: int = shard) -> bool:
                return shard_of(doc_id, 3) == shard

            every = [(d.doc_id, d.data) for d in iter_source(where) if wanted(d.doc_id)]
            assert [(d.doc_id, d.data) for d in iter_source(where, wanted=wanted)] == every and every
    opened: list[str] = []
    real = collection_module._read_regular
    monkeypatch.setattr(collection_module, "_read_regular", lambda path, name: opened.append(name) or real(path, name))
    assert [d.doc_id for d in iter_source(source, wanted=lambda d: d.startswith("d1"))] == [f"d1{i}.txt" for i in range(10)]
    assert opened == [f"d1{i}.txt" for i in range(10)]


class FakeClient:
    """What check_workers asks of a ``distributed.Client``: ``run`` on every worker."""

    def __init__(self, facts: dict[str, tuple[str, list[str]]] | Exception) -> None:
        self.facts = facts

    def run(self, function: object, *args: object) -> dict[str, tuple[str, list[str]]]:
        if isinstance(self.facts, Exception):
            raise self.facts
        return self.facts


def test_workers_must_run_this_coderiv_with_the_extras() -> None:
    from coderiv._version import __version__
    from coderiv.system.cluster import _worker_facts, check_workers

    assert _worker_facts(("json", "no_such_module_here")) == (__version__, ["no_such_module_here"])
    check_workers(FakeClient({"tcp://a:1": (__version__, []), "tcp://b:2": (__version__, [])}))
    with pytest.raises(CoderivError, match=r"^Dask worker tcp://b:2 runs coderiv 0\.0\.1, this process .*: install the same version"):
        check_workers(FakeClient({"tcp://a:1": (__version__, []), "tcp://b:2": ("0.0.1", [])}))
    with pytest.raises(CoderivError, match=r"^Dask worker tcp://a:1 cannot import fsspec: install the same coderiv extras"):
        check_workers(FakeClient({"tcp://a:1": (__version__, ["fsspec"])}), ("fsspec",))
    with pytest.raises(CoderivError, match=r"^the Dask workers cannot run coderiv \(ModuleNotFoundError: No module named 'coderiv'\)"):
        check_workers(FakeClient(ModuleNotFoundError("No module named 'coderiv'")))
    with pytest.raises(CoderivError, match="no workers"):
        check_workers(FakeClient({}))


def test_symlinks_on_a_file_system_that_reports_them(tmp_path: Path) -> None:
    """A file system other than file:// that lists symlinks (fsspec's dir:: over local files):
    a link is reported, not read, unless follow_symlinks."""
    from fsspec.implementations.dirfs import DirFileSystem
    from fsspec.implementations.local import LocalFileSystem

    from coderiv.text.collection import ReadOptions
    from coderiv.text.remote import RemoteSource

    source = write_docs(tmp_path / "src", {"a.txt": "river bank", "b.txt": "water mill"})
    (source / "link.txt").symlink_to(source / "a.txt")
    remote = RemoteSource("dir::file://" + str(source))
    remote.__dict__["_fs"] = (DirFileSystem(path=str(source), fs=LocalFileSystem()), "")
    seen = [(d.doc_id, d.data, d.problem) for d in remote.documents()]
    assert seen == [("a.txt", b"river bank", ""), ("b.txt", b"water mill", ""),
                    ("link.txt", b"", "symlink: not followed in a collection read by URL (--follow-symlinks follows it)")]
    followed = [(d.doc_id, d.data) for d in remote.documents(ReadOptions(follow_symlinks=True))]
    assert followed == [("a.txt", b"river bank"), ("b.txt", b"water mill"), ("link.txt", b"river bank")]
