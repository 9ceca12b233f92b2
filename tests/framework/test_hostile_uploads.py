"""Hostile uploads: a generated corpus of 250+ files through the real upload path.

Every file of ``tests/hostile/make_corpus.py`` goes through

(a) the server-side parser: ``read_csv_bytes`` and ``prepare_table`` with each
    plausible target;
(b) the Data page's upload callback over HTTP (``POST /_dash-update-component``
    with the payload ``dcc.Upload`` sends), and for each accepted file the
    summary the page shows next (``datasource.data_view``, the function behind
    the page's background callback; a sample also goes through that background
    callback over HTTP).

Nothing may raise anything but a ``DataError``, nothing may answer 500, every
refusal is one readable sentence, and the app still serves other users after
the corpus.  Requests larger than Flask's ``MAX_CONTENT_LENGTH`` get 413 with
the server's sentence.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import logging
import re
import time
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest

from _pages import page_module
from varimp_core.data.prepare import DataError, prepare_table, read_csv_bytes
from varimp_core.result import ImportanceResult

from _servers import post_and_poll
from hostile.make_corpus import CATEGORIES, generate, label, upload_limit
from pages._framework import datasource

logic = page_module("importances")

UPDATE = "/_dash-update-component"
UNCHANGED = " Your current data is unchanged."
GENERIC = "Something went wrong"  # jobs.error_message for an unexpected exception

#: What the upload step must do with every file of a category (None: depends on the file).
EXPECTED = {
    "control": "accepted", "empty": "refused", "whitespace": "refused",
    "headers-only": "refused", "binary-random": "refused", "latin1": "accepted",
    "utf8-bom": "accepted", "long-line": "refused", "html": "accepted",
    "csv-injection": "accepted", "special-numbers": "accepted", "single-row": "accepted",
    "single-class": "accepted", "identical-columns": "accepted", "many-levels": "accepted",
    "zip-bomb": "refused", "nul-bytes": "refused", "long-header": "refused",
    "unicode-headers": "accepted", "semicolon": "accepted", "tab": "accepted",
    "ragged": "refused", "one-column": "accepted", "no-target": "accepted",
}
#: Files of mixed categories whose outcome is known, by a part of their name.
EXPECTED_FILES = {  # the first part found in the name decides
    "-junk": "refused", "xlsx": "refused", "xls-ole2": "refused", "-nobom": "accepted",
    "-le-bom.": "accepted", "-be-bom.": "accepted", "odd-length": "refused",
    "100000x": "refused", "20000x": "refused", "1001x": "refused", "1000x5": "accepted",
    "limit-minus-1": "accepted", "exactly-limit": "accepted", "limit-plus": "refused",
    "twice-limit": "refused", "unicode-separators": "refused", "line-endings__": "accepted",
    "excel-sep-line": "accepted", "unicode-text-export": "accepted",
    "-every-line": "accepted", "-data-only": "refused",
}

_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def assert_sentence(message: str) -> None:
    """A message for users: one readable sentence, no internals.

    Names and values from the file are quoted in messages; only the message's
    own words are searched for class names and paths.
    """
    assert isinstance(message, str) and message, message
    assert len(message) <= 1500, message[:200]
    assert message[0].isupper(), message
    assert message.endswith("."), message
    assert "\n" not in message, message
    own = _QUOTED.sub("''", message)
    assert "Traceback" not in own, message
    assert not re.search(r"\b[A-Z]\w*(Error|Exception|Warning)\b", own), message
    assert not re.search(r"(?:/[\w.-]+){2,}|\b[A-Za-z]:\\|\.py\b|0x[0-9a-f]{6,}", own), message


def expected(path) -> str | None:
    name = path.name
    for part, outcome in EXPECTED_FILES.items():
        if part in name:
            return outcome
    return EXPECTED.get(label(path))


def _mime(path) -> str:
    return {"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "tsv": "text/tab-separated-values", "txt": "text/plain"}.get(
        path.suffix[1:], "text/csv")


def _data_url(content: bytes, mime: str = "text/csv") -> str:
    """What ``dcc.Upload`` puts in ``contents`` (FileReader.readAsDataURL)."""
    return f"data:{mime};base64," + base64.b64encode(content).decode("ascii")


def _targets(columns) -> list:
    """Plausible targets: every column of a narrow table, the ends of a wide one."""
    columns = list(columns)
    return columns if len(columns) <= 6 else columns[:2] + columns[-2:]


# -- the corpus ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """``[(path, bytes)]``, generated once for the module."""
    paths = generate(tmp_path_factory.mktemp("hostile"))
    return [(p, p.read_bytes()) for p in paths]


def test_corpus_is_large_and_covers_every_category(corpus):
    counts = Counter(label(p) for p, _ in corpus)
    assert len(corpus) >= 200
    assert set(counts) == set(CATEGORIES)
    limit = upload_limit()
    sizes = {p.name.split("__")[1].split("-", 1)[1]: len(data) for p, data in corpus
             if label(p) == "size-limit"}
    assert sizes["limit-minus-1.csv"] == limit - 1 and sizes["limit-plus-1.csv"] == limit + 1


# -- (a) the parser ----------------------------------------------------------------------
def test_parser_refuses_with_sentences_and_never_crashes(corpus):
    from pages._server import limits

    server = dict(max_bytes=upload_limit(), max_cells=limits.max_cells(),
                  max_columns=limits.max_columns(), max_name_length=limits.MAX_NAME_LENGTH)
    unhandled, wrong = [], {}
    for path, content in corpus:
        try:  # the server's limits, passed in as its upload job passes them; the core has none
            df = read_csv_bytes(content, **server)
        except DataError as exc:
            assert_sentence(str(exc))
            if expected(path) not in (None, "refused"):
                wrong[path.name] = "refused"
            continue
        except Exception as exc:  # noqa: BLE001 - counted and reported below
            unhandled.append(f"{path.name}: read_csv_bytes raised {exc!r}")
            continue
        if expected(path) not in (None, "accepted"):
            wrong[path.name] = "accepted"
        assert df.shape[0] >= 1 and df.shape[1] >= 1
        assert len(set(df.columns)) == df.shape[1]
        for target in _targets(df.columns):
            try:
                prepared = prepare_table(df, target)
            except DataError as exc:
                assert_sentence(str(exc))
            except Exception as exc:  # noqa: BLE001
                unhandled.append(f"{path.name}: prepare_table({target!r}) raised {exc!r}")
            else:
                assert prepared.n_samples + prepared.dropped_rows == df.shape[0]
                # Every column kept is an input, but a date column: its parts are.
                columns = [str(c) for c in df.columns]
                kept = [c for c in columns if c != target and c not in dict(prepared.excluded)]
                assert [v for v in prepared.variables if v in columns] == [
                    c for c in kept if c not in prepared.dates]
                assert {v.rsplit("_", 1)[0] for v in prepared.variables
                        if v not in columns} == set(prepared.dates)
    assert unhandled == []
    assert wrong == {}


# -- (b) the upload callback over HTTP ----------------------------------------------------
def _upload_callback(server):
    deps = server.test_client().get("/_dash-dependencies").get_json()
    spec = next(d for d in deps if [i["id"] for i in d["inputs"]] == ["data-upload"])
    assert [s["id"] for s in spec["state"]] == ["data-upload"]
    assert spec.get("background")  # a job: a parse never holds a web worker (issue #17)
    outputs = [o.rsplit(".", 1) for o in spec["output"].strip(".").split("...")]
    return spec["output"], [{"id": i, "property": p} for i, p in outputs]


def _post_upload(client, output, outputs, contents, filename):
    """POST what the renderer sends when a file is dropped; return (response, body size)."""
    body = json.dumps({
        "output": output, "outputs": outputs,
        "inputs": [{"id": "data-upload", "property": "contents", "value": contents}],
        "state": [{"id": "data-upload", "property": "filename", "value": filename}],
        "changedPropIds": ["data-upload.contents"]})
    def post(query, data):
        r = client.post(UPDATE, data=data, query_string=query, content_type="application/json")
        return r.status_code, r.get_data(as_text=True)

    return _Answer(*post_and_poll(post, body)), len(body.encode())


class _Answer:
    """The answer that ended the upload callback, as the Flask test client's response."""

    def __init__(self, status: int, text: str):
        self.status_code, self._text = status, text

    def get_data(self, as_text=True):
        return self._text

    def get_json(self):
        return json.loads(self._text)


