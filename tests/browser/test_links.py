"""Shared links keep their data choice when the user moves to another page.

A link such as ``/importances?problem=xor...`` opened in a fresh session shows
the XOR problem; before ``app.keep_link_data`` only the Data page wrote the
session store ``vi-data``, so the navigation led to the other pages with the
default data (the LED) instead.
"""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, urlsplit

import pytest
from dash.testing.wait import until

from _pages import grid_cell_selector, grid_cells, page_module
from varimp_core.problems.registry import get_problem

from pages._framework import datasource

data_page = page_module("data")


XOR3 = "xor:relevant=2,irrelevant=1"


# -- the store a link writes ----------------------------------------------------------------
def test_a_link_writes_what_the_data_page_writes():
    problem = get_problem(XOR3)
    page = data_page.apply_choice({"source": "problem", "problem": "xor",
                                   "opt_ids": [{"type": "data-opt", "problem": "xor",
                                                "key": "irrelevant"}],
                                   "opt_values": [1]})
    assert page["ok"], page.get("error")
    store = datasource.link_session_data(f"?problem={XOR3}&K=2")
    assert store == page["store"]
    assert store["params"]["problem"] == problem.spec and store["p"] == 3


def test_an_uploaded_table_link_writes_what_the_data_page_writes():
    csv = "a,b,y\n" + "\n".join(f"{i % 3},{i % 4},{(i % 3 + i % 4) % 2}" for i in range(50))
    info = datasource.store_upload(
        "data:text/csv;base64," + base64.b64encode(csv.encode()).decode(), "t.csv")
    page = data_page.apply_choice({"source": "upload", "upload": info, "target": "y",
                                   "numeric": info["numeric"]})
    assert page["ok"], page.get("error")
    store = datasource.link_session_data("?" + page["query"] + "&method=exact")
    assert store == page["store"]


@pytest.mark.parametrize("search", [None, "", "?", "?K=2&depth=3", "?present=1"])
def test_a_url_without_data_leaves_the_session_alone(search):
    assert datasource.link_session_data(search) is None


def test_the_same_choice_is_not_written_again():
    store = datasource.link_session_data(f"?problem={XOR3}")
    assert datasource.link_session_data(f"?problem={XOR3}&K=3", store) is None
    assert datasource.link_session_data("?problem=led", store)["params"]["problem"] == "led"


def test_a_link_to_a_table_that_is_gone_writes_nothing():
    assert datasource.link_session_data("?source=upload&upload=" + "f" * 64) is None


# -- in the browser ---------------------------------------------------------------------------
def _nav_href(dash_duo, name: str) -> str:
    return dash_duo.driver.find_element("link text", name).get_attribute("href") or ""


@pytest.mark.browser
def test_shared_link_keeps_its_data_through_the_navigation(dash_duo, dash_app):
    dash_duo.start_server(dash_app)
    dash_duo.driver.execute_script("window.sessionStorage.clear()")  # a fresh session
    dash_duo.driver.get(dash_duo.server_url + f"/importances?problem={XOR3}")
    dash_duo.wait_for_text_to_equal(grid_cell_selector("#imp-table", "variable"), "X1",
                                    timeout=30)
    assert len(grid_cells(dash_duo, "#imp-table", "variable")) == 3
    # The navigation links now carry the link's data choice.
    until(lambda: "problem=xor" in _nav_href(dash_duo, "Decomposition"), 10)

    dash_duo.driver.find_element("link text", "Decomposition").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/decomposition", 10)
    until(lambda: grid_cells(dash_duo, "#decomp-totals", "variable") == ["X1", "X2", "X3", "Sum"],
          30)
    query = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert query["problem"] == [get_problem(XOR3).spec]
    # The bound of K is said beside the control (and checked on the server).
    assert "1 to 3" in dash_duo.find_element("#decomp-k-field").text

    # So does the Data page, reached the same way.
    dash_duo.driver.find_element("link text", "Data").click()
    dash_duo.wait_for_text_to_equal("#data-summary-p", "3", timeout=30)
    assert dash_duo.get_logs() == []


def test_link_restoring_loads_nothing_and_keeps_a_known_refusal(tmp_path, monkeypatch):
    """Issue #17: keep_link_data sampled the problem in the web worker (2.1 s for
    madelon:samples=99000) and never kept its refusal; two looping clients pushed cheap
    requests to p95 3.3 s.  The link now writes the choice alone and loads nothing; what the
    page's job loaded (kept in the cache, refusals too) is read, never loaded again."""
    from varimp_core.data.prepare import DataError

    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    real, calls = datasource.load_prepared, []

    def counted(params):
        calls.append(params["problem"])
        if params["problem"].startswith("madelon"):
            raise DataError("Too many cells for this server.")
        return real(params)

    monkeypatch.setattr(datasource, "load_prepared", counted)
    madelon = "?problem=madelon&sampling=sample&n=99000"
    first = [datasource.link_session_data(s) for s in (f"?problem={XOR3}", madelon)]
    assert calls == []                                      # nothing loaded by the link
    assert [set(store) for store in first] == [{"params", "query"}] * 2
    assert first[0]["params"]["problem"] == get_problem(XOR3).spec
    # The page's job loads each once; the link then writes the Data page's store, or nothing.
    page = datasource.session_data(first[0]["params"])
    with pytest.raises(DataError, match="Too many cells"):
        datasource.session_data(first[1]["params"])
    stores = [datasource.link_session_data(f"?problem={XOR3}") for _ in range(3)]
    assert stores[0] == stores[1] == stores[2] == page and page["p"] == 3
    for _ in range(3):
        assert datasource.link_session_data(madelon) is None
    assert len(calls) == 2 and calls[1].startswith("madelon"), calls
