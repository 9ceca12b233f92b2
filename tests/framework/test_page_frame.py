"""The navigation's limits (:func:`pages._framework.page_frame.nav_limits`, issue #26): a page
whose views are exact is dimmed, with its reason, on data with more inputs than the server's
exact limit; the others stay as they are."""

from __future__ import annotations

import dash
import numpy as np
import pandas as pd
import pytest
from _pages import upload_frame

from pages._framework import datasource
from pages._framework.page_frame import nav_limits


@pytest.fixture(scope="module")
def registry():
    import app  # noqa: F401  (registers every page)

    return list(dash.page_registry.values())


def _store(params: dict) -> dict:
    p = datasource.canonical_params(params)
    return {"params": p, "query": datasource.data_query(p)}


def test_a_small_problem_limits_nothing(registry, monkeypatch):
    monkeypatch.setenv("VARIMP_MAX_EXACT_FEATURES", "20")
    assert nav_limits(_store({"problem": "led"}), registry) == {}
    assert nav_limits(None, registry) == {}            # a fresh session: the default data
    assert nav_limits({"params": "nonsense"}, registry) == {}


def test_many_inputs_dim_decomposition_and_an_upload_dims_masking_too(registry, monkeypatch):
    monkeypatch.setenv("VARIMP_MAX_EXACT_FEATURES", "20")
    # LED with 14 irrelevant inputs: 7 + 14 = 21 > 20; Masking runs its own problems.
    wide = nav_limits(_store({"problem": "led:irrelevant=14"}), registry)
    assert set(wide) == {"/decomposition"}
    assert "at most 20 inputs" in wide["/decomposition"] and "has 21" in wide["/decomposition"]
    assert nav_limits(_store({"problem": "led:irrelevant=13"}), registry) == {}   # 20 inputs
    # An upload of 25 inputs: Masking would study the table itself, so it is dimmed too.
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 2, (60, 26)), columns=[f"x{i}" for i in range(25)] + ["y"])
    limited = nav_limits(_store(upload_frame(df, "wide.csv")), registry)
    assert set(limited) == {"/decomposition", "/masking"}
    assert "has 25" in limited["/masking"]
    # The server's limit is read when asked: at 6 inputs, LED's 7 dim Decomposition.
    monkeypatch.setenv("VARIMP_MAX_EXACT_FEATURES", "6")
    assert set(nav_limits(_store({"problem": "led"}), registry)) == {"/decomposition"}
