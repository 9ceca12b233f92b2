"""A flood of uploads from one client cannot evict another user's table (#27.6).

The probe of issue #27 uploaded 5 MB tables with a fresh signed cookie each (a cookie costs
one GET, so a per-cookie quota never refused) and evicted another user's table after 25 to
30 uploads.  Two things stop that here, each tested:

* uploads and job starts are rate-limited per address as well as per browser
  (``pages/_server/ratelimit.py``): past the limit, HTTP 429 with a sentence and
  ``Retry-After``;
* uploads live in a store that evicts nothing (``cache.get_upload_store``): a table leaves it
  only when it expires, and new uploads past the store's budget are refused with a sentence.

Expected values come from the limits set here (``N`` per minute: exactly ``N`` accepted,
the rest refused) and the budget's arithmetic.
"""

from __future__ import annotations

import base64
import io
import time

import pandas as pd
import pytest
from _servers import DashCallbackClient

from pages._framework import datasource
from pages._server import cache, hygiene, ratelimit
from pages._server.store import put_upload
from varimp_core.data.csvfile import DataError


def _data_url(df: pd.DataFrame) -> str:
    text = df.to_csv(index=False).encode()
    return "data:text/csv;base64," + base64.b64encode(text).decode()


def _table(i: int, rows: int = 50) -> pd.DataFrame:
    return pd.DataFrame({"x": [(i * 7 + r) % 11 for r in range(rows)],
                         "y": [(i + r) % 2 for r in range(rows)]})


# -- what counts as an upload or a job start -----------------------------------------------
def test_request_kind_reads_dash_s_callback_protocol():
    callbacks = {"a.children": {"background": {"interval": 1000}}, "b.children": {}}
    upload = {"output": "x.data", "changedPropIds": ["data-upload.contents"]}
    assert ratelimit.request_kind(upload, {}, callbacks) == "upload"
    start = {"output": "a.children", "changedPropIds": ["k.value"]}
    assert ratelimit.request_kind(start, {}, callbacks) == "job"
    # a poll of a running job carries its handles and repeats its body: not a new one
    assert ratelimit.request_kind(start, {"cacheKey": "c", "job": "1"}, callbacks) is None
    assert ratelimit.request_kind(upload, {"cacheKey": "c", "job": "1"}, callbacks) is None
    plain = {"output": "b.children", "changedPropIds": ["k.value"]}
    assert ratelimit.request_kind(plain, {}, callbacks) is None


def test_a_rate_read_from_the_environment_and_scaled(monkeypatch):
    monkeypatch.setenv("VARIMP_JOB_RATE", "3 per minute; 10 per hour")
    assert ratelimit.rate("job") == "3 per 1 minute; 10 per 1 hour"
    assert ratelimit.rate("job", 4) == "12 per 1 minute; 40 per 1 hour"
    monkeypatch.setenv("VARIMP_JOB_RATE", "not a rate")
    assert ratelimit.rate("job") == "120 per 1 minute; 1200 per 1 hour"  # the default


# -- the flood, through the app's callback route -------------------------------------------
@pytest.fixture()
def own_cache(tmp_path, monkeypatch):
    """A cache of 64 KiB for results (a flood would evict anything in it) and its own dir."""
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("VARIMP_CACHE_BYTES", str(64 << 10))
    yield


