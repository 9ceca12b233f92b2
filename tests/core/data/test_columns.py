"""Column roles of user tables: identifiers, dates, missing values, decimal commas.

Every table is generated here; every expected value is counted by hand from
the way the table was built, or computed by the independent oracle of
``tests/oracle.py`` (Eqn 3 term by term) on the table with "missing" as a value.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from oracle import eqn3_bruteforce
from varimp_core.data.columns import MISSING_LABEL, identifier_reason
from varimp_core.data.prepare import DataError, prepare_problem, prepare_table, read_csv_bytes
from varimp_core.data.summary import column_table
from varimp_core.exact.eqn3 import eqn3_importances
from varimp_core.problems.registry import get_problem


def _one_sentence(message: str) -> None:
    assert message.endswith(".") and "\n" not in message


def _heart_like(seed: int = 0) -> pd.DataFrame:
    """Shaped like statsmodels' ``heart``: 69 rows of survival (days), censors (0/1), age."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"survival": rng.integers(1, 1800, 69),
                         "censors": rng.integers(0, 2, 69),
                         "age": np.round(rng.uniform(8.0, 64.0, 69), 1)})


# -- roles: identifiers ---------------------------------------------------------
def test_identifier_columns_are_excluded_with_the_reason():
    rng = np.random.default_rng(1)
    n = 40
    df = pd.DataFrame({"id": np.arange(1, n + 1), "name": [f"car {i}" for i in range(n)],
                       "x": rng.integers(0, 3, n), "y": rng.integers(0, 2, n)})
    d = prepare_table(df, "y")
    assert d.variables == ("x",)
    reasons = dict(d.excluded)
    assert set(reasons) == {"id", "name"}
    assert "monotone integer index, 1 to 40 in row order" in reasons["id"]
    assert "every one of its 40 text values is distinct" in reasons["name"]
    assert any("Excluded: 'id'" in n for n in d.notes)
    kept = prepare_table(df, "y", identifiers="keep")
    assert kept.variables == ("id", "name", "x") and kept.excluded == ()


def test_identifier_rules_by_hand():
    none = np.zeros(12, dtype=bool)
    # Row numbers, 0..n-1 or 1..n in row order, are an index; other sorted distinct integers
    # are measurements (issue 12): decreasing, with a gap, or one row per year.
    assert identifier_reason("number", np.arange(12.0), none)
    assert identifier_reason("number", np.arange(1, 13.0), none)
    assert identifier_reason("number", np.arange(12.0)[::-1], none) is None  # decreasing
    assert identifier_reason("number", np.r_[0, 2, 3, 7, 8, 9, 10, 11, 12, 13, 14, 15.0],
                             none) is None                                   # a gap
    assert identifier_reason("number", np.arange(1990, 2002.0), none) is None  # years
    assert identifier_reason("number", np.arange(2, 14.0), none) is None     # starts at 2
    assert identifier_reason("number", np.r_[0, 0, np.arange(10.0)], none) is None   # a tie
    assert identifier_reason("number", np.arange(12) + 0.5, none) is None    # not integers
    assert identifier_reason("number", np.arange(9.0), np.zeros(9, bool)) is None   # too few
    text = np.array([f"s{i % 11}" for i in range(12)], dtype=object)
    assert identifier_reason("text", text, none) is None                     # 11 of 12 distinct
    many = np.array([f"s{i % 60}" for i in range(100)], dtype=object)
    assert "60 distinct text values in 100 rows" in identifier_reason(
        "text", many, np.zeros(100, bool))


