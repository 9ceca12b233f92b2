"""End to end: upload a CSV, pick its target, read the importances the page shows.

The numbers in the Importances table must be the core's for the same file
(``varimp_core.api.load_data`` + ``compute_importances``), to the 4 decimals
the table shows: the browser, the upload path, the cache and the callbacks add
nothing and lose nothing.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
import pytest
from _browser import open_page
from _pages import grid_cell_selector
from dash.testing.wait import until

from varimp_core.api import compute_importances, default_method, load_data

ROWS = 300
TARGET = "y"


def _write_table(path) -> pd.DataFrame:
    """Three discrete inputs; ``y`` depends on A and B (with 10 % label noise), not on C.

    The target is not the last column, so the page's default target (the last
    column) has to be changed by hand.
    """
    rng = np.random.default_rng(20130605)
    a = rng.integers(0, 3, ROWS)
    b = rng.integers(0, 3, ROWS)
    c = rng.integers(0, 4, ROWS)
    y = (a + b) % 3 == 0
    flip = rng.random(ROWS) < 0.1
    df = pd.DataFrame({"A": a, TARGET: np.where(y ^ flip, "yes", "no"),
                       "B": np.array(["lo", "mid", "hi"])[b], "C": c})
    df.to_csv(path, index=False)
    return df


def _shown(value: float) -> str:
    """The table's d3 format ``.4f`` of a number (no negative zero)."""
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


def _cells(dash_duo, column: str) -> list[str]:
    return [td.text.replace("\u2212", "-") for td in
            dash_duo.find_elements(grid_cell_selector("#imp-table", column))]


@pytest.mark.browser
def test_uploaded_csv_importances_match_the_core(dash_duo, dash_app, tmp_path):
    path = tmp_path / "three_inputs.csv"
    _write_table(path)
    data = load_data(data=str(path), target=TARGET)
    method = default_method(data)
    assert method == "exact"  # 3 inputs: the page's default is the exact method too
    expected = compute_importances(data, method=method, max_features=1)
    assert list(expected.variables) == ["A", "B", "C"]
    # Sanity of the table itself: A and B carry the information; C only the plug-in
    # estimate's small positive bias on 300 rows.
    assert min(expected.importances[:2]) > 4 * expected.importances[2]

    open_page(dash_duo, dash_app, "/data")
    dash_duo.wait_for_text_to_equal("#data-summary-p", "7", timeout=30)  # the default LED
    dash_duo.find_element("#data-source input[value='upload']").click()
    dash_duo.find_element("#data-upload input[type='file']").send_keys(str(path))
    dash_duo.wait_for_contains_text("#data-upload-note", f"{ROWS:,} rows", timeout=30)
    # The table is applied with its last column as target first (the controls are
    # disabled meanwhile); then the target is picked.
    dash_duo.wait_for_contains_text("#data-summary-exact", "Target C", timeout=30)
    until(lambda: "vi-job-running" not in dash_duo.find_element("#data-job")
          .get_attribute("class"), 30)
    dash_duo.select_dcc_dropdown("#data-target", value=TARGET)
    dash_duo.wait_for_contains_text("#data-summary-exact", f"Target {TARGET} (classification)",
                                    timeout=30)
    assert dash_duo.find_element("#data-summary-p").text == "3"
    assert dash_duo.find_element("#data-summary-n").text == f"{ROWS:,}"
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("target")
          == [TARGET], 10)

    dash_duo.driver.find_element("link text", "Importances").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/importances", 10)
    dash_duo.wait_for_element("#imp-method input[value='exact']", timeout=30)
    if not dash_duo.find_element("#imp-method input[value='exact']").is_selected():
        dash_duo.find_element("#imp-method input[value='exact']").click()
    assert dash_duo.find_element("#imp-k").get_attribute("value") == "1"
    until(lambda: _cells(dash_duo, "variable") == list(expected.variables), 30)
    dash_duo.wait_for_contains_text("#imp-job-status", "Done", timeout=30)

    shown = _cells(dash_duo, "importance")
    assert shown == [_shown(v) for v in expected.importances]
    np.testing.assert_allclose([float(s) for s in shown], expected.importances, atol=5e-5)
    query = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert query["source"] == ["upload"] and query["target"] == [TARGET]
    # Theorem 2 on the plug-in distribution: the importances add up to I(X;Y).
    dash_duo.wait_for_contains_text("#imp-theorem2", f"sum = {expected.total:.4f} bits",
                                    timeout=10)
    assert dash_duo.get_logs() == []
