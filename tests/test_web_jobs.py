"""The web page's jobs: bounded in number, in text held and in age; running ones are kept."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")

from coderiv.ranking.results import QueryResult  # noqa: E402
from coderiv.text.reading import QueryDocument  # noqa: E402
from coderiv.web.checks import CheckOptions, CheckOutcome  # noqa: E402
from coderiv.web.jobs import JobStore  # noqa: E402


def outcome(chars: int) -> CheckOutcome:
    result = QueryResult("q", "identity5", 1.0, 1, 1, 1, [])
    return CheckOutcome(QueryDocument("q", "x" * chars, False), "gen-000001", result)


def test_the_oldest_finished_jobs_go_first_and_running_ones_stay() -> None:
    store = JobStore(limit=3)
    first, second, third = (store.add(CheckOptions(), outcome(10)) for _ in range(3))
    first.state = "verifying"
    second.state = third.state = "done"
    fourth = store.add(CheckOptions(), outcome(10))  # full: the oldest finished (second) goes
    assert [store.get(j.id) is not None for j in (first, second, third, fourth)] == [True, False, True, True]
    assert len({first.id, third.id, fourth.id}) == 3 and len(first.id) >= 22  # 128 random bits, url-safe


def test_text_held_is_bounded() -> None:
    store = JobStore(max_chars=250)
    old = store.add(CheckOptions(), outcome(100))
    old.state = "done"
    middle = store.add(CheckOptions(), outcome(100))
    middle.state = "done"
    assert store.get(old.id) is old  # 200 characters held
    new = store.add(CheckOptions(), outcome(100))  # 300 > 250: the oldest finished goes
    assert (store.get(old.id), store.get(middle.id), store.get(new.id)) == (None, middle, new)
    assert new.chars() == 100


def test_jobs_expire() -> None:
    store = JobStore(ttl=-1.0)  # every job is already too old
    job = store.add(CheckOptions(), outcome(1))
    assert store.get(job.id) is None
    assert store.get("no-such-job") is None
