"""What the archive answers about its rows, as typed values (frozen dataclasses): a submission's
summary (the list) and its full record (the page and the API: the report's sources, its checks
and decisions), an archive document's matches over time, audit entries and users. The web
layer serialises these as they are (their fields are the JSON's keys, and the OpenAPI schema)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from coderiv.archive.models import AuditEntry, Check, Submission, User
from coderiv.archive.states import CheckState, DecisionState, RepositoryMode, Role, SubmissionState

#: Where the API serves a submission's report (``{id}``: the submission's id).
REPORT_PATH = "/api/submissions/{id}/report"


def stamp(value: dt.datetime) -> str:
    """A stored (naive UTC) time as ISO 8601 with ``Z``, to the second."""
    return value.isoformat(timespec="seconds") + "Z"


def stamp_or_none(value: dt.datetime | None) -> str | None:
    return None if value is None else stamp(value)


@dataclass(frozen=True)
class StudentPaper:
    """An earlier submission that is a document of the collection (archived, or a pending source
    in repository mode ``all``), named as Turnitin names a "student paper": its file name, title,
    author, dates and decision; ``url`` is its page, for a user who may see it (else None)."""

    submission_id: str
    filename: str
    title: str | None
    author: str
    submitted: str
    archived: str | None
    decision: DecisionState
    label: str
    url: str | None


@dataclass(frozen=True)
class Source:
    """A collection document the report found, and its share of the submission's covered words
    (``student_paper``: the earlier submission it is, if it is one)."""

    doc_id: str
    share: float
    student_paper: StudentPaper | None = None


@dataclass(frozen=True)
class CheckRow:
    started: str
    state: CheckState
    worker: str | None
    generation: str | None
    overall: float | None
    reason: str | None


@dataclass(frozen=True)
class DecisionRow:
    at: str
    by: str
    state: DecisionState
    note: str


@dataclass(frozen=True)
class SubmissionSummary:
    """A submission as the list shows it."""

    id: str
    state: SubmissionState
    reason: str | None
    filename: str
    created: str
    user: str
    overall: float | None
    top_source: str | None
    decision: DecisionState
    archived_doc: str | None
    #: the top source's name, when it is an earlier submission ("student paper: ...")
    top_source_label: str | None
    author: str
    title: str | None
    repository: RepositoryMode
    archived: str | None
    pooled: str | None


@dataclass(frozen=True)
class SubmissionRecord(SubmissionSummary):
    """A submission in full: its summary, the newest report's sources, its checks and decisions;
    ``waiting`` says its page should look again soon (a check or the archiving is under way)."""

    format: str
    size: int
    sha256: str
    attempts: int
    archive_requested: bool
    archive_error: str | None
    sources: list[Source]
    report_url: str | None
    generation: str | None
    checks: list[CheckRow]
    decisions: list[DecisionRow]
    waiting: bool
    may_archive: bool
    may_recheck: bool
    #: made from an LTI launch: whether its score went back to the platform ("score returned
    #: at ...", "score not returned: why", "score to be returned"), else None
    lti_score: str | None = None


@dataclass(frozen=True)
class SubmissionPage:
    """One page of a list of submissions, newest first."""

    page: int
    per_page: int
    total: int
    submissions: list[SubmissionSummary]


@dataclass(frozen=True)
class Accepted:
    """A submission accepted and queued."""

    id: str
    state: SubmissionState


@dataclass(frozen=True)
class Deleted:
    """A submission deleted (with its file in the collection, if it was archived)."""

    id: str
    state: str


@dataclass(frozen=True)
class Report:
    """A submission's newest evidence report, as JSON and as the HTML page."""

    submission_id: str
    json: str
    html: str


@dataclass(frozen=True)
class DocumentMatchRow:
    doc_id: str
    percent: float
    found: str
    new: bool
    student_paper: StudentPaper | None = None


@dataclass(frozen=True)
class DocumentMatches:
    """An archive document's matches over time; ``new``: found since the caller last looked."""

    doc_id: str
    last_seen: str | None
    matches: list[DocumentMatchRow]
    #: the submission this document is, if it is one (its page linked for who may see it)
    student_paper: StudentPaper | None = None


@dataclass(frozen=True)
class AuditRow:
    at: str
    user: str | None
    action: str
    target: str
    detail: str


@dataclass(frozen=True)
class AuditLog:
    entries: list[AuditRow]