def _summary_params(info) -> dict:
    return datasource.canonical_params({
        "source": "upload", "upload": info["key"], "file": info["file"],
        "target": info["target"], "numeric": info["numeric"]})


class _Results(dict):
    """Results by file name, and the log records of level ERROR written meanwhile."""

    logged: list


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture(scope="module")
def http_results(corpus, app_module):
    """Send every file through the upload callback, then ask for each accepted file's summary.

    Returns ``{name: {"outcome", "status", "body", "message", "info", "summary"}}``;
    ``outcome`` is "accepted", "refused" or "413"; ``.logged`` lists the errors
    logged meanwhile (the callbacks log every unexpected exception).
    """
    server = app_module.server
    client = server.test_client()
    output, outputs = _upload_callback(server)
    results = _Results()
    collect = _Collect()
    logging.getLogger().addHandler(collect)
    try:
        _send_corpus(client, output, outputs, corpus, results)
    finally:
        logging.getLogger().removeHandler(collect)
    results.logged = collect.records
    return results


def _send_corpus(client, output, outputs, corpus, results):
    for path, content in corpus:
        contents = _data_url(content, _mime(path))
        response, size = _post_upload(client, output, outputs, contents, path.name)
        text = response.get_data(as_text=True)
        r = {"status": response.status_code, "body": size, "info": None, "summary": None,
             "message": None}
        if response.status_code == 413:
            r.update(outcome="413", message=text)
        elif response.status_code == 200:
            got = response.get_json()["response"]
            note = got["data-upload-note"]
            if "data-upload-info" in got:
                r.update(outcome="accepted", info=got["data-upload-info"]["data"],
                         message=note["children"])
                assert note["className"] == "vi-help"
                assert got["data-target"]["options"] == r["info"]["columns"]
            else:
                r.update(outcome="refused", message=note["children"])
                assert note["className"] == "vi-error"
                assert set(got) == {"data-upload-note"}  # the current data stays
        else:
            r.update(outcome=f"HTTP {response.status_code}", message=text[:300])
        results[path.name] = r
    # The summary the page computes next, for every accepted upload.
    for name, r in results.items():
        if r["outcome"] != "accepted":
            continue
        try:
            view = datasource.data_view(_summary_params(r["info"]))
        except DataError as exc:
            r["summary"] = str(exc)
        except Exception as exc:  # noqa: BLE001 - reported by the tests
            r["summary"] = exc
        else:
            r["summary"] = view