def test_constant_columns_are_excluded_with_the_value_they_hold():
    """Issue #26: a constant column stopped Measures, Interactions and Dependence."""
    rng = np.random.default_rng(2)
    n = 60
    df = pd.DataFrame({"zero": np.zeros(n), "flag": ["on"] * n, "x": rng.integers(0, 3, n),
                       "half": [None if i % 2 else "a" for i in range(n)],
                       "y": rng.integers(0, 2, n)})
    for identifiers in ("exclude", "keep"):   # whatever the identifier choice
        d = prepare_table(df, "y", identifiers=identifiers)
        reasons = dict(d.excluded)
        assert set(reasons) == {"zero", "flag"}
        assert "constant" in reasons["zero"] and "0" in reasons["zero"]
        assert "constant" in reasons["flag"] and "'on'" in reasons["flag"]
        assert d.variables == ("x", "half")  # "a" or missing: two levels
    rows = {r["column"]: r for r in column_table(d, df.columns)}
    assert rows["zero"]["role"] == "excluded" and "constant" in rows["zero"]["reason"]
    assert any("'zero' (constant" in note for note in d.notes)
    # with the incomplete rows dropped, "half" would hold "a" alone: constant too
    assert "half" in dict(prepare_table(df, "y", missing="drop").excluded)


def test_digits_constant_pixels_are_left_out():
    """scikit-learn's digits has pixels that are 0 in every image; they are no inputs."""
    problem = get_problem("digits")
    frame = problem.sample(None, random_state=0)
    constant = sorted(c for c in problem.variables if frame[c].nunique() == 1)
    assert constant   # the premise: 3 pixels in scikit-learn's copy
    d = prepare_problem(problem)
    assert sorted(dict(d.excluded)) == constant
    assert len(d.variables) == len(problem.variables) - len(constant)


def test_name_like_text_columns_are_excluded_and_can_be_kept():
    """5,000 customer names, two rows each: not every value distinct, yet an identifier."""
    n = 10_000
    names = [f"customer {i // 2}" for i in range(n)]
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"name": names, "x": rng.integers(0, 4, n), "y": rng.integers(0, 2, n)})
    d = prepare_table(df, "y")
    reason = dict(d.excluded)["name"]
    assert "name-like" in reason and "5,000" in reason and "10,000" in reason and "2.0" in reason
    assert d.variables == ("x",)
    assert prepare_table(df, "y", identifiers="keep").variables == ("name", "x")
    # the rule: more than 50 levels and fewer than 5 rows per level on average
    none = np.zeros(204, dtype=bool)
    four_each = np.array([f"v{i % 51}" for i in range(204)], dtype=object)       # 51 x 4
    assert "name-like" in identifier_reason("text", four_each, none)
    five_each = np.array([f"v{i % 51}" for i in range(255)], dtype=object)       # 51 x 5
    assert identifier_reason("text", five_each, np.zeros(255, dtype=bool)) is None
    fifty = np.array([f"v{i % 50}" for i in range(100)], dtype=object)            # 50 x 2
    assert identifier_reason("text", fifty, np.zeros(100, dtype=bool)) is None


def test_a_year_written_as_first_of_january_is_a_year_alone():
    """Issue #26: "Year" always on 1 January gave a Year_weekday input; a constant month
    was dropped without a word."""
    rng = np.random.default_rng(4)
    years = rng.integers(2000, 2020, 80)
    df = pd.DataFrame({"Year": [f"{y}-01-01" for y in years], "y": rng.integers(0, 2, 80)})
    d = prepare_table(df, "y")
    assert d.variables == ("Year_year",)
    note = next(n for n in d.notes if "'Year'" in n)
    assert "month" in note and "Jan" in note and "weekday" in note
    assert not any("day-of-week" in n for n in d.notes)


def test_exclude_by_choice_and_its_refusals():
    df = _heart_like()
    d = prepare_table(df, "censors", exclude=["survival"])
    assert d.variables == ("age",) and d.excluded == (("survival", "excluded by choice"),)
    with pytest.raises(DataError, match="'nope'") as err:
        prepare_table(df, "censors", exclude=["nope"])
    _one_sentence(str(err.value))
    with pytest.raises(DataError, match="cannot be excluded"):
        prepare_table(df, "censors", exclude=["censors"])
    with pytest.raises(DataError, match="others are excluded: 'survival', 'age'"):
        prepare_table(df, "censors", exclude=["survival", "age"])


