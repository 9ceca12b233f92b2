"""Tests of varimp_core.data.prepare: reading uploads, typing, binning and refusals."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from varimp_core.data.prepare import (DataError, PreparedData, decode_upload,
                                      exact_limit_message, load_csv, prepare_problem,
                                      prepare_table, read_csv_bytes)
from varimp_core.problems.registry import get_problem


def _one_sentence(message: str) -> None:
    assert message.endswith(".") and "\n" not in message


# -- read_csv_bytes ------------------------------------------------------------
def test_read_plain_csv():
    df = read_csv_bytes(b"a,b,y\n1,x,0\n2.5,y,1\n")
    assert list(df.columns) == ["a", "b", "y"]
    assert df["a"].tolist() == [1.0, 2.5] and df["b"].tolist() == ["x", "y"]


def test_read_detects_semicolons_tabs_and_strips_names():
    assert list(read_csv_bytes(b"a;b\n1;2\n3;4\n").columns) == ["a", "b"]
    assert list(read_csv_bytes(b"a\tb\n1\t2\n").columns) == ["a", "b"]
    assert list(read_csv_bytes(b" a , b\n1, 2\n").columns) == ["a", "b"]


def test_read_encodings():
    assert list(read_csv_bytes("\ufeffa,b\n1,2\n".encode("utf-8")).columns) == ["a", "b"]
    latin = read_csv_bytes("nom,ville\nJos\xe9,Li\xe8ge\n".encode("latin-1"))
    assert latin.iloc[0].tolist() == ["Jos\xe9", "Li\xe8ge"]
    utf16 = read_csv_bytes("a,b\n1,2\n".encode("utf-16"))
    assert utf16.iloc[0].tolist() == [1, 2]


def test_refuse_too_large():
    content = b"a,b\n" + b"1,2\n" * 100
    with pytest.raises(DataError, match="404 bytes.*limit of 100 bytes") as err:
        read_csv_bytes(content, max_bytes=100)
    _one_sentence(str(err.value))
    big = b"a\n" + b"1\n" * (2**19)                    # 1 MiB + 2 bytes
    with pytest.raises(DataError, match="1.0 MB"):
        read_csv_bytes(big, max_bytes=2**20)
    assert len(read_csv_bytes(big)) == 2**19          # no limit unless one is passed


def test_the_core_reads_no_server_limit_from_the_environment(monkeypatch):
    """A notebook reads any table: the limits are the server's, passed in by the web layer."""
    content = b"a,b\n" + b"".join(f"{i % 3},{i % 2}\n".encode() for i in range(100))
    monkeypatch.setenv("VARIMP_MAX_UPLOAD_BYTES", "50")
    monkeypatch.setenv("VARIMP_MAX_CELLS", "10")
    assert len(read_csv_bytes(content)) == 100
    assert prepare_table(read_csv_bytes(content), "b").n_samples == 100
    monkeypatch.setenv("VARIMP_MAX_COLUMNS", "1")
    wide = b",".join(b"c%d" % j for j in range(2000)) + b"\n" + b"1," * 1999 + b"1\n"
    assert read_csv_bytes(wide).shape == (1, 2000)
    long_name = b"a," + b"n" * 500 + b"\n1,2\n"
    assert len(read_csv_bytes(long_name).columns[1]) == 500
    with pytest.raises(DataError, match="201 cells.*limit of 200"):
        read_csv_bytes(b"a\n" + b"1\n" * 201, max_cells=200)


@pytest.mark.parametrize("content", [b"", b"\n \n\t\n"])
def test_refuse_empty(content):
    with pytest.raises(DataError, match="empty") as err:
        read_csv_bytes(content)
    _one_sentence(str(err.value))


def test_refuse_header_only():
    with pytest.raises(DataError, match="no data rows"):
        read_csv_bytes(b"a,b,c\n")


@pytest.mark.parametrize("content", [
    bytes(np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8)),  # junk
    b"PK\x03\x04\x14\x00\x06\x00" + b"a,b\n1,2\n" * 10,                       # zip/xlsx
    bytes(range(1, 32)) * 20,                                                  # controls
])
def test_refuse_binary(content):
    with pytest.raises(DataError, match="binary") as err:
        read_csv_bytes(content)
    _one_sentence(str(err.value))


