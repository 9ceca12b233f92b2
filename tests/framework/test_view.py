"""JobView's failure sentences (:mod:`pages._framework.view`): a job that runs out of memory
names the input that most likely caused it (issue #26)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from _pages import upload_frame

from pages._framework import datasource
from pages._framework.view import MANY_LEVELS, memory_hint
from pages._server import jobs


def _store(params: dict) -> dict:
    p = datasource.canonical_params(params)
    return {"params": p, "query": datasource.data_query(p)}


def _customers(rows: int = 600, names: int = 300) -> pd.DataFrame:
    """``customer``: 300 names, two rows each (name-like); ``region``: 4 levels."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({"region": rng.choice(list("NESW"), rows),
                         "customer": [f"name{i % names:03d}" for i in range(rows)],
                         "y": rng.integers(0, 2, rows)})


def test_a_kept_name_like_column_is_named_when_memory_runs_out():
    params = {**upload_frame(_customers(), "customers.csv"), "exclude": []}   # kept by a click
    hint = memory_hint(_store(params))
    assert hint is not None and "'customer' has 300 distinct values" in hint
    message = jobs.failure_message(MemoryError(), shown=False, hint=hint)
    assert message.startswith("This computation needs more memory")
    assert message.endswith(hint)


def test_no_column_is_blamed_when_none_has_many_values():
    # By default the name-like column is excluded: region's 4 values are no cause.
    assert memory_hint(_store(upload_frame(_customers(), "customers.csv"))) is None
    assert memory_hint(_store({"problem": "led"})) is None
    assert memory_hint(None) is None                      # unreadable: the refusal alone
    # Exactly MANY_LEVELS values is not "many"; one more is.
    at = _customers(rows=2 * (MANY_LEVELS + 1), names=MANY_LEVELS)
    assert memory_hint(_store({**upload_frame(at, "at.csv"), "exclude": []})) is None
    over = _customers(rows=2 * (MANY_LEVELS + 1), names=MANY_LEVELS + 1)
    assert memory_hint(_store({**upload_frame(over, "over.csv"), "exclude": []})) is not None
