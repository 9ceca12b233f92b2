"""A bounded upload cache: random keys, de-duplicated storage, a TTL and a per-browser quota.

Expected values: key lengths from the 128-bit requirement; stored sizes are the
length of the core's JSON text of the parsed table (``table_to_json``), the
definition of "stored size"; the quota arithmetic of ``admit`` by hand.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import time

import pandas as pd
import pytest

from varimp_core.data.prepare import DataError
from varimp_core.data.tablejson import table_to_json
from pages._server.retention import admit

from _servers import post_and_poll, upload_body
from pages._server import cache
from pages._framework import datasource
from pages._server.hygiene import client_id

CSV_A = "x,z,y\n" + "".join(f"{i % 3},{i % 5},{i % 2}\n" for i in range(60))
CSV_B = "x,z,y\n" + "".join(f"{i % 4},{i % 7},{i % 2}\n" for i in range(60))


def _url(text: str) -> str:
    return "data:text/csv;base64," + base64.b64encode(text.encode()).decode()


def _stored_bytes(text: str) -> int:
    """Bytes the parsed table takes as the cache stores it (the core's JSON text)."""
    return len(table_to_json(pd.read_csv(io.StringIO(text))).encode("utf-8"))


def _digest(text: str) -> str:
    return hashlib.sha256(table_to_json(pd.read_csv(io.StringIO(text))).encode()).hexdigest()


pytestmark = pytest.mark.usefixtures("cache_backend")  # on diskcache, then on Redis


def _table_entries() -> int:
    store = cache.get_upload_store()
    if cache.is_shared():  # Redis
        return sum(1 for _ in store.client.scan_iter(store.prefix + "table:*"))
    return sum(1 for k in store.iterkeys() if str(k).startswith("table:"))


def test_upload_keys_are_random_with_at_least_128_bits():
    keys = [datasource.store_upload(_url(CSV_A), "a.csv")["key"] for _ in range(20)]
    assert len(set(keys)) == 20                            # same content, 20 different keys
    for key in keys:
        assert len(key) * 4 >= 128 and int(key, 16) >= 0   # hex digits, 4 bits each
        assert key != _digest(CSV_A)


def test_same_content_shares_storage_but_a_guessed_content_hash_opens_nothing():
    before = _table_entries()
    first = datasource.store_upload(_url(CSV_B), "b.csv")["key"]
    second = datasource.store_upload(_url(CSV_B), "b.csv")["key"]
    assert first != second
    assert _table_entries() - before <= 1                  # one stored copy for both uploads
    pd.testing.assert_frame_equal(cache.get_table(first), cache.get_table(second))
    digest = _digest(CSV_B)
    for guess in (digest, cache.key_for("table", digest)):
        assert cache.get_table(guess) is None
        with pytest.raises(DataError, match="no longer on the server"):
            datasource.load_prepared({"source": "upload", "upload": guess})
    # a shared link (the random key) still opens the data
    assert datasource.load_prepared({"source": "upload", "upload": first}).n_samples == 60


def test_an_expired_upload_gives_its_sentence(monkeypatch):
    monkeypatch.setenv("VARIMP_UPLOAD_TTL", "1")
    key = datasource.store_upload(_url(CSV_A + "1,1,1\n"), "ttl.csv")["key"]
    params = {"source": "upload", "upload": key, "target": "y"}
    assert datasource.data_view(params)["summary"]["target"] == "y"
    time.sleep(2.2)
    for call in (datasource.data_view, datasource.load_prepared):
        with pytest.raises(DataError, match=r"uploads are kept 1 s, then expire; upload the "):
            call(params)
    assert datasource.upload_columns(key) is None


def test_the_quota_counts_stored_bytes_once_per_content_and_gives_its_sentence(monkeypatch):
    a, b = _stored_bytes(CSV_A), _stored_bytes(CSV_B)
    monkeypatch.setenv("VARIMP_MAX_CLIENT_UPLOAD_BYTES", str(a + b - 1))
    monkeypatch.setattr(datasource, "client_id", lambda: "quota-test-client")
    datasource.store_upload(_url(CSV_A), "a.csv")
    datasource.store_upload(_url(CSV_A), "again.csv")      # same content: counted once
    with pytest.raises(DataError, match=r"your uploads already take .* one browser may keep"):
        datasource.store_upload(_url(CSV_B), "b.csv")
    monkeypatch.setattr(datasource, "client_id", lambda: "another-client")
    assert datasource.store_upload(_url(CSV_B), "b.csv")["rows"] == 60


def _upload_job(browser, text: str, name: str) -> dict:
    """The Data page's upload callback, a background job, as the renderer drives it."""
    body = upload_body(browser.get("/_dash-dependencies").get_json(), _url(text), name)

    def post(query, data):
        r = browser.post("/_dash-update-component", json=data, query_string=query)
        return r.status_code, r.get_data(as_text=True)

    status, text = post_and_poll(post, body)
    assert status == 200, text[:300]
    return json.loads(text)["response"]


def test_the_quota_of_an_upload_job_is_the_browser_that_sent_it(app_module, monkeypatch):
    """The parse runs in a job (issue #17): the browser's id is read in the request that starts
    it, so one browser over its quota gets the sentence and another browser is still served.
    (A Diskcache job is forked inside its request; a Celery task has none:
    test_celery_faults.py checks the same there.)"""
    a, b = _stored_bytes(CSV_A), _stored_bytes(CSV_B)
    monkeypatch.setenv("VARIMP_MAX_CLIENT_UPLOAD_BYTES", str(a + b - 1))
    first, second = app_module.server.test_client(), app_module.server.test_client()
    for browser in (first, second):
        browser.get("/_health")  # the server signs each browser's cookie
    assert _upload_job(first, CSV_A, "a.csv")["data-upload-note"]["children"].startswith(
        "a.csv: 60 rows")
    refused = _upload_job(first, CSV_B, "b.csv")
    assert set(refused) == {"data-upload-note"}
    assert re.search(r"your uploads already take .* one browser may keep",
                     refused["data-upload-note"]["children"])
    assert _upload_job(second, CSV_B, "b.csv")["data-upload-info"]["data"]["rows"] == 60


def test_admit_by_hand():
    now = 1000.0
    held = {"a": [60, now + 10], "old": [500, now - 1]}    # "old" has expired
    after = admit(held, "c", 40, quota=100, ttl=5, now=now)  # 60 + 40 = 100 <= 100
    assert after == {"a": [60, now + 10], "c": [40, now + 5]}
    with pytest.raises(DataError, match="0.0 MiB"):
        admit(held, "c", 41, quota=100, ttl=5, now=now)     # 60 + 41 > 100
    assert admit(held, "a", 100, quota=100, ttl=5, now=now) == {"a": [100, now + 5]}


def test_the_client_outside_a_request_is_a_fixed_name():
    assert client_id() == "-"


def test_a_crafted_store_naming_a_tables_content_hash_learns_nothing(app_module):
    """Issue #27 item 8: a crafted store could tell whether a table with a given content was
    uploaded (a 500 against a sentence).  The content's hash names no upload (keys are
    random), so the page answers a store naming the hash of a table that is on the server
    exactly as it answers one naming a hash never seen, its plain callback and its job:
    same status, same answer but for the key it echoes."""
    import secrets

    from _pages import component, page_module
    from _servers import DashCallbackClient, job_status

    datasource.store_upload(_url(CSV_B), "b.csv")          # the table is on the server
    imp = page_module("importances")
    page = imp.layout()                                     # the controls a first visit holds
    controls = {f"{i.component_id}.{i.component_property}": component(
        page, i.component_id).value for i in imp.VIEW.params.inputs()}
    client = app_module.server.test_client()
    peek = next(d for d in client.get("/_dash-dependencies").get_json()
                if "imp-graph.figure" in d["output"] and not d.get("background"))
    job = DashCallbackClient.over_flask(client, "imp-graph.figure", "/importances")

    def answers(key: str) -> tuple:
        values = {**controls, "imp-data.data": {"params": {"source": "upload", "upload": key,
                                                           "target": "y"}}}

        def fill(items):
            return [{**i, "value": values.get(f"{i['id']}.{i['property']}")} for i in items]
        outputs = [{"id": p.rpartition(".")[0], "property": p.rpartition(".")[2].split("@")[0]}
                   for p in peek["output"].strip(".").split("...")]
        r = client.post("/_dash-update-component", json={
            "output": peek["output"], "outputs": outputs, "inputs": fill(peek["inputs"]),
            "state": fill(peek.get("state", [])), "changedPropIds": ["imp-data.data"]})
        miss = r.get_json()["response"]["imp-miss"]["data"]   # a miss: the job's turn
        _, _, last = job.run({"imp-miss.data": miss, "imp-instance.data": "oracle"},
                             "imp-miss.data", timeout=60)
        text = re.sub(r'"n":"[0-9a-f]{32}"', '"n":"NONCE"',   # each miss's own nonce
                      r.get_data(as_text=True).replace(key, "KEY"))
        return r.status_code, text, job_status(last, "imp-error")

    known, unknown = answers(_digest(CSV_B)), answers(secrets.token_hex(32))
    assert known == unknown
    assert known[0] == 200 and "Traceback" not in known[1]
    assert "no longer on the server" in known[2]            # the data was looked up


def test_what_pages_read_of_an_upload_lives_as_long_as_its_table(cache_backend, monkeypatch):
    """An upload's columns, every target's defaults and its column facts are kept beside the
    table, once per content: with the result cache emptied (its LRU evicting under other
    users' results), a request still reads them and never works them out from the table."""
    key = datasource.store_upload(_url(CSV_A + "2,2,0\n"), "kept.csv")["key"]
    again = datasource.store_upload(_url(CSV_A + "2,2,0\n"), "again.csv")["key"]
    if cache_backend == "diskcache":
        cache.get_cache().clear()                   # every result gone, the uploads kept
    monkeypatch.setattr(cache, "get_table", lambda k: pytest.fail("the table was read"))
    for k in (key, again):                          # the same content: one companion
        info = datasource.upload_columns(k)
        assert info["columns"] == ["x", "z", "y"] and info["rows"] == 61
        assert info["facts"]["x"]["distinct"] == 3 and info["facts"]["z"]["distinct"] == 5
        assert datasource.target_roles(info, "y") == {"numeric": [], "exclude": []}