def test_no_500_and_no_unhandled_exception_over_http(http_results):
    statuses = Counter(r["status"] for r in http_results.values())
    assert set(statuses) <= {200, 413}, statuses
    generic = [n for n, r in http_results.items() if GENERIC in (r["message"] or "")]
    assert generic == []  # the callback's catch-all never ran
    crashed = {n: r["summary"] for n, r in http_results.items()
               if isinstance(r["summary"], Exception)}
    assert crashed == {}
    assert http_results.logged == []


def test_every_refusal_is_a_sentence_and_matches_the_parser(http_results, corpus):
    contents = dict((p.name, data) for p, data in corpus)
    for name, r in http_results.items():
        if r["outcome"] != "refused":
            continue
        assert r["message"].endswith(UNCHANGED)
        message = r["message"][:-len(UNCHANGED)]
        assert_sentence(message)
        # The page says what the core says.
        with pytest.raises(DataError) as err:
            datasource.store_upload(_data_url(contents[name]), name)
        assert str(err.value) == message


def test_accepted_files_get_a_summary_or_a_sentence(http_results, corpus):
    paths = {p.name: p for p, _ in corpus}
    wrong = {}
    for name, r in http_results.items():
        want = expected(paths[name])
        got = "refused" if r["outcome"] == "413" else r["outcome"]
        if want is not None and got != want:
            wrong[name] = got
        if r["outcome"] != "accepted":
            continue
        info = r["info"]
        assert re.fullmatch(r"[0-9a-f]{64}", info["key"])
        # What reading noticed (decimal commas) is the data's note, below, not said twice.
        assert r["message"] == f"{name}: {info['rows']:,} rows, {len(info['columns'])} columns."
        summary = r["summary"]
        if isinstance(summary, str):
            assert_sentence(summary)
        else:
            s = summary["summary"]
            # Inputs: the columns kept, a date column as three; rows: those with a target.
            roles = {c["column"]: c for c in summary["columns"]}
            inputs = [c for c in roles.values() if c["role"] == "input"]
            dates = sum(c["type"] == "date" for c in inputs)  # each one to three inputs
            assert len(inputs) <= s["p"] <= len(inputs) + 2 * dates
            assert s["N"] == info["rows"] - roles[s["target"]]["missing"]
            assert s["target"] == info["target"] and not s["exact"]
            assert s["H_Y"] is not None and 0 < s["H_Y"] <= np.log2(max(s["N"], 2)) + 1e-9
            assert len(summary["preview"]["rows"]) == min(info["rows"], datasource.PREVIEW_ROWS)
    assert wrong == {}