# -- the target change of issue 12 (bug 1) ----------------------------------------
def test_a_former_target_becomes_a_numeric_input():
    """``age`` (61 distinct values of 69, more than max_levels=20) is binned, not 61 levels."""
    df = _heart_like()
    assert df["age"].nunique() > 20 and df["survival"].nunique() > 20
    first = prepare_table(df, "age")
    assert first.task == "regression" and first.kinds == {"survival": "numeric",
                                                          "censors": "discrete"}
    d = prepare_table(df, "censors")
    assert d.kinds == {"survival": "numeric", "age": "numeric"}
    assert d.table.n_levels.tolist() == [5, 5]


# -- dates ----------------------------------------------------------------------
def test_date_columns_expand_into_year_month_and_weekday():
    days = pd.date_range("2023-12-30", periods=30, freq="D")     # Sat 30 Dec 2023 onwards
    df = pd.DataFrame({"when": days.strftime("%Y-%m-%d"), "y": np.arange(30) % 2})
    d = prepare_table(df, "y")
    assert d.variables == ("when_year", "when_month", "when_weekday") and d.dates == ("when",)
    labels = dict(zip(d.variables, d.table.x_labels))
    assert labels["when_year"] == (2023, 2024)
    assert labels["when_month"] == ("Jan", "Dec")          # the calendar order, Jan first
    assert labels["when_weekday"] == ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    # 30 Dec 2023 was a Saturday: rows 0, 7, 14, 21, 28 are Saturdays.
    sat = d.X_codes[:, 2] == 5
    assert np.flatnonzero(sat).tolist() == [0, 7, 14, 21, 28]
    assert (d.X_codes[:, 0] == 0).sum() == 2 and (d.X_codes[:, 1] == 1).sum() == 2
    gone = prepare_table(df.assign(x=np.arange(30) % 3), "y", dates="exclude")
    assert gone.variables == ("x",) and dict(gone.excluded)["when"].startswith("a date column")
    typed = prepare_table(pd.DataFrame({"t": days, "y": np.arange(30) % 2}), "y")
    assert typed.variables == ("t_year", "t_month", "t_weekday")
    # Parts that never change are no inputs: 1 to 30 June 2024 has one year and one month.
    june = pd.DataFrame({"d": pd.date_range("2024-06-01", periods=30).astype(str),
                         "y": np.arange(30) % 2})
    assert prepare_table(june, "y").variables == ("d_weekday",)
    firsts = pd.DataFrame({"d": ["2024-01-01"] * 10 + ["2024-01-01 "] * 10, "x": [0, 1] * 10,
                           "y": [0, 1] * 10})
    assert dict(prepare_table(firsts, "y").excluded)["d"].endswith("never change")
    with pytest.raises(DataError, match="dates must be one of expand, exclude"):
        prepare_table(df, "y", dates="keep")


# -- missing values ---------------------------------------------------------------
def _with_missing() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 200
    num = rng.normal(size=n)
    num[[3, 50, 51]] = np.nan                                   # 3 missing numbers
    text = rng.choice(["Biscoe", "Dream", "Torgersen"], n).astype(object)
    text[[3, 10, 11, 12]] = None                                # 4 missing texts, row 3 shared
    return pd.DataFrame({"num": num, "island": text, "y": rng.integers(0, 2, n)})


def test_missing_values_are_a_level_of_their_own():
    df = _with_missing()
    d = prepare_table(df, "y")
    assert d.missing == {"num": 3, "island": 4} and d.dropped_rows == 0 and d.n_samples == 200
    labels = dict(zip(d.variables, d.table.x_labels))
    assert labels["island"] == ("Biscoe", "Dream", "Torgersen", MISSING_LABEL)
    assert labels["num"][-1] == MISSING_LABEL and len(labels["num"]) == 6
    # The quantile bins are those of the 197 numbers present; the missing rows get bin 5.
    present = df["num"].dropna().to_numpy()
    np.testing.assert_allclose(d.bin_edges["num"], np.quantile(present, np.linspace(0, 1, 6)))
    assert np.flatnonzero(d.X_codes[:, 0] == 5).tolist() == [3, 50, 51]
    # scikit-learn sees the missing numbers below every number present.
    assert (d.X_numeric[[3, 50, 51], 0] < present.min()).all()
    assert np.flatnonzero(d.X_codes[:, 1] == 3).tolist() == [3, 10, 11, 12]
    assert any("Missing values: 'num' 3, 'island' 4" in n for n in d.notes)


