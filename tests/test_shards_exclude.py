"""``coderiv query`` on a sharded index with ``--method containment`` and the exclusions
(``--exclude-self``, ``--exclude-versions``): the output of one index over the same collection,
byte for byte, with the shards scored by threads here or by the workers of a real Dask cluster;
and, as a law over random collections, the same ranked lists as one index."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.cli import main
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.index import Index
from coderiv.ranking.batch import Limits, check_batch
from coderiv.ranking.containment import ContainmentSearcher, open_with_chunks
from coderiv.ranking.search import MeasureSearcher
from coderiv.ranking.sharded import ShardedMeasureSearcher
from coderiv.ranking.sharded_containment import ShardedContainmentSearcher
from coderiv.system.cluster import process_cluster
from tests.support.files import write_docs
from tests.support.strategies import collection

BASE = [" ".join(f"w{(i * 11 + j * 5) % 41}" for j in range(60)) for i in range(6)]
#: six documents, each with two later versions (a few words changed or added), and a stray one
DOCS = {f"t{i}/v1.txt": text for i, text in enumerate(BASE)}
DOCS |= {f"t{i}/v2.txt": text.replace(f"w{i}", "changed", 1) + " a few more words" for i, text in enumerate(BASE)}
DOCS |= {f"t{i}/v3.txt": text + " and even more words at the end" for i, text in enumerate(BASE)}
DOCS["stray.txt"] = "w1 w2 w3 nothing else here at all"

ARGS = [
    ["--method", "containment"],
    ["--method", "containment", "--exclude-self"],
    ["--method", "containment", "--exclude-versions", "--format", "json"],
    ["-m", "cosine", "--exclude-self"],
    ["-m", "identity5", "--exclude-versions", "-k", "4"],
    ["--exclude-versions", "--min-percent", "20", "--format", "tsv"],
]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The collection, one index over it and 3 shards of it, both with their chunks pair table."""
    root = tmp_path_factory.mktemp("exclude")
    source = write_docs(root / "src", DOCS)
    cli = CliRunner()
    for name, extra in [("one", []), ("many", ["--shards", "3"])]:
        done = cli.invoke(main, ["index", str(source), "--index", str(root / name), *extra, "--quiet", "--workers", "1"])
        assert done.exit_code == 0, done.output
        pairs = cli.invoke(main, ["pairs", "--index", str(root / name), "--quiet"])
        assert pairs.exit_code == 0, pairs.output
    return source, root / "one", root / "many"


def run(index: Path, args: list[str], queries: list[str]) -> str:
    result = CliRunner().invoke(main, ["query", *queries, *args, "--index", str(index)])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("args", ARGS, ids=" ".join)
def test_query_on_shards_prints_one_index_s_output(indexes: tuple[Path, Path, Path], args: list[str]) -> None:
    source, one, many = indexes
    queries = ["--doc", "t2/v1.txt", "--doc", "stray.txt", str(source / "t4" / "v3.txt")]  # ids and a file of the source
    expected = run(one, args, queries)
    assert run(many, args, queries) == expected
    if "--exclude-self" in args:
        assert "excluded: t2/v1.txt" in expected and "excluded: t4/v3.txt" in expected
    if "--exclude-versions" in args and "json" in args:
        assert '"t2/v2.txt"' in expected.split('"excluded"')[1]  # the versions of t2/v1 are left out


@pytest.mark.cluster
def test_containment_and_exclusions_on_a_real_cluster(indexes: tuple[Path, Path, Path]) -> None:
    """``dask scheduler`` + two ``dask worker`` processes score the shards (``--dask``)."""
    source, one, many = indexes
    queries = ["--doc", "t1/v2.txt", str(source / "t5" / "v1.txt")]
    expected = {tuple(a): run(one, a, queries) for a in ARGS[1:4]}
    with process_cluster(2) as cluster:
        for args, output in expected.items():
            assert run(many, [*args, "--dask", cluster.address], queries) == output


def test_a_shard_set_without_chunks_gets_them_and_says_so(tmp_path: Path) -> None:
    source = write_docs(tmp_path / "src", {k: v for k, v in DOCS.items() if k.startswith(("t0", "t1"))})
    build_sharded(source, tmp_path / "many", 2, workers=1)
    Index.update_from(source, tmp_path / "one", workers=1)
    result = CliRunner().invoke(main, ["query", "--doc", "t0/v1.txt", "--method", "containment", "--index", str(tmp_path / "many")])
    assert result.exit_code == 0 and "rebuilding the 2 shards" in result.stderr
    assert result.stdout == run(tmp_path / "one", ["--method", "containment"], ["--doc", "t0/v1.txt"])


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("exclude-law")


@settings(max_examples=10, deadline=None)
@given(docs=collection, k=st.integers(1, 4), pick=st.integers(0, 11), top=st.integers(1, 5))
@pytest.mark.slow
def test_excluding_on_shards_gives_one_index_s_lists(cases: Path, docs: list[str], k: int, pick: int, top: int) -> None:
    """For containment and a ranking measure, the ranked lists of ``--doc`` queries with their
    own document excluded are one index's: same ids in the same order, same percentages."""
    case = Path(tempfile.mkdtemp(dir=cases))
    source = write_docs(case / "src", {f"d{i:02d}.txt": text for i, text in enumerate(docs)})
    Index.update_from(source, case / "one", workers=1)
    build_sharded(source, case / "many", k, workers=1)
    single, sharded = open_with_chunks(case / "one"), open_with_chunks(case / "many")
    query = single.doc_ids[pick % single.n_docs]
    pairs = [
        (ContainmentSearcher(single), ShardedContainmentSearcher(sharded)),
        (MeasureSearcher(single, "identity5"), ShardedMeasureSearcher(sharded, "identity5")),
    ]
    for one, many in pairs:
        limits = Limits.from_options(top, None)
        [a] = check_batch(single, one, [query], limits, exclude_self=True)
        [b] = check_batch(sharded, many, [query], limits, exclude_self=True)
        assert a.result is not None and b.result is not None
        assert a.own == b.own == query and a.excluded == b.excluded == (query,)
        assert [m.doc_id for m in b.result.matches] == [m.doc_id for m in a.result.matches]
        assert query not in [m.doc_id for m in b.result.matches]
        assert len(a.result.matches) <= top
        np.testing.assert_allclose([m.percent for m in b.result.matches], [m.percent for m in a.result.matches], rtol=1e-12)
    shutil.rmtree(case)