def test_oversize_requests_get_413_with_the_servers_sentence(http_results, app_module):
    max_body = app_module.server.config["MAX_CONTENT_LENGTH"]
    big = {n for n, r in http_results.items() if r["body"] > max_body}
    assert big  # the corpus has files whose request is over the limit
    assert {n for n, r in http_results.items() if r["outcome"] == "413"} == big
    for name in big:
        message = http_results[name]["message"]
        assert f"limited to {datasource.max_upload_bytes() / 2**20:g} MiB" in message
        for sentence in message.split(". "):
            assert_sentence(sentence if sentence.endswith(".") else sentence + ".")
    # Files over the upload limit whose request fits are refused by the callback.
    over = [n for n, r in http_results.items()
            if "limit-plus" in n and r["body"] <= max_body]
    assert over and all(http_results[n]["outcome"] == "refused" for n in over)
    assert all("larger than the limit" in http_results[n]["message"] for n in over)


def test_markup_in_uploads_stays_text(http_results):
    """Names like ``<script>`` reach the page only as strings, never as markup."""
    for name, r in http_results.items():
        if not name.startswith(("html__", "csv-injection__")):
            continue
        assert r["outcome"] == "accepted"
        info = r["info"]
        assert all(isinstance(c, str) for c in info["columns"])
        if "header" in name:
            assert any(c.startswith(("<", '"', "=", "+", "-", "@", "{", "javascript"))
                       for c in info["columns"]), info["columns"]


@pytest.mark.parametrize("contents, filename", [
    (None, "a.csv"),
    (12345, "a.csv"),
    (["data:text/csv;base64,YSxi"], "a.csv"),
    ({"evil": 1}, "a.csv"),
    ("", "a.csv"),
    ("data:text/csv;base64,@@@not base64@@@", "a.csv"),
    ("data:text/csv;base64,YSxiCjEsMgo=\n", "a.csv"),
    ("just some text, not a data URL", "a.csv"),
    ("data:text/csv,a,b%0A1,2", "a.csv"),
    (_data_url(b"a,y\n1,0\n2,1\n"), None),
    (_data_url(b"a,y\n1,0\n2,1\n"), ["a.csv", "b.csv"]),
    (_data_url(b"a,y\n1,0\n2,1\n"), "../../../etc/passwd"),
    (_data_url(b"a,y\n1,0\n2,1\n"), "<img src=x onerror=alert(1)>.csv"),
    (_data_url(b"a,y\n1,0\n2,1\n"), "x" * 10_000 + ".csv"),
])
def test_malformed_payloads_are_answered_with_sentences(app_module, contents, filename):
    output, outputs = _upload_callback(app_module.server)
    response, _ = _post_upload(app_module.server.test_client(), output, outputs, contents,
                               filename)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    got = response.get_json()["response"]
    note = got["data-upload-note"]["children"]
    assert GENERIC not in note
    if "data-upload-info" in got:
        shown = got["data-upload-info"]["data"]["file"]
        assert "/" not in shown and len(shown) <= 200
        assert note.startswith(shown + ": ")
    else:
        assert note.endswith(UNCHANGED)
        assert_sentence(note[:-len(UNCHANGED)])


# -- the page's summary over HTTP, and the app afterwards ---------------------------------------
def _post_callback(client, spec, values, changed):
    """One ``/_dash-update-component`` request of callback ``spec`` as the renderer sends it."""
    outputs = [o.rsplit(".", 1) for o in spec["output"].strip(".").split("...")]

    def arg(i):
        return [] if i["id"].startswith("{") else \
            {"id": i["id"], "property": i["property"], "value": values.get(i["id"])}

    body = {"output": spec["output"], "outputs": [{"id": i, "property": p} for i, p in outputs],
            "inputs": [arg(i) for i in spec["inputs"]], "state": [arg(i) for i in spec["state"]],
            "changedPropIds": [changed]}
    return body, client.post(UPDATE, json=body)


