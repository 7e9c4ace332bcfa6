"""What users do to the archive, one function each, whatever asks (the JSON API, the pages, a
learning platform): accept an upload, view, list, read the report, decide, archive, check again,
export and delete; each opens its own transaction, writes its audit entry, and answers a typed
value (:mod:`coderiv.archive.records`). Who may do what is checked here too (a submitter sees
only their own submissions, and another's id is refused exactly as an unknown one), so that
every caller gets the same rules; the web layer only parses, authorises the path and answers."""

from __future__ import annotations

import hashlib
import json
from html import escape
from pathlib import PurePosixPath

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from coderiv.archive import audit
from coderiv.archive.models import Decision, DocumentMatch, DocumentView, Submission, User, now
from coderiv.archive.records import (
    Accepted,
    AuditLog,
    Deleted,
    DocumentMatches,
    DocumentMatchRow,
    Papers,
    Report,
    SubmissionPage,
    SubmissionRecord,
    UserAdded,
    UserList,
    UserRevoked,
    audit_row,
    last_check,
    record,
    report_sources,
    stamp,
    stamp_or_none,
    student_paper,
    summary,
    user_row,
)
from coderiv.archive.retention import SubmissionExport, delete, export
from coderiv.archive.service import Archive, find, visible
from coderiv.archive.states import DecisionState, RepositoryMode, Role, SubmissionState, parse
from coderiv.archive.tombstones import collection_texts
from coderiv.archive.users import add_user, list_users, revoke_user
from coderiv.archive.writer import collection_folder
from coderiv.errors import ForbiddenError, InputError, NotFoundError
from coderiv.index.reader import open_index

#: The longest page of a list.
MAX_PER_PAGE = 100
#: The longest author and title kept with a submission.
MAX_AUTHOR, MAX_TITLE = 200, 500


def need(user: User, role: Role) -> None:
    """Refuse unless ``user``'s role includes ``role``."""
    if not user.role.may(role):
        raise ForbiddenError(f"a {user.role} may not do this; an {role} may" if role[0] in "aeiou"
                           else f"a {user.role} may not do this; a {role} may")


def format_of(name: str) -> str:
    """The format a file name says (its suffix, lower case; ``text`` without one)."""
    suffix = PurePosixPath(name).suffix.lower().lstrip(".")
    return suffix[:16] or "text"


