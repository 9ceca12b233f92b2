"""End to end on the Data page: column roles and missing values of an analyst's upload.

Issue 12's bug 1: upload a table shaped like statsmodels' ``heart`` (69 rows;
survival, censors, age), whose last column ``age`` is the default target, then
choose the real target ``censors``.  ``age`` has 60-odd distinct values, more
than the 20 of a discrete column, so it must become a numeric input binned into
quantile bins, not a category with one level per value.

Every expected count below is counted from the way the tables are built.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from dash.testing.wait import until

from _browser import open_page, url_query, wait_for
from _pages import upload_frame
from pages._framework.datachoice import DataChoice


def _upload(dash_duo, dash_app, path, target_shown: str) -> None:
    open_page(dash_duo, dash_app, "/data")
    dash_duo.wait_for_text_to_equal("#data-summary-p", "7", timeout=30)  # the default LED
    assert dash_duo.find_element("#data-error").text == ""               # no error before a file
    dash_duo.find_element("#data-source input[value='upload']").click()
    assert dash_duo.find_element("#data-error").text == ""
    dash_duo.find_element("#data-upload input[type='file']").send_keys(str(path))
    dash_duo.wait_for_contains_text("#data-summary-exact", f"Target {target_shown}", timeout=30)
    _idle(dash_duo)


def _idle(dash_duo) -> None:
    until(lambda: "vi-job-running" not in dash_duo.find_element("#data-job")
          .get_attribute("class"), 30)


def _checked(dash_duo, control: str) -> list[str]:
    return sorted(e.get_attribute("value") for e in
                  dash_duo.find_elements(f"#{control} input:checked"))


def _roles(dash_duo) -> dict:
    rows = dash_duo.find_elements("#data-columns tbody tr")
    cells = [[td.text for td in r.find_elements("css selector", "td")] for r in rows]
    return {c[0]: c[1:] for c in cells}


@pytest.mark.browser
def test_a_former_target_becomes_a_numeric_input(dash_duo, dash_app, tmp_path):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"survival": rng.integers(1, 1800, 69), "censors": rng.integers(0, 2, 69),
                       "age": np.round(rng.uniform(8.0, 64.0, 69), 1)})
    assert df["age"].nunique() > 20 and df["survival"].nunique() > 20
    path = tmp_path / "heart.csv"
    df.to_csv(path, index=False)
    _upload(dash_duo, dash_app, path, "age")
    assert _checked(dash_duo, "data-numeric") == ["survival"]

    dash_duo.select_dcc_dropdown("#data-target", value="censors")
    dash_duo.wait_for_contains_text("#data-summary-exact", "Target censors (classification)",
                                    timeout=30)
    until(lambda: _checked(dash_duo, "data-numeric") == ["age", "survival"], 20)
    dash_duo.wait_for_contains_text("#data-summary-exact", "0 discrete, 2 numeric (binned)",
                                    timeout=30)
    roles = _roles(dash_duo)
    assert roles["age"][:2] == ["input", "numeric"] and roles["censors"][:2] == ["target",
                                                                                  "categorical"]
    until(lambda: url_query(dash_duo).get("target") == "censors"
          and url_query(dash_duo).get("numeric") == "survival", 10)  # the last repeated key
    assert dash_duo.get_logs() == []


def _analyst_table(path) -> None:
    """60 rows: a row number, distinct names, a date, an island missing where i % 10 == 3
    (6 rows) and a mass missing where i % 15 == 0 (4 rows, none of them the same), y."""
    rng = np.random.default_rng(2)
    i = np.arange(60)
    island = rng.choice(["Biscoe", "Dream", "Torgersen"], 60).astype(object)
    island[i % 10 == 3] = None
    mass = rng.normal(4000, 300, 60).round()
    mass[i % 15 == 0] = np.nan
    pd.DataFrame({"id": i + 1, "name": [f"car {k:02d}" for k in i],
                  "day": pd.date_range("2024-01-01", periods=60).strftime("%Y-%m-%d"),
                  "island": island, "mass": mass, "y": rng.integers(0, 2, 60)}
                 ).to_csv(path, index=False)


@pytest.mark.browser
def test_column_roles_and_the_missing_value_choice(dash_duo, dash_app, tmp_path):
    path = tmp_path / "analyst.csv"
    _analyst_table(path)
    _upload(dash_duo, dash_app, path, "y")
    # Identifier-like columns are excluded at first, with the reason; the date is expanded.
    assert _checked(dash_duo, "data-exclude") == ["id", "name"]
    roles = _roles(dash_duo)
    assert roles["id"][0] == "excluded" and "monotone integer index" in roles["id"][3]
    assert roles["name"][0] == "excluded" and "every one of its 60 text values is distinct" in roles["name"][3]
    assert roles["day"][:2] == ["input", "date"]
    assert roles["island"][2] == "6" and roles["mass"][2] == "4"
    # day_month (January, February), day_weekday, island, mass; the year 2024 never changes
    assert dash_duo.find_element("#data-summary-p").text == "4"
    dash_duo.wait_for_contains_text("#data-summary", "'island' 6, 'mass' 4; each is a level "
                                    "of its own", timeout=10)

    # The column-role control: exclude the date too, then include the names again.
    dash_duo.find_element("#data-exclude input[value='day']").click()
    dash_duo.wait_for_text_to_equal("#data-summary-p", "2", timeout=30)
    _idle(dash_duo)
    dash_duo.find_element("#data-exclude input[value='name']").click()
    dash_duo.wait_for_text_to_equal("#data-summary-p", "3", timeout=30)
    assert _roles(dash_duo)["name"][:2] == ["input", "categorical"]
    until(lambda: url_query(dash_duo).get("exclude") in ("day", "id"), 10)
    _idle(dash_duo)

    # The missing-value choice: drop the 10 incomplete rows, or refuse with the counts.
    dash_duo.find_element("#data-missing input[value='drop']").click()
    dash_duo.wait_for_text_to_equal("#data-summary-n", "50", timeout=30)
    dash_duo.wait_for_contains_text("#data-summary", "the 10 incomplete rows of 60 were "
                                    "dropped", timeout=10)
    _idle(dash_duo)
    dash_duo.find_element("#data-missing input[value='refuse']").click()
    dash_duo.wait_for_contains_text("#data-error", "'island', 'mass' have missing values "
                                    "(6, 4; 10 incomplete rows)", timeout=30)
    _idle(dash_duo)
    dash_duo.find_element("#data-missing input[value='category']").click()
    dash_duo.wait_for_text_to_equal("#data-summary-n", "60", timeout=30)
    until(lambda: dash_duo.find_element("#data-error").text == "", 10)


_TICKS = ("return Array.from(document.querySelectorAll(arguments[0] + ' .xtick text'))"
          ".map(t => t.textContent);")


@pytest.mark.browser
def test_labels_on_a_dependence_axis(dash_duo, dash_app):
    """The partial dependence on a text input names its categories, not the codes 0-3."""
    rng = np.random.default_rng(4)
    island = rng.choice(["Torgersen", "Biscoe", "Dream"], 150).astype(object)
    island[:5] = None
    bill = rng.normal(44.0, 5.0, 150).round(1)
    df = pd.DataFrame({"island": island, "bill": bill,
                       "y": ((island == "Biscoe") | (bill > 45)).astype(int)})
    data = DataChoice.from_params(upload_frame(df, "penguins.csv"))
    open_page(dash_duo, dash_app, "/dependence?" + data.query() + "&feature=island&ice=0")
    ticks = wait_for(lambda: dash_duo.driver.execute_script(_TICKS, "#dep-pd"),
                     what="the x ticks of the partial dependence")
    assert ticks == ["Biscoe", "Dream", "Torgersen", "missing"]   # sorted, missing last
    # Ciss's dependence over responses, on the same page, names the observed values too.
    ticks = wait_for(lambda: dash_duo.driver.execute_script(_TICKS, "#dep-dor"),
                     what="the x ticks of the dependence over responses")
    assert set(ticks) <= {"Biscoe", "Dream", "Torgersen", "missing"} and "Biscoe" in ticks
    assert dash_duo.get_logs() == []


def _real_looking_table(path, n: int = 400) -> pd.DataFrame:
    """What issue #26 met: an ID, a constant column, customer names two rows each (more
    than 50 of them), a date, a column copying the target on 99% of rows, and noise."""
    rng = np.random.default_rng(26)
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({
        "id": np.arange(1, n + 1), "plant": ["A"] * n,
        "name": [f"customer {i // 2}" for i in range(n)],
        "day": [f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(n)],
        "refund": np.where(np.arange(n) % 100 == 7, 1 - y, y),
        "x": rng.normal(size=n).round(2), "y": y})
    df.to_csv(path, index=False)
    return df


@pytest.mark.browser
def test_constant_name_like_and_leaking_columns_on_the_data_page(dash_duo, dash_app, tmp_path):
    """Issue #26 items 1-3: the column list says why ``plant`` (constant) and ``name``
    (name-like: 200 levels, 2 rows each) are excluded, asks about ``refund`` (it equals
    y on 396 of 400 rows) and one click excludes it."""
    path = tmp_path / "customers.csv"
    _real_looking_table(path)
    _upload(dash_duo, dash_app, path, "y")
    roles = _roles(dash_duo)
    assert roles["plant"][0] == "excluded" and "constant" in roles["plant"][3]
    assert roles["name"][0] == "excluded" and "name-like" in roles["name"][3]
    assert "200" in roles["name"][3] and "2.0" in roles["name"][3]
    assert roles["id"][0] == "excluded"
    assert roles["refund"][0] == "input" and "known before the outcome" in roles["refund"][3]
    assert _checked(dash_duo, "data-exclude") == ["id", "name", "plant"]
    # the inputs left: day's month and weekday (its year is always 2024), refund and x
    dash_duo.wait_for_text_to_equal("#data-summary-p", "4", timeout=30)
    leak = dash_duo.find_element("#data-leaks [data-leak='refund']")
    assert "refund" in leak.text and "%" in leak.text
    leak.find_element("css selector", "button").click()
    until(lambda: _checked(dash_duo, "data-exclude") == ["id", "name", "plant", "refund"], 20)
    dash_duo.wait_for_text_to_equal("#data-summary-p", "3", timeout=30)
    until(lambda: _roles(dash_duo)["refund"][0] == "excluded", 30)
    assert dash_duo.find_elements("#data-leaks [data-leak]") == []
    # one click on the role control keeps the name-like column
    dash_duo.find_element("#data-exclude input[value='name']").click()
    dash_duo.wait_for_text_to_equal("#data-summary-p", "4", timeout=30)
    until(lambda: _roles(dash_duo)["name"][0] == "input", 30)
    assert dash_duo.get_logs() == []
