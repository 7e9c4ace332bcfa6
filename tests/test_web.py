"""The web app through FastAPI's TestClient: exact percentages and rankings on small indexes,
every bad input with its status and one-line message, the token, security headers, escaping,
the worker pool's limit, and a new index generation picked up without a restart."""

from __future__ import annotations

import json
import math
import re
import threading
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from coderiv.index.index import Index  # noqa: E402
from coderiv.pairs.methods import get_method  # noqa: E402
from coderiv.pairs.run import run_pairs  # noqa: E402
from coderiv.ranking.measures import DEFAULT_MEASURE  # noqa: E402
from coderiv.ranking.results import QueryResult  # noqa: E402
from coderiv.web.app import create_app  # noqa: E402
from coderiv.web.context import ServeSettings  # noqa: E402
from coderiv.web.snapshot import Snapshot  # noqa: E402
from tests.support.files import write_docs  # noqa: E402

TINY = {"a.txt": "alpha beta gamma", "b.txt": "alpha beta delta", "c.txt": "epsilon zeta"}

# 86 and 88 characters, lower case, single spaces: normalization leaves them as they are
P = "the lighthouse keeper climbed the stairs every evening to light the lamp above the bay"
Q = "a recipe for bread needs flour water salt and patience more than any machine could offer"
X = "quartz basalt granite marble slate shale gneiss schist pumice obsidian"
Y = "quartz basalt granite marble slate shale gneiss schist"
PASSAGES = {
    "src1.txt": P,
    "src2.txt": Q + " completely different words follow here",
    "x.txt": X,
    "y.txt": Y,
    "sub/z.txt": "nothing in common with anything else at all",
}


def client_for(index_dir: Path, **options: object) -> TestClient:
    return TestClient(create_app(ServeSettings(index_dir, **options)))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    Index.update_from(write_docs(root / "docs", TINY), root / "index", workers=1)
    return root / "index"