def test_missing_rows_dropped_or_refused_with_the_counts():
    df = _with_missing()
    d = prepare_table(df, "y", missing="drop")
    # Rows 3, 50, 51 and 3, 10, 11, 12: six distinct incomplete rows.
    assert d.dropped_rows == 6 and d.n_samples == 194 and d.missing == {"num": 3, "island": 4}
    assert MISSING_LABEL not in d.table.x_labels[1]
    assert any("the 6 incomplete rows of 200 were dropped" in n for n in d.notes)
    with pytest.raises(DataError, match=r"'num', 'island' have missing values \(3, 4; 6 "
                                        r"incomplete rows\)") as err:
        prepare_table(df, "y", missing="refuse")
    _one_sentence(str(err.value))
    with pytest.raises(DataError, match="missing must be one of category, drop, refuse"):
        prepare_table(df, "y", missing="impute")


def test_rows_without_a_target_are_dropped():
    df = _with_missing()
    df.loc[[0, 1], "y"] = np.nan
    d = prepare_table(df, "y")
    assert d.dropped_rows == 2 and d.n_samples == 198 and d.missing["y"] == 2
    assert d.table.y_labels == (0, 1)


def test_blanks_and_nones_are_missing_and_a_value_named_missing_stays_apart():
    df = pd.DataFrame({"a": ["x", " ", None, "missing"] * 3, "b": [1.0, np.nan, 2.0, 3.0] * 3,
                       "y": [0, 1, 1, 0] * 3})
    d = prepare_table(df, "y")
    assert d.missing == {"a": 6, "b": 3}
    assert d.table.x_labels[0] == ("missing", "x", "(missing)")


def test_missing_as_a_level_is_eqn3_on_the_table_with_missing_as_a_value():
    """Eqn 3 (Louppe et al. 2013) on the plug-in distribution where "missing" is a value."""
    rng = np.random.default_rng(11)
    n = 120
    a = rng.choice(["u", "v", None], n, p=[0.45, 0.35, 0.2])
    b = rng.integers(0, 3, n).astype(float)
    b[rng.random(n) < 0.15] = np.nan
    c = rng.choice(["p", "q"], n)
    y = np.where(pd.isna(a), 1, (b == 1) | (c == "p")).astype(int)
    df = pd.DataFrame({"a": a, "b": b, "c": c, "y": y})
    d = prepare_table(df, "y")
    got = eqn3_importances(d.table).importances
    filled = df.astype(object).where(df.notna(), "missing")
    rows = [((r.a, r.b, r.c), r.y, 1.0 / n) for r in filled.itertuples()]
    np.testing.assert_allclose(got, eqn3_bruteforce(rows, 3), atol=1e-12)


def test_missing_as_a_level_by_hand():
    """A is "x" or missing and Y is whether it is missing; B is independent of both.

    I(A;Y) = H(Y) = 1 bit and I(A;Y|B) = 1 bit, so Eqn 3 gives Imp(A) = 1/2 + 1/2 = 1
    and Imp(B) = 0.  With the incomplete rows dropped, A would hold "x" alone: it is
    excluded as constant, so its missing values drop no row.  Were A to vary ("x", "z"),
    dropping its incomplete rows would leave a constant target, which is refused.
    """
    df = pd.DataFrame({"A": ["x", None, "x", None], "B": [0, 0, 1, 1], "Y": [0, 1, 0, 1]})
    np.testing.assert_allclose(eqn3_importances(prepare_table(df, "Y").table).importances,
                               [1.0, 0.0], atol=1e-12)
    dropped = prepare_table(df, "Y", missing="drop")
    assert dropped.variables == ("B",) and dropped.n_samples == 4
    assert dict(dropped.excluded)["A"].startswith("constant")
    with pytest.raises(DataError, match="constant"):
        prepare_table(df.assign(A=["x", None, "z", None]), "Y", missing="drop")