@dataclass(frozen=True)
class UserRow:
    name: str
    role: Role
    revoked: bool


@dataclass(frozen=True)
class UserList:
    users: list[UserRow]


@dataclass(frozen=True)
class UserAdded:
    """A user just added, with their token (shown this once)."""

    name: str
    role: Role
    token: str


@dataclass(frozen=True)
class UserRevoked:
    name: str
    state: str


def last_check(submission: Submission) -> Check | None:
    """The newest finished check (its report is the submission's)."""
    done = [c for c in submission.checks if c.state == CheckState.DONE]
    return done[-1] if done else None


#: Papers by doc id (what :func:`summary` and :func:`record` name sources with).
Papers = dict[str, StudentPaper]


def author_of(submission: Submission) -> str:
    """Who wrote it: the author given with it, else the submitting user's name."""
    return submission.author or submission.user.name


def student_paper(submission: Submission, viewer: User) -> StudentPaper:
    """``submission`` as a later thesis's source, for ``viewer`` (linked if they may see it)."""
    day = (submission.archived or submission.created).date().isoformat()
    when = f"archived {day}" if submission.archived else f"submitted {day}, not archived"
    label = f"student paper: {submission.filename} ({author_of(submission)}), {when}, decision: {submission.decision}"
    may_see = viewer.role.may(Role.EXAMINER) or submission.user_id == viewer.id
    return StudentPaper(
        submission.id, submission.filename, submission.title, author_of(submission), stamp(submission.created),
        stamp_or_none(submission.archived), submission.decision, label, f"/submissions/{submission.id}" if may_see else None)


def summary(submission: Submission, papers: Papers | None = None) -> SubmissionSummary:
    paper = (papers or {}).get(submission.top_source or "")
    return SubmissionSummary(
        id=submission.id, state=submission.state, reason=submission.reason, filename=submission.filename,
        created=stamp(submission.created), user=submission.user.name, overall=submission.overall,
        top_source=submission.top_source, decision=submission.decision, archived_doc=submission.archived_doc,
        top_source_label=paper.label if paper is not None else None, author=author_of(submission),
        title=submission.title, repository=submission.repository, archived=stamp_or_none(submission.archived),
        pooled=stamp_or_none(submission.pooled))


def report_sources(submission: Submission) -> list[str]:
    """The doc ids of the sources of the submission's newest report."""
    check = last_check(submission)
    if check is None or not check.report_json:
        return [submission.top_source] if submission.top_source else []
    return [s["doc_id"] for s in json.loads(check.report_json)["sources"]]


def record(submission: Submission, papers: Papers | None = None) -> SubmissionRecord:
    check = last_check(submission)
    report = json.loads(check.report_json) if check is not None and check.report_json else None
    done = submission.state == SubmissionState.DONE
    archiving = submission.archive_requested and done and not submission.archived_doc and not submission.archive_error
    return SubmissionRecord(
        **vars(summary(submission, papers)),
        format=submission.format, size=submission.size, sha256=submission.sha256, attempts=submission.attempts,
        archive_requested=submission.archive_requested, archive_error=submission.archive_error,
        sources=[Source(s["doc_id"], s["share"], (papers or {}).get(s["doc_id"])) for s in report["sources"]] if report else [],
        report_url=REPORT_PATH.format(id=submission.id) if report else None,
        generation=check.generation if check is not None else None,
        checks=[CheckRow(stamp(c.started), c.state, c.worker, c.generation, c.overall, c.reason) for c in submission.checks],
        decisions=[DecisionRow(stamp(d.created), d.user.name, d.state, d.note) for d in submission.decisions],
        waiting=submission.state.pending or archiving,
        may_archive=done and not submission.archive_requested and submission.repository != RepositoryMode.NONE,
        may_recheck=not submission.state.pending,
        lti_score=lti_score(submission),
    )


def lti_score(submission: Submission) -> str | None:
    if submission.lti_launch_id is None:
        return None
    if submission.lti_score_sent is not None:
        return f"similarity returned as the score on {submission.lti_score_sent.date().isoformat()}"
    if submission.lti_score_error is not None:
        return f"score not returned: {submission.lti_score_error}"
    return "the score goes back once checked"


def audit_row(entry: AuditEntry) -> AuditRow:
    return AuditRow(stamp(entry.at), entry.user_name, entry.action, entry.target, entry.detail)


def user_row(user: User) -> UserRow:
    return UserRow(user.name, user.role, user.revoked is not None)