def test_refuse_ragged_rows_with_line_number():
    with pytest.raises(DataError, match="Line 3 has 2 fields but the header has 3"):
        read_csv_bytes(b"a,b,y\n1,2,0\n3,4\n5,6,1\n")
    with pytest.raises(DataError, match="Line 2 has 3 fields"):
        read_csv_bytes(b"a,b\n1,2,3\n4,5,6\n")


def test_quoted_delimiters_are_not_ragged():
    df = read_csv_bytes(b'name,y\n"Smith, J",1\n"Doe, A",0\n')
    assert df["name"].tolist() == ["Smith, J", "Doe, A"]


def test_refuse_duplicate_names():
    with pytest.raises(DataError, match="'a', 'b' appear more than once"):
        read_csv_bytes(b"a,b,a,b,c\n1,2,3,4,5\n")


def test_decode_upload_and_load_csv(tmp_path):
    content = b"x,y\n1,0\n2,1\n"
    encoded = "data:text/csv;base64," + base64.b64encode(content).decode()
    assert decode_upload(encoded) == content
    with pytest.raises(DataError, match="base64"):
        decode_upload("data:text/csv;base64,@@@")
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    assert load_csv(path).shape == (2, 2)
    assert load_csv(str(path)).shape == (2, 2)
    assert load_csv(io.BytesIO(content)).shape == (2, 2)
    assert load_csv(io.StringIO(content.decode())).shape == (2, 2)
    with pytest.raises(DataError, match="limit of 5 bytes"):
        load_csv(path, max_bytes=5)
    with pytest.raises(DataError, match="check the path"):
        load_csv(tmp_path / "missing.csv")


# -- prepare_table: typing and binning -------------------------------------------
@pytest.fixture
def mixed_frame():
    rng = np.random.default_rng(0)
    n = 1000
    return pd.DataFrame({
        "num": rng.normal(size=n),
        "small_int": rng.integers(0, 3, n),
        "text": rng.choice(["a", "b", "c"], n),
        "flag": rng.random(n) < 0.5,
        "cat": pd.Categorical(rng.choice(["lo", "hi"], n), categories=["lo", "mid", "hi"]),
        "num_as_text": rng.integers(0, 100, n).astype(str),
        "mixed_text": np.where(rng.random(n) < 0.5, "1", "x"),
        "y": rng.choice(["u", "v"], n),
    })


def test_type_detection(mixed_frame):
    data = prepare_table(mixed_frame, "y")
    assert isinstance(data, PreparedData)
    assert data.kinds == {"num": "numeric", "small_int": "discrete", "text": "discrete",
                          "flag": "discrete", "cat": "discrete", "num_as_text": "numeric",
                          "mixed_text": "discrete"}
    assert data.task == "classification" and data.n_samples == 1000
    assert set(data.bin_edges) == {"num", "num_as_text"}
    labels = dict(zip(data.variables, data.table.x_labels))
    assert labels["text"] == ("a", "b", "c")
    assert labels["flag"] == (False, True)
    assert labels["cat"] == ("lo", "hi")                  # category order, unused dropped
    assert labels["small_int"] == (0, 1, 2)
    assert labels["mixed_text"] == ("1", "x")
    assert data.table.y_labels == ("u", "v")
    assert data.X_numeric.shape == (1000, 7) and data.X_numeric.dtype == float
    # Numbers are kept as numbers, text is ordinal-coded in sorted order.
    np.testing.assert_array_equal(data.X_numeric[:, 0], mixed_frame["num"])
    np.testing.assert_array_equal(data.X_numeric[:, 2],
                                  mixed_frame["text"].map({"a": 0, "b": 1, "c": 2}))
    np.testing.assert_array_equal(data.y, (mixed_frame["y"] == "v").astype(int))
    assert data.table.total_weight == 1000 and not data.table.exact


def test_quantile_bins_have_equal_counts():
    # 0..999 into 5 quantile bins: edges 199.8, 399.6, 599.4, 799.2 (hand), 200 each.
    values = np.random.default_rng(1).permutation(1000).astype(float)
    df = pd.DataFrame({"x": values, "y": np.arange(1000) % 2})
    data = prepare_table(df, "y")
    assert data.kinds["x"] == "numeric"
    np.testing.assert_allclose(data.bin_edges["x"], [0, 199.8, 399.6, 599.4, 799.2, 999])
    X, _ = data.table.expand()
    np.testing.assert_array_equal(np.bincount(X[:, 0]), [200] * 5)
    assert data.table.x_labels[0][0] == "[0, 199.8)" and data.table.x_labels[0][-1].endswith("]")