def test_infinite_values_are_refused_whatever_the_choice():
    df = pd.DataFrame({"a": ["1", "inf", "2"], "y": [0, 1, 0]})
    for how in ("category", "drop"):
        with pytest.raises(DataError, match="'a' holds 1 infinite value") as err:
            prepare_table(df, "y", missing=how)
        _one_sentence(str(err.value))


# -- decimal commas -----------------------------------------------------------------
def test_decimal_commas_are_read_as_numbers_and_said():
    rows = [f"{i};{i * 0.25:.2f};{'ab'[i % 2]};{i % 2}".replace(".", ",") for i in range(1, 41)]
    rows[5] = "6;1.234,5;a;0"                                   # a thousands dot
    content = ("id;length;kind;y\n" + "\n".join(rows) + "\n").encode()
    df = read_csv_bytes(content)
    assert df["length"].dtype == float
    assert df["length"].iloc[0] == 0.25 and df["length"].iloc[5] == 1234.5
    assert df.attrs["notes"] == ["Column 'length' is numbers written with a decimal comma "
                                 "(\"3,14\"), read as numbers."]
    d = prepare_table(df, "y")
    assert d.kinds["length"] == "numeric" and "id" in dict(d.excluded)
    # A comma-separated file keeps quoted "1,5" as text: there it could be a thousands comma.
    plain = read_csv_bytes(b'a,y\n"1,5",0\n"2,5",1\n')
    assert plain["a"].tolist() == ["1,5", "2,5"] and plain.attrs["notes"] == []


def test_a_mostly_decimal_comma_column_is_numeric_and_its_stray_tokens_missing(tmp_path):
    from varimp_core.api import load_data
    from varimp_core.data.tablejson import table_from_json, table_to_json

    # 40 rows; length i/4 written "0,25", "0,5", ...; rows 4 and 8 hold "?" and "-" instead.
    rows = [f"{i};{i / 4:g};{i % 2}".replace(".", ",") for i in range(1, 41)]
    rows[3], rows[7] = "4;?;0", "8;-;0"
    content = ("id;length;y\n" + "\n".join(rows) + "\n").encode()
    df = read_csv_bytes(content)
    assert df["length"].dtype == float and df["length"].isna().sum() == 2   # 38 of 40 numbers
    assert df["length"].iloc[0] == 0.25 and df["length"].iloc[9] == 2.5
    notes = ["Column 'length' is numbers written with a decimal comma (\"3,14\"), read as "
             "numbers.", "In 'length', 2 values that are not a number ('?', '-') are read as "
             "missing."]
    assert df.attrs["notes"] == notes
    # The notes reach the prepared data, also through the server's table store and the API.
    assert list(prepare_table(df, "y").notes[:2]) == notes
    assert list(prepare_table(table_from_json(table_to_json(df)), "y").notes[:2]) == notes
    path = tmp_path / "commas.csv"
    path.write_bytes(content)
    assert list(load_data(data=str(path), target="y").notes[:2]) == notes
    # 4 of 10 values not numbers (60% < 90%): the column stays text, nothing said.
    text = read_csv_bytes(b"a;y\n1,5;0\n2,5;1\nx;0\ny;1\nz;0\nw;1\n3,5;0\n4,5;1\n5;0\n6;1\n")
    assert text["a"].dtype != float and text.attrs["notes"] == []


# -- what the Data page and the command line list -----------------------------------------
def test_column_table_lists_every_column_with_role_type_and_missing():
    df = _with_missing().assign(day=pd.date_range("2024-01-01", periods=200).astype(str),
                                row=np.arange(200))
    rows = column_table(prepare_table(df, "y"), list(df.columns))
    by = {r["column"]: r for r in rows}
    assert [r["column"] for r in rows] == list(df.columns)
    assert by["y"]["role"] == "target" and by["num"]["type"] == "numeric"
    assert by["island"]["type"] == "categorical" and by["island"]["missing"] == 4
    assert by["day"]["type"] == "date" and by["day"]["role"] == "input"
    assert by["row"]["role"] == "excluded" and "index" in by["row"]["reason"]
    assert math.isclose(sum(r["missing"] for r in rows), 7)


