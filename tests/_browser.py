"""Helpers shared by the browser tests (``dash_duo`` in headless Chromium).

Opening a page, waiting for a condition, typing into a number box, and reading
what a ``dcc.Graph`` draws (plotly.js decodes numpy's typed-array specs into
``_inputArray``; the readers turn them back into lists).
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import numpy as np
from dash.testing.wait import until
from selenium.webdriver.common.keys import Keys

from _pages import query_dict

__all__ = ["open_page", "open_link_with_note", "visit", "url_query", "wait_for", "set_number",
           "image_format", "figure", "traces_by_meta", "full_traces", "wait_for_trace"]


def open_page(dash_duo, dash_app, path: str = "") -> None:
    """Start the app's server and open ``path`` (e.g. ``"/masking?problem=led"``)."""
    dash_duo.start_server(dash_app)
    visit(dash_duo, path)


def open_link_with_note(dash_duo, dash_app, path: str, notes: str, words: str) -> None:
    """Open the link ``path`` and wait until its notes box ``notes`` says ``words``."""
    open_page(dash_duo, dash_app, path)
    dash_duo.wait_for_contains_text(notes, words, timeout=20)


def visit(dash_duo, path: str) -> None:
    """Open ``path`` of the running app."""
    dash_duo.driver.get(dash_duo.server_url + path)


def url_query(dash_duo) -> dict:
    """The address bar's query as ``{name: last value}``."""
    return query_dict(urlsplit(dash_duo.driver.current_url).query)


def wait_for(condition, timeout: float = 120, what: str = "the figure"):
    """Poll ``condition`` until it returns something true; return that value.

    120 s: on CI's two loaded cores a page's first figure took over 60 s once (Chromium
    parses the Plotly bundle before the first poll); a figure that never comes still fails.
    """
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"Timed out waiting for {what}.")


def set_number(dash_duo, selector: str, value, timeout: float = 120) -> None:
    """Replace the text of the input ``selector`` with ``value`` and press Enter.

    Waits until the box can be typed in: a page disables its controls while its job runs,
    and a figure streamed by that job (Distributions' first replicates) can be drawn before
    the job ends, later on a loaded machine (CI typed into a disabled box once).
    """
    box = dash_duo.find_element(selector)
    wait_for(lambda: dash_duo.driver.execute_script(
        "const e = arguments[0]; return e.matches(':enabled') && e.getClientRects().length > 0;",
        box), timeout, f"{selector} to accept typing")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.BACKSPACE)
    box.send_keys(str(value), Keys.ENTER)


# -- what a graph draws ------------------------------------------------------------------
_FIGURE = ("var g = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');"
           "if (!g || !g.data) { return null; }"
           "var a = v => v == null ? null : Array.from(v._inputArray || v);"
           "return g.data.map(t => ({meta: t.meta || null, name: t.name || null,"
           " x: a(t.x) || [], y: a(t.y) || [], width: a(t.width)}));")

_BY_META = ("var g = document.querySelector(arguments[0] + ' .js-plotly-plot');"
            "if (!g || !g.data) { return null; }"
            "return g.data.filter(t => t.meta === arguments[1])"
            ".map(t => [t.name, Array.from(t.x || []), Array.from(t.y || [])]);")

_FULL = """
const gd = document.querySelector(arguments[0] + ' .js-plotly-plot');
if (!gd || !gd._fullData || !gd._fullData.length) { return null; }
return gd._fullData.map(t => [t.type, t.y ? Array.from(t.y) : null, t.legendgroup || null]);
"""


def image_format(dash_duo, graph: str) -> str:
    """The format of the camera button's download of ``graph`` (a selector)."""
    return dash_duo.driver.execute_script(
        "return document.querySelector(arguments[0] + ' .js-plotly-plot')._context"
        ".toImageButtonOptions.format", graph)


def figure(dash_duo, graph_id: str) -> list[dict]:
    """Traces of graph ``graph_id`` (an id without ``#``): meta, name, x, y and width."""
    return dash_duo.driver.execute_script(_FIGURE, graph_id) or []


def traces_by_meta(dash_duo, graph: str, meta: str) -> list:
    """``[name, x, y]`` of the traces of ``graph`` (a selector) whose meta is ``meta``."""
    return dash_duo.driver.execute_script(_BY_META, graph, meta) or []


def full_traces(dash_duo, graph: str):
    """``[type, y, legendgroup]`` of each drawn trace of ``graph`` (a selector), or None."""
    return dash_duo.driver.execute_script(_FULL, graph)


def wait_for_trace(dash_duo, graph: str, expected, *, trace: int = 0, timeout: float = 90):
    """Wait until trace ``trace`` of ``graph`` draws ``expected`` as y; all traces then."""
    def match():
        traces = full_traces(dash_duo, graph)
        if not traces or len(traces) <= trace or traces[trace][1] is None:
            return False
        y = traces[trace][1]
        return len(y) == len(expected) and np.allclose(y, expected, atol=1e-12)

    until(match, timeout)
    return full_traces(dash_duo, graph)


def draw_static(dash_br, fig, tmp_path, selector: str) -> None:
    """Open ``fig`` as a static HTML page in the test's browser; wait until ``selector`` is drawn."""
    import json

    from dash.testing.wait import until

    path = tmp_path / "figure.html"
    fig.write_html(path, include_plotlyjs=True, config={"staticPlot": True})
    dash_br.driver.get(path.as_uri())
    until(lambda: dash_br.driver.execute_script(
        f"return !!document.querySelector({json.dumps(selector)})"), 30)