def test_ties_merge_empty_bins():
    values = np.r_[np.zeros(800), np.arange(1, 201)]        # 80 % zeros
    df = pd.DataFrame({"x": values, "y": np.arange(1000) % 2})
    data = prepare_table(df, "y")
    counts = np.bincount(data.table.expand()[0][:, 0])
    assert counts.sum() == 1000 and (counts > 0).all()
    assert counts[0] == 800


def test_regression_target_is_binned(mixed_frame):
    data = prepare_table(mixed_frame, "num")
    assert data.task == "regression"
    np.testing.assert_array_equal(data.y, mixed_frame["num"].to_numpy())
    assert data.table.n_classes == 5
    assert np.bincount(data.table.expand()[1]).tolist() == [200] * 5


def test_kinds_and_task_overrides(mixed_frame):
    data = prepare_table(mixed_frame, "y", kinds={"small_int": "numeric", "num_as_text":
                                                  "discrete"})
    assert data.kinds["small_int"] == "numeric" and data.kinds["num_as_text"] == "discrete"
    assert data.table.n_levels[data.variables.index("num_as_text")] == 100
    assert prepare_table(mixed_frame, "small_int", task="regression").task == "regression"


def test_numbers_stored_as_text_in_a_csv():
    df = read_csv_bytes(b"a,b,y\n" + b"".join(f"{i * 0.5},{i % 3},{i % 2}\n".encode()
                                              for i in range(60)))
    data = prepare_table(df, "y")
    assert data.kinds == {"a": "numeric", "b": "discrete"}
    strings = df.astype(str)
    assert prepare_table(strings, "y").kinds == {"a": "numeric", "b": "discrete"}


# -- prepare_table: refusals -------------------------------------------------------
def _refusal(df, target, match, **kw):
    with pytest.raises(DataError, match=match) as err:
        prepare_table(df, target, **kw)
    _one_sentence(str(err.value))
    return str(err.value)


def test_refuse_empty_table():
    _refusal(pd.DataFrame({"a": [], "y": []}), "y", "empty")
    _refusal(pd.DataFrame(), "y", "empty")


def test_refuse_missing_target_lists_columns(mixed_frame):
    message = _refusal(mixed_frame, "Y", "'Y' is not a column")
    assert "'num', 'small_int'" in message


def test_refuse_constant_target():
    message = _refusal(pd.DataFrame({"a": [1, 2, 3], "y": [1.0, 1.0, 1.0]}), "y",
                       "constant")
    assert "every row is 1" in message


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_refuse_infinite(bad):
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, bad, 3.0], "y": [0, 1, 0]})
    message = _refusal(df, "y", "'b' holds 1 infinite value")
    assert "replace them" in message
    _refusal(df, "y", "infinite", missing="drop")


@pytest.mark.parametrize("bad", [np.nan, None])
def test_refuse_missing_with_the_counts(bad):
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, bad, 3.0], "t": ["x", None, "z"],
                       "y": [0, 1, 0]})
    message = _refusal(df, "y", "'b', 't' have missing values", missing="refuse")
    assert "(1, 1; 1 incomplete row)" in message and "level of their own" in message


def test_refuse_too_many_text_classes():
    df = pd.DataFrame({"a": np.arange(600) % 7, "y": [f"s{i % 300}" for i in range(600)]})
    message = _refusal(df, "y", "300 distinct text values")
    assert "at most 50" in message


def test_refuse_too_many_numeric_classes(mixed_frame):
    _refusal(mixed_frame, "num_as_text", "100 distinct values.*task='regression'",
             task="classification")


def test_refuse_no_inputs():
    _refusal(pd.DataFrame({"y": [0, 1]}), "y", "only the target")


def test_refuse_too_many_cells(mixed_frame, monkeypatch):
    _refusal(mixed_frame, "y", "8,000 cells.*limit of 100", max_cells=100)


