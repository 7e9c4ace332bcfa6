"""The archive's path policy (``web/archive_auth.allowed``): the roles are nested (whatever a
submitter may open an examiner may, whatever an examiner may an admin may), user management is
an admin's alone, and a path that merely starts like a submitter's prefix is not one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")

from coderiv.web.archive_auth import allowed  # noqa: E402

SEGMENTS = st.sampled_from(["api", "submissions", "users", "audit", "docs", "archive", "document", "x", "..", "", "check"])
PATHS = st.lists(SEGMENTS, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts))


@given(PATHS | st.text(min_size=1).map(lambda s: "/" + s))
def test_roles_are_nested(path: str) -> None:
    assert not allowed("submitter", path) or allowed("examiner", path)
    assert not allowed("examiner", path) or allowed("admin", path)


@pytest.mark.parametrize(("path", "submitter", "examiner", "admin"), [
    ("/api/submissions", True, True, True),
    ("/api/submissions/abc/report", True, True, True),
    ("/submissions", True, True, True),
    ("/submissionsX", False, True, True),  # a prefix of the name is not the path
    ("/api/submissions-all", False, True, True),
    ("/docs", True, True, True),
    ("/openapi.json", True, True, True),
    ("/", False, True, True),
    ("/collection", False, True, True),
    ("/archive/document", False, True, True),
    ("/api/users", False, False, True),
    ("/api/users/sam", False, False, True),
    ("/api/users/../submissions", False, False, True),  # the raw path decides; never less strict
    ("/api/audit", False, False, True),
])
def test_who_may_open_what(path: str, submitter: bool, examiner: bool, admin: bool) -> None:
    assert (allowed("submitter", path), allowed("examiner", path), allowed("admin", path)) == (submitter, examiner, admin)
