"""Memory stays bounded across 50 sequential uploads in one process.

Each upload is a different CSV of about 1 MB, sent through the server-side
path of the Data page: ``datasource.store_upload`` (``receive_upload``), then
``data_page.apply_choice`` with the controls the page sets after an upload
(``apply_data``: summary, preview, session store).  The resident set size
(psutil) is read after a warm-up of 5 uploads and after the last one.

Bound: 50 MB.  Without a leak the growth is about 10 MB (allocator noise and
bounded caches: SQLite's page cache of the disk cache, pandas' and numpy's
lazily built state).  Keeping only the smallest thing one upload makes, its
base64 text (1.35 MB), grows the process by about 60 MB over the 45 measured
uploads (checked by wrapping ``store_upload`` to keep its argument); keeping
the parsed table or the coded arrays costs more.  So 50 MB passes a clean
server with a 5x margin and fails a leak of an upload's text or anything bigger.
"""

from __future__ import annotations

import base64
import gc

import numpy as np
import pandas as pd
import psutil
import pytest

from _pages import page_module
from pages._framework import datasource

data_page = page_module("data")

UPLOADS = 50
WARM_UP = 5
BOUND_MB = 50
ROWS = 29_000  # about 1.1 MB of CSV


def _csv(i: int) -> tuple[bytes, str]:
    """A different CSV of about 1 MB: 6 inputs (discrete and numeric), target ``y``."""
    rng = np.random.default_rng(1000 + i)
    df = pd.DataFrame({
        f"u{i}_a": rng.integers(0, 4, ROWS),
        f"u{i}_b": rng.integers(0, 3, ROWS),
        f"u{i}_c": rng.choice(["red", "green", "blue"], ROWS),
        f"u{i}_x": np.round(rng.normal(size=ROWS), 6),
        f"u{i}_z": np.round(rng.uniform(0, 100, ROWS), 5),
        f"u{i}_n": rng.integers(0, 1000, ROWS),
    })
    df["y"] = np.where((df.iloc[:, 0] + df.iloc[:, 1]) % 2 == 0, "yes", "no")
    return df.to_csv(index=False).encode(), f"upload-{i}.csv"


def _upload(i: int) -> dict:
    raw, name = _csv(i)
    contents = "data:text/csv;base64," + base64.b64encode(raw).decode()
    info = datasource.store_upload(contents, name)           # the page's receive_upload
    out = data_page.apply_choice(dict(                       # the page's apply_data
        source="upload", problem=datasource.DEFAULT_PROBLEM, opt_ids=[], opt_values=[],
        sampling="exact", n=None, seed=0, bins=5, upload=info, target=info["target"],
        task="auto", numeric=info["numeric"] or []))
    assert out["ok"], out
    assert out["view"]["summary"]["p"] == 6 and out["view"]["summary"]["N"] == ROWS
    assert out["view"]["preview"]["columns"][0] == f"u{i}_a"
    return {"bytes": len(raw)}


def _rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


@pytest.mark.slow
def test_rss_stays_bounded_over_50_uploads():
    sizes = [_upload(i)["bytes"] for i in range(WARM_UP)]
    assert all(0.9e6 < s < 1.3e6 for s in sizes), sizes  # "about 1 MB" each
    after_warm_up = _rss_mb()
    trace = []
    for i in range(WARM_UP, UPLOADS):
        _upload(i)
        if (i + 1) % 5 == 0:
            trace.append(round(_rss_mb(), 1))
    at_end = _rss_mb()
    growth = at_end - after_warm_up
    print(f"\nRSS after {WARM_UP} uploads: {after_warm_up:.1f} MB; after {UPLOADS}: "
          f"{at_end:.1f} MB; growth {growth:+.1f} MB (bound {BOUND_MB} MB); "
          f"every 5 uploads: {trace}")
    assert growth < BOUND_MB