# -- labels ---------------------------------------------------------------------------
def _penguins_like(n: int = 150, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    island = rng.choice(["Torgersen", "Biscoe", "Dream"], n).astype(object)
    island[:5] = None
    bill = rng.normal(44.0, 5.0, n).round(1)
    return pd.DataFrame({"island": island, "bill": bill, "sex": rng.choice(["f", "m"], n),
                         "y": ((island == "Biscoe") | (bill > 45)).astype(int)})


def test_value_labels_name_the_codes_scikit_learn_sees():
    d = prepare_table(_penguins_like(), "y")
    # Sorted text levels, then the missing level: codes 0, 1, 2, 3 (hand-counted order).
    assert d.value_labels("island", [0, 1, 2, 3]) == ("Biscoe", "Dream", "Torgersen",
                                                      MISSING_LABEL)
    assert d.value_labels("sex", [1.0, 0.0]) == ("m", "f")
    assert d.value_labels("bill", [40.0]) is None                 # numeric: its own values
    flags = prepare_table(pd.DataFrame({"b": [True, None, False] * 5, "y": [0, 1] * 7 + [0]}),
                          "y")
    assert flags.value_labels("b", sorted(set(flags.X_numeric[:, 0]))) == (
        MISSING_LABEL, "False", "True")
    ints = prepare_table(pd.DataFrame({"k": [1.0, 3.0, np.nan] * 5, "y": [0, 1] * 7 + [0]}),
                         "y")
    assert ints.value_labels("k", sorted(set(ints.X_numeric[:, 0]))) == (MISSING_LABEL, "1", "3")


def test_the_dependence_axis_shows_the_categories_by_name():
    from varimp_core.local.heldout import (fit_local_forest, heldout_partial_dependences,
                                           split_rows)
    from varimp_core.plots.dependence import make_pd2_figure, make_pd_figure

    d = prepare_table(_penguins_like(), "y")
    fit, assessed = split_rows(d.n_samples, 0, "train")
    model = fit_local_forest(d, fit, n_estimators=10, random_state=0)
    one, two, pair = heldout_partial_dependences(d, model, assessed, ["island", "bill"],
                                                 grid_resolution=5, max_ice_lines=0)
    assert one.grid_labels == (("Biscoe", "Dream", "Torgersen", MISSING_LABEL),)
    assert two.grid_labels == (None,) and pair.grid_labels[1] is None
    axis = make_pd_figure(one).layout.xaxis
    assert list(axis.ticktext) == ["Biscoe", "Dream", "Torgersen", MISSING_LABEL]
    assert list(axis.tickvals) == [0.0, 1.0, 2.0, 3.0]
    assert list(make_pd2_figure(pair).layout.xaxis.ticktext) == list(one.grid_labels[0])
    assert make_pd_figure(two).layout.xaxis.ticktext is None
    from varimp_core.local.response_dependence import DependenceOverResponses
    from varimp_core.plots.dependence import make_dependence_over_responses
    dor = DependenceOverResponses("island", (1,), "classification", np.arange(3),
                                  np.array([2.0, 0.0, 3.0]), np.array([1, 0, 1]),
                                  np.array([1, 1, 1]), 3)
    names = dict(zip(one.grid[0].tolist(), one.grid_labels[0]))
    axis = make_dependence_over_responses(dor, value_labels=names).layout.xaxis
    assert list(axis.ticktext) == ["Biscoe", "Dream", "Torgersen", MISSING_LABEL]


def _missing_bill() -> pd.DataFrame:
    """Bill lengths 32, 36, 40, 44, 48 and one missing, five times; island text with a gap."""
    return pd.DataFrame({"bill": [32.0, 36.0, 40.0, 44.0, 48.0, np.nan] * 5,
                         "island": ["Biscoe", "Dream", None] * 10, "y": [0, 1] * 15})


def test_a_numeric_inputs_missing_rows_are_named_missing():
    d = prepare_table(_missing_bill(), "y", bins=2, kinds={"bill": "numeric"})
    # Present values span a = 32 to b = 48: the stand-in is a - max(b - a, 1) = 32 - 16 = 16.
    assert d.missing_value("bill") == 16.0
    assert d.missing_value("island") is None
    assert d.value_labels("bill", [16.0, 36.0]) == (MISSING_LABEL, "36")
    assert d.value_names("bill") == {16.0: MISSING_LABEL}
    # Two quantile bins of 32..48: edges 32, 40 (the median) and 48, then the stand-in.
    assert d.value_ticks("bill") == {16.0: MISSING_LABEL, 32.0: "32", 40.0: "40", 48.0: "48"}
    # Text levels sorted, then missing: codes 0, 1, 2.
    assert d.value_names("island") == {0.0: "Biscoe", 1.0: "Dream", 2.0: MISSING_LABEL}
    assert d.value_ticks("island") == d.value_names("island")
    full = prepare_table(_missing_bill().dropna(), "y", kinds={"bill": "numeric"})
    assert full.value_names("bill") == {} and full.value_labels("bill", [32.0]) is None
    pairs = d.value_label_pairs(["bill"])
    assert pairs == {"bill": {"names": [[16.0, MISSING_LABEL]],
                              "ticks": [[16.0, MISSING_LABEL], [32.0, "32"], [40.0, "40"],
                                        [48.0, "48"]]}}


def test_dependence_csvs_write_labels_not_codes():
    from varimp_core.local.partial_dependence import PartialDependence
    from varimp_core.local.response_dependence import dependence_frame
    from varimp_core.local.importance import LocalImportance

    one = PartialDependence(("island",), (np.array([0.0, 1.0, 2.0]),), ("1",),
                            np.array([[0.2, 0.5, 0.9]]), None, None, (True,), "probability", 3,
                            grid_labels=(("Biscoe", "Dream", MISSING_LABEL),))
    assert one.to_frame()["value"].tolist() == ["Biscoe", "Dream", MISSING_LABEL]
    num = PartialDependence(("bill",), (np.array([16.0, 32.5, 40.0]),), ("1",),
                            np.array([[0.1, 0.2, 0.3]]), None, None, (False,), "probability", 3,
                            grid_labels=((MISSING_LABEL, "32.5", "40"),))
    assert num.to_frame()["value"].tolist() == [MISSING_LABEL, 32.5, 40.0]
    pair = PartialDependence(("island", "bill"), (np.array([0.0, 1.0]), np.array([16.0, 40.0])),
                             ("1",), np.zeros((1, 2, 2)), None, None, (True, False),
                             "probability", 3, grid_labels=(("Biscoe", "Dream"),
                                                             (MISSING_LABEL, "40")))
    f = pair.to_frame()
    assert f["value_1"].tolist() == ["Biscoe", "Biscoe", "Dream", "Dream"]
    assert f["value_2"].tolist() == [MISSING_LABEL, 40.0, MISSING_LABEL, 40.0]
    # Three rows, two variables; every row's first position is island (column 0).
    counts = np.array([[2, 1], [2, 1], [2, 1]])   # island first, bill second, in every row
    local = LocalImportance(
        variables=("island", "bill"), counts=counts, positions=np.array([[0, 1]] * 3),
        prediction=np.array([0, 1, 1]), X=np.array([[0.0, 16.0], [1.0, 32.0], [2.0, 40.0]]),
        task="classification", classes=(0, 1), n_estimators=2, counts_by_level=counts[None])
    frame = dependence_frame(local, ["island", "bill"], positions=[1, 2], value_names={
        "island": {0.0: "Biscoe", 1.0: "Dream", 2.0: MISSING_LABEL},
        "bill": {16.0: MISSING_LABEL}})
    by = {f: g["value"].tolist() for f, g in frame.groupby("feature")}
    assert sorted(by["island"], key=str) == ["Biscoe", "Dream", MISSING_LABEL]
    assert sorted(by["bill"], key=str) == [32.0, 40.0, MISSING_LABEL]


def test_the_dependence_axis_and_hover_say_missing_for_a_numeric_input():
    from varimp_core.local.response_dependence import DependenceOverResponses
    from varimp_core.plots.dependence import make_dependence_over_responses, make_pd_figure

    d = prepare_table(_missing_bill(), "y", bins=2, kinds={"bill": "numeric"})
    ticks = d.value_ticks("bill")
    dor = DependenceOverResponses("bill", (1,), "regression", np.arange(3),
                                  np.array([16.0, 36.0, 48.0]), np.array([0.2, 0.5, 0.7]),
                                  np.array([1, 1, 1]), 3)
    fig = make_dependence_over_responses(dor, value_labels=ticks)
    assert list(fig.layout.xaxis.ticktext) == [MISSING_LABEL, "32", "40", "48"]
    assert list(fig.data[0].text) == [MISSING_LABEL, "36", "48"]   # the hover of each point
    from varimp_core.local.partial_dependence import PartialDependence
    grid = np.array([16.0, 30.0, 40.0, 48.0])   # a numeric grid: no category ticks
    pd1 = PartialDependence(("bill",), (grid,), ("prediction",), np.zeros((1, 4)), None, None,
                            (False,), "prediction", 3,
                            grid_labels=(d.value_labels("bill", grid),))
    assert list(make_pd_figure(pd1).data[0].text) == [MISSING_LABEL, "30", "40", "48"]
    assert make_pd_figure(pd1).layout.xaxis.ticktext is None
    assert list(make_pd_figure(pd1, value_ticks=ticks).layout.xaxis.tickvals) == [
        16.0, 32.0, 40.0, 48.0]


def test_the_interactions_tile_list_names_categories_and_missing_values():
    from varimp_core.local.importance import LocalImportance
    from varimp_core.local.interactions import interactions, tile_frame

    counts = np.array([[2, 1], [2, 1], [2, 1]])   # island first, bill second, in every row
    local = LocalImportance(
        variables=("island", "bill"), counts=counts, positions=np.array([[0, 1]] * 3),
        prediction=np.array([0, 1, 1]), X=np.array([[0.0, 16.0], [1.0, 32.0], [2.0, 40.0]]),
        task="classification", classes=(0, 1), n_estimators=2, counts_by_level=counts[None])
    names = {"island": {0.0: "Biscoe", 1.0: "Dream", 2.0: MISSING_LABEL},
             "bill": {16.0: MISSING_LABEL}}
    tile = tile_frame(local, interactions(local), "island", "bill", value_names=names)
    assert tile["island"].tolist() == ["Biscoe", "Dream", MISSING_LABEL]
    assert tile["bill"].tolist() == [MISSING_LABEL, 32.0, 40.0]


def test_distinct_whole_numbers_under_an_id_name_are_identifiers():
    """Customer numbers (100000, 100001, ... or shuffled) under ``customer_id`` are excluded;
    the same numbers under ``year`` or ``count`` stay, and so does a non-distinct id."""
    import pandas as pd

    from varimp_core.api import load_data

    rng = np.random.default_rng(0)
    n = 60
    y = rng.integers(0, 2, n)
    base = pd.DataFrame({"x": rng.integers(0, 3, n), "y": y})
    for name in ("customer_id", "CustomerID", "customerId", "Order No", "id"):
        for ids in (100000 + np.arange(n), rng.permutation(np.arange(5000, 5000 + 3 * n, 3))):
            d = load_data(data=base.assign(**{name: ids}), target="y")
            reasons = dict(d.excluded)
            assert name in reasons and "identifier" in reasons[name], (name, reasons)
    for name in ("year", "count", "video", "paid"):
        d = load_data(data=base.assign(**{name: 1990 + np.arange(n)}), target="y")
        assert name in d.variables, name
    repeated = np.repeat(np.arange(n // 2), 2)          # two rows per customer: not an id
    d = load_data(data=base.assign(customer_id=repeated), target="y")
    assert "customer_id" in d.variables
