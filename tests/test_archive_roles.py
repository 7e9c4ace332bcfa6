"""The archive's vocabularies and who may do what: the roles are nested (whatever a submitter may
do an examiner may, whatever an examiner may an admin may), every state, decision and role is a
member of its enum and no module of the archive spells one as a bare string, and a value outside
an enum is one clear line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderiv.archive.states import CheckState, DecisionState, RepositoryMode, Role, SubmissionState, parse
from coderiv.errors import InputError

ENUMS = (SubmissionState, CheckState, DecisionState, Role, RepositoryMode)
SRC = Path(__file__).resolve().parents[1] / "src" / "coderiv"


@given(st.sampled_from(list(Role)), st.sampled_from(list(Role)), st.sampled_from(list(Role)))
def test_roles_are_nested(a: Role, b: Role, c: Role) -> None:
    assert a.may(a)
    assert not (a.may(b) and b.may(c)) or a.may(c)  # transitive
    assert a.may(b) or b.may(a)  # a chain: any two are ordered


def test_who_may_do_what() -> None:
    assert [[held.may(needed) for needed in Role] for held in Role] == [
        [True, False, False],  # a submitter: only a submitter's routes
        [True, True, False],  # an examiner: also every page and the decisions
        [True, True, True],  # an admin: also the users and the audit log
    ]


def test_members_are_their_values_as_strings() -> None:
    assert [str(s) for s in SubmissionState] == ["queued", "checking", "done", "failed"]
    assert [f"{s}" for s in CheckState] == ["checking", "done", "failed", "interrupted"]
    assert list(DecisionState) == ["open", "cleared", "misconduct"]
    assert [s for s in SubmissionState if s.pending] == [SubmissionState.QUEUED, SubmissionState.CHECKING]


@pytest.mark.parametrize(("kind", "value", "what", "message"), [
    (DecisionState, "guilty", "decision", "the decision must be one of open, cleared, misconduct (got 'guilty')"),
    (Role, "root", "role", "the role must be one of submitter, examiner, admin (got 'root')"),
    (SubmissionState, "Done", "state", "the state must be one of queued, checking, done, failed (got 'Done')"),
])
def test_a_value_outside_the_enum_is_one_line(kind: type[DecisionState], value: str, what: str, message: str) -> None:
    with pytest.raises(InputError) as refused:
        parse(kind, value, what)
    assert str(refused.value) == message


def bare_values(path: Path) -> list[str]:
    """The string constants of ``path`` (docstrings and the keys of dict literals aside: those
    are field names) that are some enum's value."""
    values = {m.value for kind in ENUMS for m in kind}
    tree = ast.parse(path.read_text("utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    docstrings |= {id(key) for node in ast.walk(tree) if isinstance(node, ast.Dict) for key in node.keys}
    return [f"{path.name}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in values
            and id(node) not in docstrings]


def test_no_state_string_outside_the_enums() -> None:
    # (lti.py speaks OIDC's and LTI's words, whose "prompt": "none" is no state of ours)
    modules = [p for p in (SRC / "archive").glob("*.py") if p.name not in ("states.py", "lti.py")]
    modules += [SRC / "web" / "auth.py", *(SRC / "web").glob("archive_*.py"), SRC / "cli" / "users.py", SRC / "cli" / "serve.py"]
    assert len(modules) > 12
    assert [hit for path in sorted(modules) for hit in bare_values(path)] == []


def test_the_checker_finds_a_bare_state(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text('"""done"""\ndef f(s):\n    """open"""\n    return {"done": s.state == "done"}\n')
    assert bare_values(source) == ["m.py:4 'done'"]


def test_an_anonymous_body_is_refused_before_it_is_read() -> None:
    pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
    import anyio

    from coderiv.web.auth import AnonymousBodies

    reached: list[str] = []
    sent: list[dict[str, object]] = []

    async def inner(scope: dict[str, object], receive: object, send: object) -> None:
        reached.append(str(scope["path"]))

    async def receive() -> dict[str, object]:
        raise AssertionError("the body was read")

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    guard = AnonymousBodies(inner, "this archive needs a user's token", public=("/lti/launch",))

    def request(path: str, headers: list[tuple[bytes, bytes]], method: str = "POST") -> None:
        scope = {"type": "http", "method": method, "path": path, "headers": headers, "query_string": b""}
        anyio.run(guard, scope, receive, send)

    request("/api/submissions", [])
    assert sent[0]["status"] == 401 and b"this archive needs a user's token" in sent[1]["body"]  # type: ignore[operator]
    request("/api/submissions", [(b"authorization", b"Bearer some-token")])  # a token: the route decides
    request("/lti/launch", [])  # the platform's post carries its proof in the body
    request("/api/submissions", [], "GET")  # no body to read
    assert reached == ["/api/submissions", "/lti/launch", "/api/submissions"] and len(sent) == 2