def test_refuse_bad_kinds_and_tasks(mixed_frame):
    _refusal(mixed_frame, "y", "'text' holds text values.*mark it discrete",
             kinds={"text": "numeric"})
    _refusal(mixed_frame, "y", "'nope'", kinds={"nope": "discrete"})
    _refusal(mixed_frame, "y", "'discrete' or 'numeric'", kinds={"num": "continuous"})
    _refusal(mixed_frame, "text", "cannot be a regression target", task="regression")
    _refusal(mixed_frame, "y", "task must be", task="ranking")


def test_refuse_duplicate_columns_and_non_frames():
    df = pd.DataFrame([[1, 2, 0], [3, 4, 1]], columns=["a", "a", "y"])
    _refusal(df, "y", "'a'")
    _refusal(np.zeros((3, 2)), "y", "DataFrame")


class _Unprintable:
    def __str__(self):
        raise RuntimeError("no text")


def test_odd_objects_are_text_or_refused():
    df = pd.DataFrame({"a": [[1], [2], [1]], "y": [0, 1, 0]})
    assert prepare_table(df, "y").table.x_labels[0] == ("[1]", "[2]")
    _refusal(pd.DataFrame({"a": [1j, 2j], "y": [0, 1]}), "y", "complex")
    _refusal(pd.DataFrame({"a": [_Unprintable(), _Unprintable()], "y": [0, 1]}), "y",
             "could not be prepared")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=30, max_size=200), st.integers(2, 8))
def test_binning_is_a_partition(values, bins):
    values = np.asarray(values)
    df = pd.DataFrame({"x": values, "y": np.arange(len(values)) % 2})
    if len(np.unique(values)) == 1:  # a constant column is excluded, never binned
        with pytest.raises(DataError, match="excluded: 'x'"):
            prepare_table(df, "y", bins=bins, max_levels=1, kinds={"x": "numeric"})
        return
    data = prepare_table(df, "y", bins=bins, max_levels=1, kinds={"x": "numeric"})
    codes = data.table.expand()[0][:, 0]
    counts = np.bincount(codes)
    assert counts.sum() == len(values) and (counts > 0).all() and len(counts) <= bins
    edges = data.bin_edges["x"]
    assert len(edges) == len(counts) + 1 and edges == sorted(edges)
    assert edges[0] == values.min() and edges[-1] == values.max()


# -- prepare_problem ------------------------------------------------------------
def test_prepare_problem_exact():
    data = prepare_problem(get_problem("led"))
    assert data.table.exact and data.table.n_rows == 10
    assert data.X_numeric is None and data.y is None and data.n_samples is None
    assert data.source == "led" and set(data.kinds.values()) == {"discrete"}


def test_prepare_problem_sampled():
    data = prepare_problem(get_problem("led"), n_samples=500, random_state=1)
    assert not data.table.exact and data.n_samples == 500
    assert data.table.total_weight == 500 and data.X_numeric.shape == (500, 7)
    # Too large for an exact table: falls back to the default sample size.
    data = prepare_problem(get_problem("xor:irrelevant=25"))
    assert data.n_samples == 1000 and not data.table.exact


def test_prepare_problem_keeps_many_level_features_discrete():
    data = prepare_problem(get_problem("strobl"))
    assert set(data.kinds.values()) == {"discrete"} and data.bin_edges == {}
    assert data.table.n_levels[data.variables.index("X50")] > 20   # 51 levels, not binned


def test_prepare_problem_continuous():
    data = prepare_problem(get_problem("madelon:irrelevant=5,samples=200"))
    assert set(data.kinds.values()) == {"numeric"} and data.n_samples == 200
    assert data.table.n_levels.tolist() == [5] * 25
    data = prepare_problem(get_problem("diabetes"))
    assert data.task == "regression" and data.n_samples == 442


def test_exact_limit_message():
    message = exact_limit_message(30, 20)
    assert "20" in message and "30" in message and "forest" in message
    _one_sentence(message)


def test_prepared_data_keeps_per_sample_codes_in_step_with_its_rows():
    from dataclasses import replace

    from varimp_core.data.prepare import prepare_table
    frame = pd.DataFrame({"a": ["x", "y", "x", "z"], "b": [0.5, 1.5, 2.5, 3.5], "t": [0, 1, 1, 0]})
    d = prepare_table(frame, "t", kinds={"b": "numeric"}, bins=2)
    np.testing.assert_array_equal(d.X_codes[:, 0], [0, 1, 0, 2])   # sorted text levels
    np.testing.assert_array_equal(d.X_codes[:, 1], [0, 0, 1, 1])   # two quantile bins
    np.testing.assert_array_equal(d.y_codes, [0, 1, 1, 0])
    with pytest.raises(ValueError, match="X_codes has 4 rows but the data has 2"):
        replace(d, X_numeric=d.X_numeric[:2], y=d.y[:2])
    assert replace(d, X_numeric=d.X_numeric[:2], y=d.y[:2], X_codes=None, y_codes=None)