@pytest.fixture(scope="module")
def passages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("passages")

    folder = write_docs(root / "docs", PASSAGES)
    Index.update_from(folder, root / "index", workers=1)
    spec = get_method("chunks").store
    Index.update_from(folder, root / "index", stores=[spec], workers=1)
    run_pairs(Index.open(root / "index"), "chunks")
    return root / "index"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The documents of ``passages`` in an index without a chunk store (no report: fallback)."""
    root = tmp_path_factory.mktemp("plain")
    Index.update_from(write_docs(root / "docs", PASSAGES), root / "index", workers=1)
    return root / "index"


@pytest.fixture(scope="module")
def client(tiny: Path) -> TestClient:
    return client_for(tiny)


def ranking(body: dict) -> list[tuple[int, float, str]]:
    return [(m["rank"], round(m["percent"], 10), m["doc_id"]) for m in body["matches"]]


# -- ranking: hand-computed percentages -----------------------------------------------------
# N = 3; f_t: alpha 2, beta 2, gamma 1, delta 1. identity5 of the query "alpha beta gamma":
# S(q,q) = N/f_alpha + N/f_beta + N/f_gamma = 1.5 + 1.5 + 3 = 6 (all lengths 3: L = 1);
# b.txt shares alpha and beta: 1.5 + 1.5 = 3, i.e. 50%; c.txt shares nothing and is not listed.


def test_upload_ranks_with_hand_computed_identity5_percentages(client: TestClient) -> None:
    response = client.post("/api/check", files={"file": ("query.txt", b"alpha beta gamma")}, data={"verify": "false"})
    assert response.status_code == 200
    body = response.json()
    assert body["query"] == "query.txt" and body["measure"] == "identity5"
    assert body["self_score"] == pytest.approx(6.0)
    assert ranking(body) == [(1, 100.0, "a.txt"), (2, 50.0, "b.txt")]


def test_pasted_text_and_html_upload_give_the_same_ranking(client: TestClient) -> None:
    pasted = client.post("/api/check", data={"text": "Alpha, BETA; gamma!", "verify": "false"}).json()
    assert pasted["query"] == "pasted text"
    assert ranking(pasted) == [(1, 100.0, "a.txt"), (2, 50.0, "b.txt")]
    markup = b"<!doctype html><html><head><title>x</title></head><body><p>alpha <b>beta</b> gamma</p><script>delta</script></body></html>"
    html = client.post("/api/check", files={"file": ("page.html", markup)}, data={"verify": "false"}).json()
    assert ranking(html) == [(1, 100.0, "a.txt"), (2, 50.0, "b.txt")]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("q.txt", b"alpha beta gamma\n"),
        ("q.md", b"alpha *beta* gamma\n"),
        ("q.rst", b"alpha ``beta`` gamma\n"),
        ("q.htm", b"<p>alpha<br>beta &amp; <em>gamma</em></p><style>delta {}</style>"),
        ("q.xhtml", b"<?xml version='1.0'?><html><body>alpha beta gamma<!-- delta --></body></html>"),
        ("q.txt", b"\xef\xbb\xbfalpha\tbeta\r\ngamma"),  # BOM, tabs, CRLF
    ],
)
def test_every_readable_format_gives_the_same_ranking(client: TestClient, name: str, data: bytes) -> None:
    body = client.post("/api/check", files={"file": (name, data)}, data={"verify": "false"}).json()
    assert ranking(body) == [(1, 100.0, "a.txt"), (2, 50.0, "b.txt")]
    assert body["lossy"] is False


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import coderiv

    root = tmp_path_factory.mktemp("example")
    Index.update_from(Path(coderiv.__file__).parent / "data" / "example", root / "index", workers=1)
    return root / "index"


@pytest.mark.parametrize("name", ["medieval-trade-v2.docx", "user-guide-v3.md", "star-distances.html", "river-ecology-v1.txt"])
def test_an_upload_in_each_bundled_format_finds_itself_at_100_percent(example: Path, name: str) -> None:
    import coderiv

    data = (Path(coderiv.__file__).parent / "data" / "example" / name).read_bytes()
    body = client_for(example).post("/api/check", files={"file": (name, data)}, data={"verify": "false"}).json()
    assert (body["matches"][0]["doc_id"], round(body["matches"][0]["percent"], 9)) == (name, 100.0)


def test_undecodable_bytes_are_replaced_and_reported(client: TestClient) -> None:
    body = client.post("/api/check", files={"file": ("q.txt", b"alpha beta gamma caf\xe9")}, data={"verify": "false"}).json()
    assert body["lossy"] is True
    assert body["notes"] == ["q.txt: undecodable bytes were replaced (not valid UTF-8)"]


def test_cosine_percentages_follow_the_formula(client: TestClient) -> None:
    # w_t = ln(1 + N/f_t): ln 2.5 for alpha and beta, ln 4 for gamma and delta; every tf is 1.
    # b.txt: (2 ln²2.5 / W_b) / sqrt(2 ln²2.5 + ln²4), W_b = sqrt(2 ln²2.5 + ln²4).
    shared = 2 * math.log(2.5) ** 2
    expected_b = 100 * shared / (shared + math.log(4) ** 2)
    body = client.post("/api/check", data={"text": "alpha beta gamma", "measure": "cosine", "verify": "false"}).json()
    assert [m["doc_id"] for m in body["matches"]] == ["a.txt", "b.txt"]
    assert body["matches"][0]["percent"] == pytest.approx(100.0)
    assert body["matches"][1]["percent"] == pytest.approx(expected_b)
    assert round(expected_b, 2) == 46.63


def test_top_limits_the_matches(client: TestClient) -> None:
    body = client.post("/api/check", data={"text": "alpha beta gamma", "top": "1", "verify": "false"}).json()
    assert ranking(body) == [(1, 100.0, "a.txt")]


# -- verification: exact passages --------------------------------------------------------------


def test_verified_percentages_are_the_share_of_the_query_the_passages_cover(passages: Path) -> None:
    assert (len(P), len(Q)) == (86, 88)
    query = P + " " + Q  # 86 + 1 + 88 = 175 characters, all of them covered against itself
    body = client_for(passages).post("/api/check", files={"file": ("q.txt", query.encode())}).json()
    by_id = {m["doc_id"]: m for m in body["matches"]}
    # words in aligned passages (issue 24): P's 15 and Q's 16 of the query's 31
    assert by_id["src1.txt"]["verified"] == pytest.approx(100 * 15 / 31)
    assert by_id["src2.txt"]["verified"] == pytest.approx(100 * 16 / 31)
    [p1] = by_id["src1.txt"]["passages"]
    assert (p1["a_start"], p1["a_end"], p1["b_start"], p1["b_end"]) == (0, 86, 0, 86)
    [p2] = by_id["src2.txt"]["passages"]
    assert (p2["a_start"], p2["a_end"], p2["b_start"], p2["b_end"]) == (87, 175, 0, 88)
    assert set(by_id) == {"src1.txt", "src2.txt"}  # no other document shares a term


def test_a_short_query_is_verified_at_zero_with_the_reason(client: TestClient) -> None:
    body = client.post("/api/check", data={"text": "alpha beta gamma"}).json()
    assert [m["verified"] for m in body["matches"]] == [0.0, 0.0]
    assert body["verify_note"] == "the query has no passage of 60+ characters: every verified percentage is 0"


def wait_for(web: TestClient, job: str) -> dict:
    for _ in range(400):
        status = web.get(f"/api/checks/{job}").json()
        if status["state"] != "verifying":
            return status
        threading.Event().wait(0.05)
    raise AssertionError(f"check {job} did not finish")


def test_without_a_chunk_store_the_page_verifies_the_ranked_matches(plain: Path) -> None:
    web = client_for(plain)
    started = web.post("/check", files={"file": ("q.txt", (P + " " + Q).encode())}, follow_redirects=False)
    assert started.status_code == 303
    job = started.headers["location"].rsplit("/", 1)[1]
    status = wait_for(web, job)
    assert status["state"] == "done" and status["done"] == status["total"] == 2
    assert status["stage"] == "verifying the ranked matches with aligned passages"
    assert status["result"]["report"] is None
    assert status["result"]["report_note"].startswith("no evidence report: the index has no chunk store")
    verified = [(m["doc_id"], round(m["verified"], 6)) for m in status["result"]["matches"]]
    assert verified == [("src2.txt", round(100 * 16 / 31, 6)), ("src1.txt", round(100 * 15 / 31, 6))]
    page = web.get(f"/check/{job}").text
    assert "48.4%" in page and "51.6%" in page  # 15/31 and 16/31 words
    assert 'id="progress"' not in page and "the index has no chunk store" in page
    assert web.get(f"/check/{job}/report").status_code == 404
    assert web.get("/api/checks/not-a-job").status_code == 404
    assert web.get("/check/not-a-job").status_code == 404


def test_the_page_shows_progress_while_the_report_is_built(passages: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coderiv.web import checks, pages

    release = threading.Event()

    def slow_report(*args):  # type: ignore[no-untyped-def]
        release.wait(30)
        return checks.report(*args)

    monkeypatch.setattr(pages, "report", slow_report)
    web = client_for(passages)
    job = web.post("/check", data={"text": P}, follow_redirects=False).headers["location"].rsplit("/", 1)[1]
    try:
        page = web.get(f"/check/{job}").text
        assert 'data-state="verifying"' in page and '<progress id="progress"></progress>' in page
        assert "Building the report:</span> <span id=\"progress-stage\">finding candidate sources</span>" in page
        assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in page
        assert "<td class=\"num share\">…</td>" in page  # the ranking is there already
        status = web.get(f"/api/checks/{job}").json()
        assert (status["state"], status["done"], status["total"], "result" in status) == ("verifying", 0, 0, False)
    finally:
        release.set()
    assert wait_for(web, job)["state"] == "done"
    assert "<noscript>" not in web.get(f"/check/{job}").text


# The report (coderiv.report) counts words: P has 15 and Q 16, so the query P + Q has 31; src1
# explains P's 15 and src2 Q's 16, which no other source explains: 15/31 and 16/31, 100% overall.


def test_the_page_builds_the_evidence_report(passages: Path) -> None:
    web = client_for(passages)
    started = web.post("/check", files={"file": ("q.txt", (P + " " + Q).encode())}, follow_redirects=False)
    job = started.headers["location"].rsplit("/", 1)[1]
    status = wait_for(web, job)
    assert status["state"] == "done"
    built = status["result"]["report"]
    assert (built["total_words"], built["covered_words"], built["overall"]) == (31, 31, 100.0)
    assert status["stage"] == f"aligning {built['candidates']} candidates with the document"  # the last stage reached
    assert [(s["doc_id"], s["share"], s["credited_words"]) for s in built["sources"]] == [
        ("src2.txt", 100 * 16 / 31, 16), ("src1.txt", 100 * 15 / 31, 15)]  # most words first
    page = web.get(f"/check/{job}").text
    assert '<strong id="overall">100.0%</strong>' in page and 'sandbox="allow-scripts"' in page
    assert '<td class="num share">51.6%</td>' in page and '<td class="num share">48.4%</td>' in page
    assert page.count('<td class="num reuse">1 (1 verbatim)</td>') == 2  # each source's passages by kind of reuse
    # the first answer is the evidence: the sources by share, the whole-document ranking below
    assert page.index('id="sources"') < page.index('id="ranking"') < page.index('id="matches"')
    assert page.index("src2.txt", page.index('id="sources"')) < page.index("src1.txt", page.index('id="sources"'))
    framed = web.get(f"/check/{job}/report")
    assert framed.status_code == 200 and "src1.txt" in framed.text
    assert "sandbox allow-scripts" in framed.headers["content-security-policy"]
    assert framed.headers["x-frame-options"] == "SAMEORIGIN"
    download = web.get(f"/check/{job}/report", params={"download": "true"})
    assert download.headers["content-disposition"] == 'attachment; filename="coderiv-report.html"'


def test_a_report_that_cannot_be_built_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_docs(tmp_path / "docs", {"src1.txt": P, "src2.txt": Q})
    Index.update_from(folder, tmp_path / "index", workers=1)
    Index.update_from(folder, tmp_path / "index", stores=[get_method("chunks").store], workers=1)
    web = client_for(tmp_path / "index")
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()  # the collection moved away after indexing: the ranking still works, the report cannot re-read
    job = web.post("/check", data={"text": P}, follow_redirects=False).headers["location"].rsplit("/", 1)[1]
    status = wait_for(web, job)
    assert status["state"] == "failed"
    assert status["error"] == f"the indexed collection {folder} is gone; cannot re-read documents to verify"
    page = web.get(f"/check/{job}").text
    assert f"No report: the indexed collection {folder} is gone" in page and '<table class="matches"' in page

    from coderiv.web import pages

    def broken(*args: object) -> None:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(pages, "report", broken)
    job = web.post("/check", data={"text": P}, follow_redirects=False).headers["location"].rsplit("/", 1)[1]
    assert wait_for(web, job)["error"] == "internal error (RuntimeError); the server log has the details"


def test_report_api_with_each_exclusion(passages: Path) -> None:
    web = client_for(passages)
    quoted = f'{P} "{Q}" [4]'  # an attributed quotation (issue 24: only those are left out); 32 words
    excluded = web.post("/api/report", data={"text": quoted}).json()
    assert (excluded["total_words"], excluded["covered_words"], excluded["overall"]) == (32, 15, 100 * 15 / 32)
    assert [(s["doc_id"], s["share"]) for s in excluded["sources"]] == [("src1.txt", 100 * 15 / 32), ("src2.txt", 0.0)]  # src2: quoted
    assert excluded["excluded_words"]["quote"] == 16
    kept = web.post("/api/report", data={"text": quoted, "quotes": "false"}).json()
    assert kept["overall"] == 100 * 31 / 32 and kept["options"]["exclude_quotes"] is False
    template = web.post("/api/report", data={"text": P + " " + Q}, files={"template": ("sheet.txt", Q.encode())}).json()
    assert template["overall"] == 100 * 15 / 31 and template["excluded_words"]["template"] == 16
    assert template["options"]["templates"] == ["sheet.txt"]
    small = web.post("/api/report", data={"text": P + " " + Q, "min_words": "17"}).json()
    assert small["overall"] == 0.0 and small["excluded_words"]["small"] == 31
    texts = web.post("/api/report", data={"text": P, "include_texts": "true"}).json()
    assert texts["query_text"] == P and texts["sources"][0]["text"] == P


def test_a_document_of_the_index_as_the_query(passages: Path) -> None:
    web = client_for(passages)
    ranked = web.post("/api/check", data={"doc": "src1.txt", "verify": "false"}).json()
    assert ranked["query"] == "src1.txt" and ranked["matches"][0]["doc_id"] == "src1.txt"
    assert ranked["matches"][0]["percent"] == pytest.approx(100.0)
    built = web.post("/api/report", data={"doc": "src1.txt"}).json()
    assert built["options"]["exclude_docs"] == ["src1.txt"]
    assert built["sources"] == [] and built["overall"] == 0.0  # nothing else contains P
    page = web.get("/document", params={"id": "src1.txt"}).text
    assert '<input type="hidden" name="doc" value="src1.txt">' in page
    started = web.post("/check", data={"doc": "src1.txt"}, follow_redirects=False)
    assert started.status_code == 303
    missing = web.post("/api/check", data={"doc": "../../etc/passwd"})
    assert missing.status_code == 404 and missing.json() == {"error": "no document '../../etc/passwd' in the index"}


def test_report_api_refuses_what_it_cannot_do(plain: Path, passages: Path) -> None:
    response = client_for(plain).post("/api/report", data={"text": P})
    assert response.status_code == 400
    assert response.json() == {
        "error": "the index has no chunk store for the report; 'coderiv index SOURCE --report-ready' builds it in the "
                 "index's own reading (or 'coderiv report FILE' adds it once)"}
    web = client_for(passages)
    common = web.post("/api/report", data={"text": P, "common": "many"}).json()
    assert common == {"error": "common must be a number of documents (got 'many')"}
    assert web.post("/api/report", data={"text": P, "min_words": "-1"}).json() == {"error": "min_words must be 0 or more (got -1)"}


# -- the collection ------------------------------------------------------------------------------


def test_info_documents_and_search(client: TestClient) -> None:
    info = client.get("/api/info").json()
    assert (info["documents"], info["distinct_terms"], info["term_occurrences"]) == (3, 6, 8)
    assert info["pair_tables"] == []
    assert client.get("/api/documents", params={"q": "B."}).json() == {"query": "B.", "total": 1, "doc_ids": ["b.txt"]}
    page = client.get("/collection", params={"q": "txt"}).text
    assert "3 documents with “txt” in the id" in page


def test_document_similar_and_group_from_the_pair_table(passages: Path) -> None:
    web = client_for(passages)
    # 5-word chunks: y.txt's 8 words give 4 chunks, all in x.txt (100%); x.txt's 10 words give 6 (4 shared: 66.7%)
    y = web.get("/api/document", params={"id": "y.txt"}).json()
    assert [(s["rank"], round(s["percent"], 6), s["doc_id"]) for s in y["similar"]] == [(1, 100.0, "x.txt")]
    x = web.get("/api/document", params={"id": "x.txt", "group_min": 60}).json()
    assert [(s["rank"], round(s["percent"], 6), s["doc_id"]) for s in x["similar"]] == [(1, round(400 / 6, 6), "y.txt")]
    assert x["group"] == {"group": 1, "size": 2, "doc_ids": ["x.txt", "y.txt"]}
    # groups link both ways by default (issue 28 item 6): x → y is 66.7%, so not at 70%
    assert web.get("/api/document", params={"id": "x.txt", "group_min": 70}).json()["group"] is None
    groups = web.get("/api/groups", params={"min": 50}).json()["groups"]
    assert groups == [{"group": 1, "size": 2, "doc_ids": ["x.txt", "y.txt"]}]
    assert web.get("/api/groups", params={"min": 70}).json() == {"method": "chunks", "min": 70.0, "mutual": True, "groups": []}
    one_way = web.get("/api/groups", params={"min": 70, "one_way": "true"}).json()
    assert one_way["groups"] == [{"group": 1, "size": 2, "doc_ids": ["x.txt", "y.txt"]}]  # y → x at 100% links them one way
    page = web.get("/document", params={"id": "sub/z.txt"}).text
    assert "In no group at 50.0%" in page
    assert web.get("/api/document", params={"id": "sub/z.txt"}).json()["similar"] == []


def test_a_missing_pair_table_is_a_note_on_the_page_and_404_for_groups(client: TestClient) -> None:
    doc = client.get("/api/document", params={"id": "a.txt"}).json()
    assert doc["similar"] is None and doc["pairs_note"].startswith("no pair table for method 'chunks'")
    groups = client.get("/api/groups")
    assert groups.status_code == 404 and groups.json()["error"].startswith("no pair table for method 'chunks'")


# -- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "data", "status", "message"),
    [
        (None, {}, 400, "give a document: upload a file or paste its text"),
        (None, {"text": "  \n "}, 400, "give a document: upload a file or paste its text"),
        ({"file": ("empty.txt", b"")}, {}, 400, "empty.txt is empty"),
        ({"file": ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")}, {}, 400, "image.png is a binary file, not a text document"),
        (None, {"text": "the and of"}, 400, "pasted text has no words after analysis (stopping, no stemming)"),
        (None, {"text": "alpha", "measure": "bm25"}, 400,
         "measure must be one of ['cosine', 'identity1', 'identity2', 'identity3', 'identity4', 'identity5', 'inner', "
         "'normalized'] (got 'bm25')"),
        (None, {"text": "alpha", "top": "0"}, 400, "top must be between 1 and 100 (got 0)"),
        (None, {"text": "alpha", "top": "many"}, 422, "top: Input should be a valid integer, unable to parse string as an integer"),
        ({"file": ("../../etc/passwd", b"alpha beta gamma")}, {"verify": "false"}, 200, None),
    ],
)
def test_bad_input_is_a_one_line_error(client: TestClient, files, data, status, message) -> None:
    response = client.post("/api/check", files=files, data=data)
    assert response.status_code == status
    if message is not None:
        assert response.json() == {"error": message}
    else:  # a path-like file name is only a label: its last part
        assert response.json()["query"] == "passwd"


def test_an_upload_over_the_limit_is_413_before_it_is_read(tiny: Path) -> None:
    web = client_for(tiny, max_upload=1000)
    big = b"alpha " * 20_000  # 120 000 bytes: over the limit and the form overhead
    response = web.post("/api/check", files={"file": ("big.txt", big)})
    assert response.status_code == 413
    assert response.json() == {"error": f"the upload is larger than the server's {1000 + 64 * 1024}-byte limit"}
    near = web.post("/api/check", files={"file": ("near.txt", b"alpha " * 200)})  # 1200 bytes: under the form limit
    assert near.status_code == 400
    assert near.json() == {"error": "near.txt: 1200 bytes is larger than the 1000-byte limit"}
    page = web.post("/check", files={"file": ("big.txt", big)})
    assert page.status_code == 413 and "the upload is larger than" in page.text and page.headers["content-type"].startswith("text/html")


def test_a_streamed_upload_is_cut_off_at_the_limit(tiny: Path) -> None:
    web = client_for(tiny, max_upload=1000)

    def body():  # no Content-Length: the limit is found while reading
        yield b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n'
        for _ in range(100):
            yield b"alpha " * 200
        yield b"\r\n--xyz--\r\n"

    response = web.post("/api/check", content=body(), headers={"content-type": "multipart/form-data; boundary=xyz"})
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.json() == {"error": f"the upload is larger than the server's {1000 + 64 * 1024}-byte limit"}


@pytest.mark.parametrize("doc_id", ["../../etc/passwd", "/etc/passwd", "a.txt/../b.txt", "A.TXT", ""])
def test_ids_are_looked_up_never_opened(client: TestClient, doc_id: str) -> None:
    response = client.get("/api/document", params={"id": doc_id})
    assert response.status_code == 404
    assert response.json() == {"error": f"no document {doc_id!r} in the index"}


def test_an_unexpected_failure_is_a_500_without_a_traceback(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coderiv.web import views

    def broken(snapshot: object) -> None:
        raise RuntimeError("secret detail /home/user/path")

    monkeypatch.setattr(views, "info", broken)
    web = TestClient(create_app(ServeSettings(tiny)), raise_server_exceptions=False)
    response = web.get("/api/info")
    assert response.status_code == 500
    assert response.json() == {"error": "internal error (RuntimeError); the server log has the details"}
    page = web.get("/collection")
    assert page.status_code == 500 and "internal error (RuntimeError)" in page.text
    assert "secret detail" not in page.text and "Traceback" not in page.text


def test_a_missing_parameter_and_an_unknown_page(client: TestClient) -> None:
    response = client.get("/api/document")
    assert response.status_code == 422 and response.json() == {"error": "id: Field required"}
    page = client.get("/no/such/page")
    assert page.status_code == 404 and "Not Found" in page.text and "Traceback" not in page.text


# -- safety -------------------------------------------------------------------------------------------


def test_a_token_is_required_when_set(tiny: Path) -> None:
    web = client_for(tiny, token="s3cret")
    missing = web.get("/api/info")
    assert missing.status_code == 401 and missing.json()["error"].startswith("this server needs a token")
    assert missing.headers["www-authenticate"] == 'Bearer realm="coderiv"'
    wrong = web.get("/api/info", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"].startswith("wrong token")
    assert web.get("/api/info", headers={"Authorization": "Bearer s3cret"}).json()["documents"] == 3
    assert web.post("/api/check", data={"text": "alpha"}).status_code == 401
    assert web.get("/static/style.css").status_code == 200  # no data in the style sheet
    first = web.get("/", params={"token": "s3cret"})  # a browser opens the page once with ?token=
    assert first.status_code == 200 and "HttpOnly; SameSite=Strict" in first.headers["set-cookie"]
    assert web.get("/collection").status_code == 200  # the cookie carries it from now on


def test_a_loopback_server_refuses_other_host_names(tiny: Path) -> None:
    settings = ServeSettings(tiny, hosts=("127.0.0.1", "localhost", "::1"))
    for base in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000", "http://LOCALHOST"):
        assert TestClient(create_app(settings), base_url=base).get("/api/info").status_code == 200, base
    rebound = TestClient(create_app(settings), base_url="http://attacker.example:8000").get("/api/info")
    assert rebound.status_code == 400
    assert rebound.json() == {"error": "this server answers only requests to 127.0.0.1, ::1, localhost (got host 'attacker.example')"}
    assert rebound.headers["x-content-type-options"] == "nosniff"


def test_security_headers_on_pages_and_errors(client: TestClient) -> None:
    for response in (client.get("/"), client.get("/api/info"), client.get("/api/document", params={"id": "x"})):
        csp = response.headers["content-security-policy"]
        assert "script-src 'self';" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
    assert "<script src=\"/static/check.js\"></script>" in client.get("/").text
    assert not re.search(r"<script>|\son\w+=", client.get("/").text)  # no inline script or handlers


def test_document_text_and_names_are_escaped(tmp_path: Path) -> None:
    hostile = "<script>alert(1)</script> <img src=x onerror=alert(2)> </textarea> " + P
    folder = write_docs(tmp_path / "docs", {"<b>bold</b>.txt": hostile, "other.txt": Q})
    Index.update_from(folder, tmp_path / "index", workers=1)
    web = client_for(tmp_path / "index")
    started = web.post("/check", files={"file": ("<img src=x onerror=alert(3)>.txt", hostile.encode())})
    assert started.status_code == 200  # followed the redirect to the results page
    wait_for(web, str(started.url).rsplit("/", 1)[1])
    page = web.get(str(started.url)).text
    assert "&lt;b&gt;bold&lt;/b&gt;.txt" in page and "<b>bold</b>" not in page
    assert "&lt;img src=x onerror=alert(3)&gt;.txt" in page
    assert "script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;" in page  # the passage, as text
    assert "<script>alert" not in page and "<img src=x" not in page and "</textarea> " not in page
    collection = web.get("/collection").text
    assert "&lt;b&gt;bold&lt;/b&gt;.txt" in collection and "<b>bold</b>" not in collection
    assert 'href="/document?id=%3Cb%3Ebold%3C/b%3E.txt"' in collection


def test_control_characters_of_names_are_shown_as_escapes(tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "docs", {"bell\x07\x1b[31mred.txt": P, "other.txt": Q})
    Index.update_from(folder, tmp_path / "index", workers=1)
    web = client_for(tmp_path / "index")
    started = web.post("/check", files={"file": ("up\x1b]0;x\x07load.txt", P.encode())})
    wait_for(web, str(started.url).rsplit("/", 1)[1])
    for page in (web.get(str(started.url)).text, web.get("/collection").text):
        assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", page)
        assert "bell\\x07\\x1b[31mred.txt" in page


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "https://evil.example"},
        {"origin": "null"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "cross-site", "origin": "http://testserver"},
        {"sec-fetch-site": "same-site", "origin": "http://testserver"},
    ],
)
def test_a_cross_site_post_is_refused(tiny: Path, headers: dict[str, str]) -> None:
    web = client_for(tiny)
    for path in ("/api/check", "/check"):
        answer = web.post(path, data={"text": P, "verify": "false"}, headers=headers, follow_redirects=False)
        assert answer.status_code == 403, path
        assert "cross-site request" in answer.text


@pytest.mark.parametrize(
    "headers",
    [{}, {"origin": "http://testserver"}, {"sec-fetch-site": "same-origin"}, {"sec-fetch-site": "none"},
     {"sec-fetch-site": "same-origin", "origin": "null"}],  # what a browser sends under Referrer-Policy: no-referrer
)
def test_a_same_site_or_non_browser_post_is_answered(tiny: Path, headers: dict[str, str]) -> None:
    web = client_for(tiny)
    assert web.post("/api/check", data={"text": P, "verify": "false"}, headers=headers).status_code == 200
    assert web.post("/check", data={"text": P}, headers=headers, follow_redirects=False).status_code == 303
    assert web.get("/", headers={"sec-fetch-site": "cross-site"}).status_code == 200  # a link from elsewhere


def test_a_full_pool_answers_503_with_retry_after(tiny: Path) -> None:
    web = client_for(tiny, workers=1, queue=0)
    pool = web.app.state.context.pool
    release = threading.Event()
    blocker = pool.submit(release.wait)
    try:
        response = web.post("/api/check", data={"text": "alpha beta gamma"})
        assert response.status_code == 503 and response.headers["retry-after"] == "5"
        assert response.json() == {"error": "the server is busy (1 checks running or queued); retry in 5 seconds"}
    finally:
        release.set()
        blocker.result()
    assert web.post("/api/check", data={"text": "alpha beta gamma", "verify": "false"}).status_code == 200


# -- a new generation without a restart ------------------------------------------------------------


def test_a_new_generation_is_served_without_a_restart(tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "docs", TINY)
    Index.update_from(folder, tmp_path / "index", workers=1)
    web = client_for(tmp_path / "index")
    before = web.app.state.context.snapshots.current()
    assert ranking(web.post("/api/check", data={"text": "alpha beta gamma", "verify": "false"}).json()) == [
        (1, 100.0, "a.txt"), (2, 50.0, "b.txt")]
    # a half-written generation (a writer's staging folder) is invisible
    (tmp_path / "index" / "tmp-partial").mkdir()
    (tmp_path / "index" / "tmp-partial" / "doc_ids.bin").write_bytes(b"junk")
    assert web.get("/api/info").json()["generation"] == before.generation
    write_docs(folder, {"d.txt": "gamma gamma delta"})
    Index.update_from(folder, tmp_path / "index", workers=1)
    info = web.get("/api/info").json()
    assert info["documents"] == 4 and info["generation"] != before.generation
    # N = 4; f_t: alpha 2, beta 2, gamma 2, delta 2: S(q,q) = 2 + 2 + 2 = 6; a.txt 100%,
    # b.txt 2 + 2 = 4 (66.7%), d.txt: f_d = 3 (L = 1), gamma f_dt 2 vs f_qt 1: 2 / 2 = 1 (16.7%)
    assert ranking(web.post("/api/check", data={"text": "alpha beta gamma", "verify": "false"}).json()) == [
        (1, 100.0, "a.txt"), (2, round(400 / 6, 6), "b.txt"), (3, round(100 / 6, 6), "d.txt")]  # JSON: 6 decimals
    assert before.index.n_docs == 3 and _rank(before, "alpha beta gamma").matches[1].percent == 50.0  # still a snapshot


def _rank(snapshot: Snapshot, text: str) -> QueryResult:
    """``text`` ranked by the snapshot's default-measure searcher."""
    searcher = snapshot.searcher(DEFAULT_MEASURE)
    return searcher.rank(searcher.prepare(text))


def test_no_index_is_a_503_page(tmp_path: Path) -> None:
    web = client_for(tmp_path / "none")
    response = web.get("/api/info")
    assert response.status_code == 503
    assert response.json() == {"error": f"no index at {tmp_path / 'none'}: build one with 'coderiv index FOLDER' (or pass --index DIR)"}


def test_openapi_describes_the_api(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert {"/api/check", "/api/checks/{job_id}", "/api/info", "/api/documents", "/api/document", "/api/groups"} <= set(spec["paths"])
    assert "/check" not in spec["paths"]  # pages are not part of the API
    assert "unsafe-inline" in client.get("/docs").headers["content-security-policy"]  # the viewer's own bootstrap
    json.dumps(spec)