def _run_data_callback(client, deps, values, timeout=60.0):
    """The Data page's view: the cache peek, then on a miss its background job, polled as the
    renderer polls it.  Returns the outputs, by id, of whichever answered."""
    peek = next(d for d in deps if not d.get("background") and d["inputs"]
                and d["inputs"][0]["id"] == "data-source" and "data-miss.data" in d["output"])
    _, first = _post_callback(client, peek, values, "data-upload-info.data")
    assert first.status_code == 200, first.get_data(as_text=True)[:300]
    got = first.get_json()["response"]
    miss = got.get("data-miss", {}).get("data")
    if miss is None:
        return got
    spec = next(d for d in deps if d.get("background") and d["inputs"][0]["id"] == "data-miss")
    body, started = _post_callback(client, spec, {"data-miss": miss, "data-instance": "t"},
                                   "data-miss.data")
    assert started.status_code == 200, started.get_data(as_text=True)[:300]
    job = started.get_json()
    assert {"cacheKey", "job"} <= set(job)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        poll = client.post(UPDATE, json=body,
                           query_string={"cacheKey": job["cacheKey"], "job": job["job"]})
        assert poll.status_code in (200, 204), poll.get_data(as_text=True)[:300]
        if poll.status_code == 200 and "response" in (poll.get_json() or {}):
            return {**got, **poll.get_json()["response"]}
        time.sleep(0.05)
    raise AssertionError("the background job did not finish")


