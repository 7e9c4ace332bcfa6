"""The one registry type: names sorted, an unknown name is an error naming it and the choices."""

from __future__ import annotations

import pytest

from coderiv.errors import UnknownNameError
from coderiv.keys.fingerprint import STRATEGIES
from coderiv.keys.kinds import KEY_KINDS
from coderiv.overlap.compare import COMPARE_METHODS
from coderiv.pairs.methods import METHODS as PAIR_METHODS
from coderiv.ranking.measures import MEASURES
from coderiv.ranking.searchers import QUERY_METHODS
from coderiv.registry import Registry


def test_get_names_the_bad_value_and_the_sorted_choices() -> None:
    colours: Registry[int] = Registry("colour")
    colours.add("red", 1)
    colours.add("blue", 2)
    assert colours.get("red") == 1
    assert colours.names() == ["blue", "red"]
    assert list(colours) == ["red", "blue"]  # registration order is kept for display
    with pytest.raises(UnknownNameError) as caught:
        colours.get("green")
    assert str(caught.value) == "colour must be one of ['blue', 'red'] (got 'green')"
    assert colours.get("green", None) is None


def test_a_name_registered_twice_is_refused() -> None:
    colours: Registry[int] = Registry("colour")
    colours.add("red", 1)
    with pytest.raises(ValueError, match="colour 'red' is registered twice"):
        colours.add("red", 3)


def test_the_project_registries_hold_what_the_cli_offers() -> None:
    assert MEASURES.names() == [
        "cosine", "identity1", "identity2", "identity3", "identity4", "identity5", "inner", "normalized",
    ]
    assert list(COMPARE_METHODS) == ["shingles", "containment", "chunks", "patricia", "matching", "aligned", "passages"]
    assert PAIR_METHODS.names() == ["chunks", "identity5", "resemblance"]
    assert {"ranking", "fingerprint"} <= set(QUERY_METHODS)
    assert {"terms", "chunks", "fingerprint"} <= set(KEY_KINDS)
    assert "anchor" in STRATEGIES and "winnowing" in STRATEGIES
    with pytest.raises(UnknownNameError, match=r"measure must be one of \['cosine', .*\] \(got 'bm25'\)"):
        MEASURES.get("bm25")