def test_a_flood_with_fresh_cookies_is_refused_and_evicts_no_one(dash_app, own_cache,
                                                                 monkeypatch):
    limit = 5
    monkeypatch.setenv("VARIMP_UPLOAD_RATE", f"{limit} per minute")
    server = dash_app.server
    # the second user: uploads a table and uses it
    with monkeypatch.context() as m:  # the flood's requests are then the server's to name
        m.setattr(datasource, "client_id", lambda: "second-user")
        info = datasource.store_upload(_data_url(_table(-1)), "mine.csv")
    assert cache.get_table(info["key"])["y"].tolist() == _table(-1)["y"].tolist()

    flood = server.test_client(use_cookies=False)
    callback = DashCallbackClient.over_flask(flood, "data-upload-info.data", page="/data")
    statuses, refusals = [], []
    for i in range(40):
        fresh = flood.get("/_health").headers.get("Set-Cookie", "")
        assert hygiene.CLIENT_COOKIE in fresh  # a new browser at every upload
        cookie = fresh.split(";")[0]
        body = callback.body({"data-upload.contents": _data_url(_table(i, rows=400)),
                              "data-upload.filename": f"flood{i}.csv"},
                             "data-upload.contents")
        r = flood.post("/_dash-update-component", json=body,
                       query_string={"endId": callback.end_id}, headers={"Cookie": cookie})
        statuses.append(r.status_code)
        if r.status_code == 429:
            refusals.append((r.get_data(as_text=True), r.headers.get("Retry-After")))
    assert statuses[:limit] == [200] * limit          # the address's first N in a minute
    assert statuses[limit:] == [429] * (40 - limit)   # every later one, whatever its cookie
    text, retry = refusals[0]
    assert "Too many uploads" in text and retry is not None and 0 < int(retry) <= 60
    # the second user's table, used before the flood, is still there
    assert cache.has_table(info["key"])
    assert cache.get_table(info["key"])["y"].tolist() == _table(-1)["y"].tolist()


def test_the_upload_store_evicts_nothing_and_refuses_past_its_budget(own_cache, monkeypatch):
    """Without rate limits (a flood from many addresses): 200 uploads of 20 KiB, each from a
    fresh browser, into a store of 1 MiB.  The first table stays; the flood is refused once
    the store is full, with the sentence saying so."""
    store = cache.get_upload_store()
    ttl, now = 3600, time.time()
    mine = put_upload(store, "m" * (20 << 10), "second-user", quota=1 << 30, ttl=ttl, now=now,
                      budget=1 << 20)
    # results fill the result cache past its 64 KiB many times: they never touch uploads
    for i in range(100):
        cache.put_json(cache.key_for("flood-result", i), {"v": "r" * 4096})
    stored, refused = 0, []
    for i in range(200):
        try:
            put_upload(store, f"{i:04d}" + "f" * (20 << 10), f"fresh-{i}", quota=1 << 30,
                       ttl=ttl, now=now, budget=1 << 20)
            stored += 1
        except DataError as error:
            refused.append(str(error))
    # 1 MiB holds 51 tables of 20 KiB + a few bytes (the second user's is one of them)
    size = (20 << 10) + 4
    assert stored == (1 << 20) // size - 1
    assert len(refused) == 200 - stored
    assert "for everyone's uploads" in refused[0] and "1 MiB" in refused[0]
    from pages._server.store import upload_text

    assert upload_text(store, mine) == "m" * (20 << 10)


@pytest.mark.browser
def test_the_page_shows_the_sentence_of_a_429(dash_duo, dash_app, tmp_path, monkeypatch):
    """In the browser: a second upload within the minute, over a limit of 1, is refused and
    the page says why (Dash itself shows nothing for a refused callback)."""
    from _browser import open_page

    monkeypatch.setenv("VARIMP_UPLOAD_RATE", "1 per minute")
    path = tmp_path / "small.csv"
    path.write_text(_table(3).to_csv(index=False))
    open_page(dash_duo, dash_app, "/data")
    dash_duo.wait_for_text_to_equal("#data-summary-p", "7", timeout=60)  # the default LED
    dash_duo.find_element("#data-source input[value='upload']").click()
    dash_duo.find_element("#data-upload input[type='file']").send_keys(str(path))
    dash_duo.wait_for_contains_text("#data-upload-note", "50 rows", timeout=60)
    assert not dash_duo.driver.find_elements("css selector", "#vi-server-note")
    other = tmp_path / "other.csv"
    other.write_text(_table(4).to_csv(index=False))
    dash_duo.find_element("#data-upload input[type='file']").send_keys(str(other))
    dash_duo.wait_for_contains_text("#vi-server-note", "Too many uploads", timeout=30)