def test_a_refused_problem_link_is_refused_from_the_cache_the_second_time(monkeypatch):
    """Issue #17: a link whose problem is refused was sampled again on every request (2 s of
    a web worker each time); the refusal is now kept with the data views."""
    from pages._framework import datasource
    from varimp_core.data.prepare import DataError

    calls = []
    real = datasource.load_prepared

    def counting(params):
        calls.append(params)
        return real(params)

    monkeypatch.setattr(datasource, "load_prepared", counting)
    params = {"source": "problem", "problem": "xor:noise=5", "sampling": "sample", "n": 10}
    for _ in range(3):
        with pytest.raises(DataError):
            datasource.data_view(params)
    assert len(calls) == 1


def test_a_file_without_a_header_is_read_with_generated_names():
    """Issue #26: a header-less file was told "Column name '0.0' appears more than once".
    Its first row (numbers only) is data: 4 rows, columns col1..col3, and a note says so."""
    content = b"0.0,1.5,0\n0.0,2.5,1\n1.0,1.5,0\n2.0,3.5,1\n"
    df = read_csv_bytes(content)
    assert list(df.columns) == ["col1", "col2", "col3"] and len(df) == 4
    assert df["col2"].tolist() == [1.5, 2.5, 1.5, 3.5]
    (note,) = df.attrs["notes"]
    assert "col1" in note and "col3" in note
    assert any(note in n for n in prepare_table(df, "col3").notes)
    # a header with a name among numbers is a header
    named = read_csv_bytes(b"2019,2020,y\n1,2,0\n3,4,1\n")
    assert list(named.columns) == ["2019", "2020", "y"] and len(named) == 2


# -- default_roles_by_target ---------------------------------------------------------------
def _roles_table(n: int = 120, seed: int = 0) -> pd.DataFrame:
    """An analyst's table with every role: a numeric column of exactly 21 values whose 21st
    value sits only on rows where ``score`` is missing (so it is numeric for every target but
    ``score``, and discrete for ``score``), an identifier, a constant, an empty column, dates
    (one whose parts never change), text, missing values, a constant-to-be target."""
    rng = np.random.default_rng(seed)
    score = rng.normal(size=n).round(3)
    score[:6] = np.nan
    steps = np.r_[np.full(6, 20), np.arange(20), rng.integers(0, 20, n - 26)]  # 20: rows 0..5
    return pd.DataFrame({
        "id": [f"R{i:05d}" for i in rng.permutation(n)],
        "steps": steps.astype(float),
        "flat": 7.0,
        "empty": np.nan,
        "town": rng.choice(["Liège", "Namur", "Mons"], n),
        "joined": (np.datetime64("2020-01-01") + rng.integers(0, 700, n)).astype(str),
        "census": "2021-06-30",
        "amount": rng.exponential(50, n).round(2),
        "score": score,
        "label": rng.choice(["yes", "no"], n),
    })


@pytest.mark.parametrize("seed", range(3))
def test_roles_of_every_target_at_once_equal_one_target_at_a_time(seed):
    # default_roles prepares the whole table per target (the oracle here); the fast version
    # reads each column once.
    from varimp_core.data.prepare import default_roles, default_roles_by_target
    df = _roles_table(seed=seed)
    fast = default_roles_by_target(df)
    assert list(fast) == list(df.columns)
    for target in df.columns:
        assert fast[target] == default_roles(df, target), target
    # Truth built in: ``steps`` has 21 values, 20 once ``score``'s missing rows are dropped.
    assert "steps" in fast["label"]["numeric"] and "steps" not in fast["score"]["numeric"]
    assert fast["label"]["exclude"] == ["census", "empty", "flat", "id"]
    assert fast["flat"] == {"numeric": None, "exclude": None}     # a constant target
    assert fast["empty"] == {"numeric": None, "exclude": None}    # no value at all