def _texts(node):
    """Every string in a rendered component tree."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for n in node:
            yield from _texts(n)
    elif isinstance(node, dict):
        assert node.get("type") not in ("Markdown", "Iframe", "Script"), node.get("type")
        assert "dangerously_allow_html" not in node.get("props", {})
        yield from _texts(node.get("props", {}).get("children"))


_PAGE_SAMPLE = ("control__000", "html__", "csv-injection__", "utf16__", "line-endings__",
                "unicode-headers__", "single-class__", "special-numbers__")


def test_page_summary_over_http_for_a_sample(http_results, app_module):
    client = app_module.server.test_client()
    deps = client.get("/_dash-dependencies").get_json()
    seen = set()
    for name, r in http_results.items():
        prefix = next((p for p in _PAGE_SAMPLE if name.startswith(p)), None)
        if prefix is None or prefix in seen or r["outcome"] != "accepted":
            continue
        seen.add(prefix)
        info = r["info"]
        got = _run_data_callback(client, deps, {
            "data-source": "upload", "data-upload-info": info, "data-target": info["target"],
            "data-task": "auto", "data-numeric": info["numeric"], "data-bins": 5,
            "data-missing": "category", "data-dates": "expand",
            "data-problem": "led", "data-sampling": "exact", "data-seed": 0})
        if isinstance(r["summary"], str):  # refused at the summary: the same sentence
            assert got["data-error"]["className"] == "vi-error"
            assert got["data-error"]["children"].startswith(r["summary"])
        else:
            texts = list(_texts(got["data-summary"]["children"]))
            assert f"{r['summary']['summary']['p']:,}" in texts
            assert got["data-error"]["className"] == "vi-hidden"
            # Column names and cells from the file come back as plain strings.
            list(_texts(got["data-preview"]["children"]))
    assert len(seen) == len(_PAGE_SAMPLE)


def test_app_still_serves_other_users_after_the_corpus(http_results, app_module):
    assert len(http_results) >= 200  # the whole corpus went through first
    client = app_module.server.test_client()
    assert client.get("/_health").get_data(as_text=True) == "ok"
    assert client.get("/").status_code == 200
    deps = client.get("/_dash-dependencies").get_json()
    got = _run_data_callback(client, deps, {
        "data-source": "problem", "data-problem": "led", "data-sampling": "exact",
        "data-seed": 0, "data-bins": 5, "data-task": "auto", "data-numeric": [],
        "data-missing": "category", "data-dates": "expand"})
    assert got["data-choice"]["data"]["p"] == 7 and got["data-choice"]["data"]["exact"] is True
    assert "7" in list(_texts(got["data-summary"]["children"]))
    assert client.get("/_health").status_code == 200


# -- CSV export ----------------------------------------------------------------------------
def test_csv_export_neutralises_formula_names():
    names = ("=1+1", "+cmd", "-2+3", "@SUM(A1)", "plain", "x=1")
    r = ImportanceResult(variables=names, importances=np.array([0.5, -0.25, 0, 1, 2, 3.0]),
                         by_degree=None, method="forest")
    rows = list(csv.reader(io.StringIO(logic.csv_text(r))))
    assert [row[0] for row in rows[1:]] == ["'=1+1", "'+cmd", "'-2+3", "'@SUM(A1)",
                                            "plain", "x=1"]
    assert float(rows[2][1]) == -0.25  # numbers stay numbers


def test_uploaded_formula_names_are_neutralised_in_the_export(http_results):
    checked = 0
    for name, r in http_results.items():
        if not name.startswith("csv-injection__") or "header" not in name:
            continue
        info = r["info"]
        data = datasource.canonical_params({"source": "upload", "upload": info["key"],
                                            "file": info["file"], "target": "y"})
        import pages.importances as page
        from pages._framework.datachoice import DataChoice
        from pages._server.jobs import Progress

        settings = {"method": "exact", "max_features": 1, "max_depth": None,
                    "k_semantics": "id3"}
        out = page.compute(settings, DataChoice.from_params(data), Progress(None))
        result = logic.view_from_dict(out)["result"]
        cells = [row[0] for row in csv.reader(io.StringIO(logic.csv_text(result)))][1:]
        for variable, cell in zip(result.variables, cells):
            if variable.startswith(("=", "+", "-", "@")):
                assert cell == "'" + variable
            else:
                assert cell == variable
        assert any(c.startswith("'") for c in cells), cells
        checked += 1
    assert checked >= 8


# -- report ------------------------------------------------------------------------------------
def test_outcome_table(http_results, capsys):
    """Print categories -> outcomes (run with ``-s`` to see it)."""
    table = defaultdict(Counter)
    for name, r in http_results.items():
        outcome = r["outcome"]
        if outcome == "accepted":
            outcome = "summary" if isinstance(r["summary"], dict) else "accepted, sentence"
        table[name.split("__", 1)[0]][outcome] += 1
    with capsys.disabled():
        print(f"\n{len(http_results)} files")
        for category in CATEGORIES:
            print(f"  {category:20s} " + ", ".join(f"{k}: {v}" for k, v in
                                                  sorted(table[category].items())))
    assert sum(sum(c.values()) for c in table.values()) == len(http_results)


# -- what the corpus found, one by one -------------------------------------------------------
@pytest.mark.parametrize("content", [
    b"a,b,y\r1,x,0\r2,z,1\r",                       # classic Mac line ends
    b"a,b,y\n1,x,0\r\n2,z,1\r",                      # mixed
    "a,b,y\n1,x,0\n2,z,1\n".encode("utf-16-le"),     # UTF-16 without a BOM
    "a,b,y\n1,x,0\n2,z,1\n".encode("utf-16-be"),
    b"sep=;\r\na;b;y\r\n1;x;0\r\n2;z;1\r\n",         # Excel's delimiter line
    b"a,b,y,\n1,x,0,\n2,z,1,\n",                    # trailing delimiters
])
def test_files_the_corpus_found_refused_are_read(content):
    df = read_csv_bytes(content)
    assert list(df.columns) == ["a", "b", "y"]
    assert df["b"].tolist() == ["x", "z"] and df["y"].tolist() == [0, 1]


def test_wide_files_and_long_names_are_refused_early(monkeypatch):
    # The server's limits, passed in as the upload handler passes them.
    from pages._server import limits

    server = dict(max_columns=limits.max_columns(), max_name_length=limits.MAX_NAME_LENGTH)
    header = ",".join(f"c{j}" for j in range(100_000)).encode()
    with pytest.raises(DataError, match="100,000 columns, more than the limit of 1,000"):
        read_csv_bytes(header + b"\n" + b"1," * 99_999 + b"1\n", **server)
    monkeypatch.setenv("VARIMP_MAX_COLUMNS", "2")
    with pytest.raises(DataError, match="3 columns, more than the limit of 2"):
        read_csv_bytes(b"a,b,y\n1,2,3\n", max_columns=limits.max_columns())
    with pytest.raises(DataError, match="column 2 is 300 characters long") as err:
        read_csv_bytes(b"a," + b"n" * 300 + b"\n1,2\n", **server)
    assert len(str(err.value)) < 200


def test_messages_stay_short_and_clear():
    with pytest.raises(DataError, match="longer than 131,072 characters") as err:
        read_csv_bytes(b'a,y\n"never closed,1\n' + b"x" * 200_000 + b"\n")
    assert_sentence(str(err.value))
    with pytest.raises(DataError, match="constant") as err:
        prepare_table(pd.DataFrame({"a": [1, 2], "y": ["z" * 10_000] * 2}), "y")
    assert len(str(err.value)) < 200
    with pytest.raises(DataError, match=r"5,242,881 bytes\), larger than the limit"):
        read_csv_bytes(b"a,y\n" + b"1" * (5 * 2**20 - 3), max_bytes=5 * 2**20)
    with pytest.raises(DataError, match="No file was received"):
        datasource.store_upload(None, "a.csv")
