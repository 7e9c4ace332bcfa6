"""A delete deletes (issue 44 item 4): after ``DELETE /api/submissions/{id}`` of an archived
submission, no read path gives its text or its matches: its match rows both ways are gone (the
neighbouring document's page no longer lists it, its own page lists nothing), and in another
submission's stored report, page and export its passages and source side are a tombstone while
every figure decided on stays; the audit log says so. Also: a stored report read back from its
JSON renders the same page (what the tombstone's page is rendered with)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from coderiv.archive.service import ArchiveSettings  # noqa: E402
from coderiv.archive.tombstones import redact_report, tombstone  # noqa: E402
from coderiv.index.index import Index  # noqa: E402
from coderiv.pairs.table import PairTable  # noqa: E402
from coderiv.report import ReportOptions, build_report, render_html  # noqa: E402
from coderiv.report.stored import report_from_dict  # noqa: E402
from coderiv.web.app import create_app  # noqa: E402
from coderiv.web.context import ServeSettings  # noqa: E402
from tests.support.archive import P, Q, add_users, build_collection, wait_until  # noqa: E402

#: Words only the deleted submission holds (30: too many for it to be a version of src1.txt).
UNIQUE = ("orchids bloom quietly beneath the ancient cedar canopy while migrating herons circle the misty "
          "marshland searching patiently for silver minnows among reeds and drifting lily pads at dawn today")
ELSEWHERE = "tectonic plates shift beneath volcanic island chains forming new basalt ridges over millions of years"


def test_a_stored_report_read_back_renders_the_same_page(tmp_path: Path) -> None:
    index_dir = build_collection(tmp_path)
    index = Index.open(index_dir)
    text = P + " " + Q + " " + ELSEWHERE
    report = build_report(index, text, "q.txt", ReportOptions(top=5), index.source_texts())
    texts = {s.doc_id: s.text for s in report.sources}
    again = report_from_dict(json.loads(json.dumps(report.to_dict())), text, texts)
    assert again.to_dict() == report.to_dict()
    assert render_html(again) == render_html(report)


def test_redacting_keeps_every_figure_and_blanks_the_source_side() -> None:
    data: dict[str, Any] = {"overall": 80.0, "sources": [
        {"doc_id": "archive/x.txt", "share": 50.0, "matched_words": 10, "versions": [], "passages": [
            {"doc_id": "archive/x.txt", "text": "copied words", "words": 10, "source_start": 5, "source_end": 17,
             "source_spans": [{"start": 5, "end": 17, "kind": "same"}], "query_spans": [{"start": 0, "end": 12, "kind": "same"}]}]},
        {"doc_id": "src1.txt", "share": 30.0, "versions": [{"doc_id": "archive/x.txt", "matched_words": 4, "verified": True}],
         "passages": [{"doc_id": "src1.txt", "text": "kept", "source_start": 1, "source_end": 5, "source_spans": []}]},
    ]}
    stone = tombstone(dt.datetime(2026, 12, 8, 1, 2))
    assert stone == "a source removed on 2026-12-08 at its owner's request"
    assert redact_report(data, "archive/x.txt", stone)
    first, second = data["sources"]
    assert (first["removed"], first["share"], first["matched_words"], data["overall"]) == (stone, 50.0, 10, 80.0)
    assert first["passages"] == [{"doc_id": "archive/x.txt", "text": stone, "words": 10, "source_start": 0, "source_end": 0,
                                  "source_spans": [], "query_spans": [{"start": 0, "end": 12, "kind": "same"}]}]
    assert second["versions"][0]["removed"] == stone and second["passages"][0]["text"] == "kept"
    assert not redact_report(data | {"sources": [second | {"versions": []}]}, "archive/x.txt", stone)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str], Path]]:
    index = build_collection(tmp_path)
    url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    tokens = add_users(url)
    with TestClient(create_app(ServeSettings(index, archive=ArchiveSettings(url, workers=1, lease=10)))) as client:
        yield client, tokens, index


def checked(client: TestClient, headers: dict[str, str], text: str, name: str) -> dict[str, Any]:
    sid = client.post("/api/submissions", files={"file": (name, text.encode())}, headers=headers).json()["id"]
    body = wait_until(lambda: (lambda b: b if b["state"] in ("done", "failed") else None)(
        client.get(f"/api/submissions/{sid}", headers=headers).json()), 90)
    assert body and body["state"] == "done", body
    return body  # type: ignore[no-any-return]


@pytest.mark.slow
def test_a_delete_leaves_no_read_path_with_the_documents_text_or_matches(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, index = site
    sam, sue, eve, ada = ({"Authorization": f"Bearer {tokens[n]}"} for n in ("sam", "sue", "eve", "ada"))
    thesis = checked(client, sam, P + " " + UNIQUE, "thesis.txt")
    sid = thesis["id"]
    client.post(f"/api/submissions/{sid}/archive", headers=eve)
    doc = f"archive/{sid}.txt"
    assert wait_until(lambda: client.get(f"/api/submissions/{sid}", headers=eve).json()["archived_doc"], 60) == doc
    # another submitter's later text copies the archived thesis (its words of src1.txt and its own)
    copy = checked(client, sue, P + " " + UNIQUE[:60] + " " + ELSEWHERE, "copy.txt")
    cid = copy["id"]
    assert doc in [s["doc_id"] for s in copy["sources"]]
    before = client.get(f"/api/submissions/{cid}/report", params={"format": "json"}, headers=sue).json()
    page_before = client.get(f"/api/submissions/{cid}/report", headers=sue).text
    assert "migrating herons" in page_before  # the thesis's own words, in its source pane
    assert doc in [m["doc_id"] for m in client.get("/api/archive/document", params={"id": "src1.txt"}, headers=eve).json()["matches"]]
    assert client.get("/api/archive/document", params={"id": doc}, headers=eve).json()["matches"]

    assert client.delete(f"/api/submissions/{sid}", headers=eve).json() == {"id": sid, "state": "deleted"}
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    stone = f"a source removed on {today} at its owner's request"
    # the document's own rows and the neighbour's, both ways
    assert client.get("/api/archive/document", params={"id": doc}, headers=eve).json()["matches"] == []
    neighbour = client.get("/api/archive/document", params={"id": "src1.txt"}, headers=eve).json()["matches"]
    assert doc not in [m["doc_id"] for m in neighbour]
    assert doc not in client.get("/archive/document", params={"id": "src1.txt"}, headers=eve).text
    # the submission itself, the file, the index and the pair table
    for path in (f"/api/submissions/{sid}", f"/api/submissions/{sid}/report", f"/api/submissions/{sid}/export", f"/submissions/{sid}"):
        assert client.get(path, headers=eve).status_code == 404, path
    opened = Index.open(index)
    assert opened.facts(doc) is None and not (Path(str(opened.source)) / doc).exists()
    assert doc not in [d for _, _, d in PairTable.open(opened, "chunks").similar("src1.txt")]
    # the other submission's report, page, record and export: the tombstone, the same figures
    after = client.get(f"/api/submissions/{cid}/report", params={"format": "json"}, headers=sue).json()
    page = client.get(f"/api/submissions/{cid}/report", headers=sue).text
    exported = client.get(f"/api/submissions/{cid}/export", headers=sue).json()
    shown = [json.dumps(after), page, json.dumps(exported), client.get(f"/submissions/{cid}", headers=sue).text,
             client.get("/submissions", headers=eve).text, json.dumps(client.get(f"/api/submissions/{cid}", headers=sue).json())]
    for text in shown:
        assert "migrating herons" not in text.replace(UNIQUE[:60], "")  # only the copy's own words remain
    assert stone.replace("'", "&#39;") in page  # as Jinja2 escapes it
    assert stone in json.dumps(exported["checks"][0]["report"])
    removed = next(s for s in after["sources"] if s["doc_id"] == doc)
    assert removed["removed"] == stone and {p["text"] for p in removed["passages"]} == {stone}
    figures = ("rank", "share", "credited_words", "matched_words", "matched_percent", "containment_percent", "ranking_percent")
    assert [[s[k] for k in figures] for s in after["sources"]] == [[s[k] for k in figures] for s in before["sources"]]
    assert (after["overall"], after["covered_words"]) == (before["overall"], before["covered_words"])
    again = client.get(f"/api/submissions/{cid}", headers=sue).json()
    assert again["overall"] == copy["overall"]
    shares = [(s["doc_id"], s["share"]) for s in copy["sources"]]
    assert [(s["doc_id"], s["share"]) for s in again["sources"]] == shares  # the figures decided on
    assert [s["student_paper"] for s in again["sources"]] == [None, None]  # its name went with it (issue 42)
    assert next(s for s in copy["sources"] if s["doc_id"] == doc)["student_paper"]["filename"] == "thesis.txt"
    # the audit log says so, and the other submission's export carries it
    deleted = client.get("/api/audit", params={"target": sid}, headers=ada).json()["entries"][0]
    assert (deleted["user"], deleted["action"]) == ("eve", "delete")
    assert deleted["detail"].startswith(f"archived as {doc}; ")
    assert "tombstone in 1 stored report(s) of 1 other submission(s)" in deleted["detail"]
    assert [e["detail"] for e in exported["audit"] if e["action"] == "redact"] == [
        f"{doc}: {stone}; its passages replaced in 1 stored report(s), the figures kept"]