def test_roles_of_every_target_on_tables_that_cannot_be_prepared():
    from varimp_core.data.prepare import default_roles, default_roles_by_target
    clash = pd.DataFrame({"when": ["2020-01-03", "2021-05-04", "2022-09-30"] * 4,
                          "when_year": [1, 2, 3] * 4, "y": ["a", "b"] * 6})
    lonely = pd.DataFrame({"id": [f"x{i}" for i in range(30)], "y": ["a", "b", "c"] * 10})
    many = pd.DataFrame({"x": [1, 2] * 60, "k": [f"c{i}" for i in range(120)]})
    infinite = pd.DataFrame({"x": [1.0, np.inf, 3.0, 4.0] * 3, "z": [1, 2, 3] * 4,
                             "y": ["a", "b"] * 6})
    for df in (clash, lonely, many, infinite, pd.DataFrame({"a": [], "b": []})):
        fast = default_roles_by_target(df)
        assert fast == {str(c): default_roles(df, c) for c in df.columns}
    assert default_roles_by_target(clash)["y"] == {"numeric": None, "exclude": None}
    assert default_roles_by_target(lonely)["y"] == {"numeric": None, "exclude": None}
    assert default_roles_by_target(many)["k"] == {"numeric": None, "exclude": None}
    assert default_roles_by_target(infinite)["y"] == {"numeric": None, "exclude": None}
    dupes = pd.DataFrame([[1, 2]], columns=["a", "a"])
    assert default_roles_by_target(dupes) == {"a": {"numeric": None, "exclude": None}}


@pytest.mark.parametrize("seed", range(2))
def test_inputs_and_task_counted_from_column_facts_equal_the_preparation(seed):
    # input_names and target_task read a few numbers per column (column_facts); the oracle is
    # prepare_table itself, for every target and every choice of exclusions, dates and
    # missing values that it prepares.
    from varimp_core.data.prepare import column_facts, input_names, target_task
    df = _roles_table(seed=seed)
    df["year_only"] = "2024-01-01"                      # a date whose parts never change
    df["days"] = (np.datetime64("2021-03-01") + np.arange(len(df)) % 40).astype(str)
    facts = column_facts(df)
    checked = 0
    for target in df.columns:
        for exclude in (None, [], ["id", "town"], ["joined"]):
            for dates in ("expand", "exclude"):
                for missing in ("category", "drop", "refuse"):
                    if target in (exclude or ()):
                        continue
                    try:
                        prepared = prepare_table(df, target, exclude=exclude or (),
                                                 identifiers="exclude" if exclude is None
                                                 else "keep", dates=dates, missing=missing)
                    except DataError:
                        continue
                    how = dict(exclude=exclude, dates=dates, missing=missing)
                    assert input_names(facts, target, **how) == list(prepared.variables), (target, how)
                    task = target_task(facts, target, missing=missing)
                    assert task in (prepared.task, None), (target, how)
                    assert task is not None or missing == "drop"
                    checked += 1
    assert checked > 50
    # Truth built in: with the defaults and target "label", the inputs are steps, town,
    # joined (year, month, weekday), amount, score, days (month, weekday): 9.
    assert input_names(facts, "label") == [
        "steps", "town", "joined_year", "joined_month", "joined_weekday", "amount", "score",
        "days_month", "days_weekday"]
    assert target_task(facts, "label") == "classification"
    assert target_task(facts, "amount") == "regression"
    assert target_task(facts, "amount", task="classification") == "classification"

    assert column_facts(pd.DataFrame({"x": [1.0, np.inf], "y": [0, 1]})) is None
    # 30 values of y, 12 missing values elsewhere: dropping those rows may leave 18 (<= 20),
    # and does; with 3 missing values it leaves at least 27: a regression, known.
    few = pd.DataFrame({"x": [np.nan] * 12 + [0.0, 1.0, 2.0] * 6, "y": np.arange(30.0)})
    assert target_task(column_facts(few), "y", missing="drop") is None
    assert target_task(column_facts(few), "y") == "regression"
    assert prepare_table(few, "y", missing="drop").task == "classification"   # 18 values
    some = few.iloc[9:].reset_index(drop=True)          # 21 rows, 3 missing x
    assert target_task(column_facts(some), "y", missing="drop") is None      # 21 - 3 <= 20
    more = pd.DataFrame({"x": [np.nan] * 3 + [0.0, 1.0, 2.0] * 9, "y": np.arange(30.0)})
    assert target_task(column_facts(more), "y", missing="drop") == "regression"
    assert prepare_table(more, "y", missing="drop").task == "regression"     # 27 values


