"""The data behind the collection pages and their JSON twins: index information, document id
search, and a document's stored similar documents and group. Document ids are looked up in
the index, never opened as paths."""

from __future__ import annotations

from typing import Any

from coderiv.errors import CoderivError, ForbiddenError, NotFoundError
from coderiv.pairs.methods import DEFAULT_METHOD
from coderiv.web.snapshot import Snapshot

#: Default link threshold of a document's group on its page (percent).
DEFAULT_GROUP_MIN = 50.0
#: Most document ids one search lists.
MAX_SEARCH_RESULTS = 200


class NotAvailable(NotFoundError):
    """What was asked for is not there: a document id not in the index, a pair table not
    computed (HTTP 404)."""


class Forbidden(ForbiddenError):
    """The user's role may not do this (403)."""


class DocumentNotFound(NotAvailable):
    """A document id that is not in the index."""


def info(snapshot: Snapshot) -> dict[str, Any]:
    """The index's statistics and settings, and its pair tables with their state."""
    return {**snapshot.index.info(), "pair_tables": snapshot.pair_methods()}


def search_ids(snapshot: Snapshot, needle: str, limit: int = MAX_SEARCH_RESULTS) -> tuple[list[str], int]:
    """Document ids containing ``needle`` (case-insensitive), the first ``limit`` of them in id
    order, and how many matched in all."""
    folded = needle.casefold()
    found = [d for d in snapshot.index.doc_ids if folded in d.casefold()]
    return found[:limit], len(found)


def document(snapshot: Snapshot, doc_id: str, method: str = DEFAULT_METHOD, group_min: float = DEFAULT_GROUP_MIN) -> dict[str, Any]:
    """One document: its size and hash, its stored most similar documents under ``method`` and
    the group it belongs to at ``group_min`` percent. A pair table that is missing or stale is
    reported in ``pairs_note`` rather than as an error: the document itself exists."""
    facts = snapshot.facts(doc_id)
    if facts is None:
        raise DocumentNotFound(f"no document {doc_id!r} in the index")
    number, length, sha256 = facts
    record: dict[str, Any] = {
        "doc_id": doc_id,
        "number": number,
        "length": length,
        "sha256": sha256,
        "method": method,
        "group_min": group_min,
        "similar": None,
        "group": None,
        "pairs_note": None,
    }
    try:
        table = snapshot.pair_table(method)
        record["similar"] = [{"rank": r, "percent": p, "doc_id": d} for r, p, d in table.similar(doc_id)]
        group = next((g for g in snapshot.groups(method, group_min) if doc_id in g.doc_ids), None)
        record["group"] = group.to_dict() if group is not None else None
    except CoderivError as exc:
        record["pairs_note"] = str(exc)
    return record