class Operations:
    """The operations on ``archive`` (its database, its writer, its settings)."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive

    @staticmethod
    def papers(session: Session, viewer: User, doc_ids: list[str]) -> Papers:
        """The earlier submissions among the collection's ``doc_ids``, named for ``viewer``."""
        wanted = sorted({d for d in doc_ids if d})
        if not wanted:
            return {}
        rows = session.scalars(select(Submission).where(Submission.archived_doc.in_(wanted)))
        return {s.archived_doc: student_paper(s, viewer) for s in rows if s.archived_doc}

    def _get(self, session: Session, user: User, submission_id: str) -> Submission:
        submission = find(session, user, submission_id)
        if submission is None:
            raise NotFoundError(f"no submission {submission_id!r}")
        return submission

    def repository_of(self, requested: str | None) -> RepositoryMode:
        """The repository mode a submission is checked under: its own if given, else the archive's;
        ``none`` needs the archive's retention period (it is what forgets the submission)."""
        mode = parse(RepositoryMode, requested, "repository mode") if requested else self.archive.settings.repository
        if mode == RepositoryMode.NONE and self.archive.settings.retention_days is None:
            raise InputError("repository mode none forgets a submission after the retention period, "
                             "and this archive has none (coderiv serve --retention-days)")
        return mode

    def accept(self, user: User, label: str, data: bytes, archive: bool, repository: str | None = None,
               author: str | None = None, title: str | None = None, launch_id: int | None = None) -> Accepted:
        """Queue the upload as it is (committed before the answer: nothing accepted is lost); a
        worker reads it, in a child process within the read budget, before checking it.
        ``repository`` overrides the archive's mode for this one (:meth:`repository_of`);
        ``author`` and ``title`` name it when it is a later thesis's source. Asking to archive
        it (``archive``) is an examiner's (403 for a submitter, whose text joins the collection
        only by an examiner's choice, the ``--archive-all`` policy or repository mode ``all``)."""
        if not data:
            raise InputError(f"{label} is empty")
        if archive and not user.role.may(Role.EXAMINER):  # the collection is an examiner's choice, as on the page
            raise ForbiddenError(f"a {user.role} may not ask to archive a submission: an examiner decides what joins the collection")
        mode = self.repository_of(repository)
        archive = archive or self.archive.settings.archive_all
        if archive and mode == RepositoryMode.NONE:
            raise InputError("a submission in repository mode none is never archived (check and forget)")
        with self.archive.database.session() as session:
            submission = Submission(
                user_id=user.id, filename=label, format=format_of(label), size=len(data),
                sha256=hashlib.sha256(data).hexdigest(), text="", upload=data, state=SubmissionState.QUEUED, attempts=0,
                decision=DecisionState.OPEN, archive_requested=archive, repository=mode,
                author=(author or "").strip()[:MAX_AUTHOR] or None, title=(title or "").strip()[:MAX_TITLE] or None,
                lti_launch_id=launch_id)
            session.add(submission)
            session.flush()
            audit.record(session, user, "submit", submission.id, label)
            return Accepted(submission.id, submission.state)

    def view(self, user: User, submission_id: str) -> SubmissionRecord:
        with self.archive.database.session() as session:
            submission = self._get(session, user, submission_id)
            return record(submission, self.papers(session, user, report_sources(submission)))

    def list_page(self, user: User, page: int = 1, per_page: int = 20, state: str | None = None,
             decision: str | None = None) -> SubmissionPage:
        """The submissions ``user`` may see, newest first (only in ``state``, with ``decision``)."""
        wanted_state = parse(SubmissionState, state, "state") if state else None
        wanted_decision = parse(DecisionState, decision, "decision") if decision else None
        per_page = min(per_page, MAX_PER_PAGE)
        with self.archive.database.session() as session:
            query = visible(user, wanted_state, wanted_decision)
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            rows = list(session.scalars(query.order_by(Submission.created.desc(), Submission.id)
                                        .offset((page - 1) * per_page).limit(per_page)))
            papers = self.papers(session, user, [s.top_source or "" for s in rows])
            return SubmissionPage(page, per_page, total, [summary(s, papers) for s in rows])

    def records(self, user: User, state: str | None = None, decision: str | None = None, limit: int = 500) -> list[SubmissionRecord]:
        """The list page's rows: the newest ``limit`` submissions ``user`` may see, in full."""
        wanted_state = parse(SubmissionState, state, "state") if state else None
        wanted_decision = parse(DecisionState, decision, "decision") if decision else None
        with self.archive.database.session() as session:
            query = visible(user, wanted_state, wanted_decision)
            rows = list(session.scalars(query.order_by(Submission.created.desc()).limit(limit)))
            papers = self.papers(session, user, [s.top_source or "" for s in rows])
            return [record(s, papers) for s in rows]

    def report(self, user: User, submission_id: str, download: bool = False, form: str = "html") -> Report:
        """The newest report (a read of it is an audit entry: ``report``, or ``download``), its
        sources that are earlier submissions named as they are now (in the JSON and the page)."""
        with self.archive.database.session() as session:
            submission = self._get(session, user, submission_id)
            check = last_check(submission)
            if check is None or check.report_json is None or check.report_html is None:
                raise NotFoundError(f"submission {submission_id} has no report yet (state: {submission.state})")
            audit.record(session, user, "download" if download else "report", submission.id, form)
            report = json.loads(check.report_json)
            papers = self.papers(session, user, [s["doc_id"] for s in report["sources"]])
            for source in report["sources"]:  # named as they are now (a decision may have changed since)
                paper = papers.get(source["doc_id"])
                source["student_paper"] = paper.label if paper is not None else None
                source["submission_url"] = paper.url if paper is not None else None
            page = check.report_html
            for doc_id, paper in papers.items():  # the page names them too (a doc id is [0-9a-f/.]: no markup)
                page = page.replace(doc_id, escape(paper.label, quote=True))
            return Report(submission.id, json.dumps(report, ensure_ascii=False), page)

    def decide(self, user: User, submission_id: str, decision: str, note: str) -> SubmissionRecord:
        need(user, Role.EXAMINER)
        state = parse(DecisionState, decision, "decision")
        with self.archive.database.session() as session:
            submission = self._get(session, user, submission_id)
            session.add(Decision(submission_id=submission.id, user_id=user.id, state=state, note=note))
            submission.decision = state
            audit.record(session, user, "decide", submission.id, f"{state}: {note}")
            session.flush()
            session.refresh(submission)
            return record(submission, self.papers(session, user, report_sources(submission)))

    def request_archive(self, user: User, submission_id: str) -> SubmissionRecord:
        """Mark a checked submission to be archived; the writer adds it in its next batch."""
        need(user, Role.EXAMINER)
        with self.archive.database.session() as session:
            submission = self._get(session, user, submission_id)
            if submission.state == SubmissionState.FAILED:
                raise InputError(
                    f"submission {submission_id} failed its check ({submission.reason}); only a checked one is archived")
            if submission.repository == RepositoryMode.NONE:
                raise InputError(f"submission {submission_id} was checked in repository mode none (check and forget); "
                                 "it is never archived")
            submission.archive_requested = True
            audit.record(session, user, "archive", submission.id)
            answer = record(submission, self.papers(session, user, report_sources(submission)))
        self.archive.writer.wake()
        return answer

    def recheck(self, user: User, submission_id: str) -> SubmissionRecord:
        """Queue a checked (or failed) submission again; its earlier checks stay in its history."""
        need(user, Role.EXAMINER)
        with self.archive.database.session() as session:
            submission = self._get(session, user, submission_id)
            if submission.state.pending:
                raise InputError(f"submission {submission_id} is {submission.state} already")
            submission.state, submission.reason, submission.lease_until, submission.attempts = (
                SubmissionState.QUEUED, None, None, 0)
            submission.lti_score_sent = submission.lti_score_error = None  # the new figure goes back to the platform
            audit.record(session, user, "recheck", submission.id)
            return record(submission)

    def export(self, user: User, submission_id: str) -> SubmissionExport:
        with self.archive.database.session() as session:
            submission = self._get(session, user, submission_id)
            audit.record(session, user, "export", submission.id)
            session.flush()
            return export(session, submission)

    def delete(self, user: User, submission_id: str) -> Deleted:
        """Delete the submission and all it holds; an archived one's file leaves the collection
        and the index is updated before the answer."""
        need(user, Role.EXAMINER)
        with self.archive.database.session() as session:
            submission = self._get(session, user, submission_id)
            folder = collection_folder(self.archive.index_dir) if submission.archived_doc else None
            texts = collection_texts(folder, open_index(self.archive.index_dir).markup) if folder is not None else None
            archived = delete(session, submission, user, folder, texts)
        if archived:
            self.archive.writer.run_once(reindex=True)  # the index forgets the removed file now
        return Deleted(submission_id, "deleted")

    def document_matches(self, user: User, doc_id: str) -> DocumentMatches:
        """An archive document's matches over time, each marked new if found since ``user``
        last looked (then the look is recorded)."""
        need(user, Role.EXAMINER)
        with self.archive.database.session() as session:
            view = session.scalar(select(DocumentView).where(DocumentView.user_id == user.id, DocumentView.doc == doc_id))
            seen = view.seen if view is not None else None
            matches = session.scalars(select(DocumentMatch).where(DocumentMatch.doc == doc_id)
                                      .order_by(DocumentMatch.found.desc(), DocumentMatch.percent.desc()))
            found = list(matches)
            papers = self.papers(session, user, [doc_id, *(m.match for m in found)])
            rows = [DocumentMatchRow(m.match, m.percent, stamp(m.found), seen is None or m.found > seen, papers.get(m.match))
                    for m in found]
            if view is None:
                session.add(DocumentView(user_id=user.id, doc=doc_id, seen=now()))
            else:
                view.seen = now()
            return DocumentMatches(doc_id, stamp_or_none(seen), rows, papers.get(doc_id))

    def audit_log(self, user: User, target: str | None = None, limit: int = 200) -> AuditLog:
        need(user, Role.ADMIN)
        with self.archive.database.session() as session:
            return AuditLog([audit_row(e) for e in audit.entries(session, target, limit)])

    def users(self, user: User) -> UserList:
        need(user, Role.ADMIN)
        with self.archive.database.session() as session:
            return UserList([user_row(u) for u in list_users(session)])

    def add_user(self, user: User, name: str, role: str) -> UserAdded:
        need(user, Role.ADMIN)
        wanted = parse(Role, role, "role")
        with self.archive.database.session() as session:
            token = add_user(session, name, wanted)
            audit.record(session, user, "user-add", name, wanted)
        return UserAdded(name, wanted, token)

    def revoke_user(self, user: User, name: str) -> UserRevoked:
        need(user, Role.ADMIN)
        with self.archive.database.session() as session:
            revoke_user(session, name)
            audit.record(session, user, "user-revoke", name)
        return UserRevoked(name, "revoked")