def _same_prepared(a: PreparedData, b: PreparedData) -> None:
    """Every field of two preparations equal (arrays element for element, the tables too)."""
    import dataclasses

    for f in dataclasses.fields(PreparedData):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "table":
            for g in ("X", "y", "weight", "variables", "target", "x_labels", "y_labels",
                      "exact"):
                xa, ya = getattr(x, g), getattr(y, g)
                if isinstance(xa, np.ndarray):
                    np.testing.assert_array_equal(xa, ya, err_msg=g)
                else:
                    assert xa == ya, g
            np.testing.assert_array_equal(x.n_levels, y.n_levels)
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        elif isinstance(x, dict) and f.name == "bin_edges":
            assert x.keys() == y.keys() and all(list(x[k]) == list(y[k]) for k in x)
        else:
            assert x == y, (f.name, x, y)


@pytest.mark.parametrize("case", ["madelon", "gauss", "ties", "tie_block", "just_over",
                                  "regression", "three_classes"])
def test_numeric_samples_prepare_as_prepare_table_does(case):
    """The replicates' fast path (every input a float of many values) gives prepare_table's
    preparation field for field: quantile edges, merged bins where quantiles tie or a bin
    stays empty, labels, the target read the same way."""
    from varimp_core.data.prepare import prepare_numeric_sample

    rng = np.random.default_rng(7)
    task = None
    if case in ("madelon", "gauss"):
        problem = get_problem(case)
        df, target, task = problem.sample(400, random_state=3), problem.target, problem.task
    else:
        n = 300
        df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.exponential(size=n)})
        target = "y"
        if case == "ties":   # a heap of zeros: the lower quantiles tie, bins are merged
            df["c"] = np.where(rng.random(n) < 0.5, 0.0, rng.normal(size=n))
            df["d"] = np.round(rng.normal(size=n), 1)
        if case == "tie_block":
            # sorted positions 0-59 below 5, 60-150 equal to 5, the rest above: the 40 %
            # quantile (position 119.6) is 5 and the 20 % one (59.8) just below it, so the
            # edges rise strictly and yet the bin [q20, 5) holds no value: _bin merges it
            low = np.sort(rng.uniform(0, 4, size=60))
            high = np.sort(rng.uniform(6, 10, size=n - 151))
            df["c"] = rng.permutation(np.concatenate([low, np.full(91, 5.0), high]))
        if case == "just_over":   # 21 distinct values: numeric, binned (20 would be discrete)
            df["c"] = rng.integers(0, 21, size=n).astype(float)
            df.loc[:20, "c"] = np.arange(21.0)
        df[target] = (df["a"] > 0).astype(int) if case != "regression" else \
            df["a"] * 2 + rng.normal(size=n)
        if case == "three_classes":
            df[target] = np.digitize(df["b"], [0.5, 1.5])
    fast = prepare_numeric_sample(df, target, max_levels=20, bins=5, task=task, source="s")
    assert fast is not None
    slow = prepare_table(df, target, max_levels=20, bins=5, task=task, source="s",
                         identifiers="keep")
    _same_prepared(fast, slow)
    if case in ("ties", "tie_block"):
        assert fast.table.n_levels[2] < 5      # the merged bins are there


@pytest.mark.parametrize("change", ["twenty_levels", "text", "integer", "missing", "inf",
                                    "missing_target"])
def test_numeric_samples_leave_other_frames_to_prepare_table(change):
    from varimp_core.data.prepare import prepare_numeric_sample

    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.normal(size=100), "y": rng.integers(0, 2, size=100)})
    if change == "twenty_levels":
        df["a"] = rng.integers(0, 20, size=100).astype(float)
    elif change == "text":
        df["b"] = "x"
    elif change == "integer":
        df["a"] = rng.integers(0, 1000, size=100)
    elif change == "missing":
        df.loc[3, "a"] = np.nan
    elif change == "inf":
        df.loc[3, "a"] = np.inf
    else:
        df["y"] = df["y"].astype(float)
        df.loc[3, "y"] = np.nan
    assert prepare_numeric_sample(df, "y") is None
