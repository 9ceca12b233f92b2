"""The Data page's plain functions on uploads that are refused (issue #26)."""

from __future__ import annotations

from _pages import component, page_module, store_csv

data_page = page_module("data")


def test_a_refused_upload_says_what_was_read():
    """A one-class target is refused; the page said "no table yet" though it read the
    file: the sentence now gives the 300 rows and 2 columns it read."""
    info = store_csv("x,y\n" + "\n".join(f"{i % 7},1" for i in range(300)), "one.csv")
    out = data_page.apply_choice({"source": "upload", "upload": info, "target": "y"})
    assert not out["ok"]
    assert "constant" in out["error"] and "300 rows" in out["error"]
    assert "2 columns" in out["error"] and "one.csv" in out["error"]


def test_every_built_in_problem_is_listed_with_a_description():
    """Issue #26: xor, sym and diabetes were listed by their bare names (home page, Data)."""
    from pages._framework.controls import problem_choices

    labels = {o["value"]: o["label"] for o in problem_choices()}
    for name in ("xor", "sym", "diabetes", "led", "iris"):
        assert labels[name].startswith(name + " \u2014 ") and len(labels[name]) > len(name) + 8
    assert "parity" in labels["xor"] and "442 patients" in labels["diabetes"]


def _roles_csv() -> str:
    """A table whose roles differ by target: ``score`` has missing values, and ``steps`` has
    21 values, the 21st only on those rows (numeric for every target but ``score``); an
    identifier, a constant, dates, text."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(5)
    n = 150
    score = rng.normal(size=n).round(3)
    score[:6] = np.nan
    return pd.DataFrame({
        "id": [f"R{i:05d}" for i in rng.permutation(n)],
        "steps": np.r_[np.full(6, 20), np.arange(20), rng.integers(0, 20, n - 26)],
        "flat": 7, "town": rng.choice(["Liège", "Namur", "Mons"], n),
        "joined": (np.datetime64("2020-01-01") + rng.integers(0, 700, n)).astype(str),
        "amount": rng.exponential(50, n).round(2), "score": score,
        "label": rng.choice(["yes", "no"], n)}).to_csv(index=False)


def test_a_new_target_reads_its_column_roles_and_prepares_nothing(monkeypatch):
    """Issue #27 item 4: a change of target prepared the whole table in the web request to
    find the other columns' defaults (0.6 to 0.75 s on 10,000 x 60).  The upload's job now
    works out every target's roles; the request, and the layout of a link naming only the
    target, read them, with preparing and reading the table made impossible here.  Every
    target's defaults equal the core's ``default_roles`` (``prepare_table`` for that target),
    computed before."""
    from varimp_core.data import prepare
    from pages._framework import datasource
    from pages._server import cache

    text = _roles_csv()
    info = store_csv(text, "roles.csv")
    df = prepare.read_csv_bytes(text.encode())
    expected = {t: prepare.default_roles(df, t) for t in info["columns"]}
    assert "steps" in expected["label"]["numeric"] and "steps" not in expected["score"]["numeric"]
    assert expected["flat"] == {"numeric": None, "exclude": None}

    # The summary of the link's choice, as the Data page's job leaves it in the cache (a
    # page's header counts the inputs from it; on a miss it is still worked out in the
    # request, which issue #27 lists apart).
    link = {"source": "upload", "upload": info["key"], "file": "roles.csv", "target": "score"}
    datasource.data_view(link)

    def refuse(*args, **kwargs):
        raise AssertionError("the request prepared or read the table")

    for module, name in ((prepare, "prepare_table"), (datasource, "prepare_table"),
                         (datasource, "default_roles_by_target"), (cache, "get_table")):
        monkeypatch.setattr(module, name, refuse)
    for target in info["columns"]:
        options, numeric, inputs, exclude = data_page.column_controls(target, info)
        assert numeric == (expected[target]["numeric"] or []), target
        assert exclude == (expected[target]["exclude"] or []), target
        assert target not in options and target not in inputs
    # A link that names the upload and a target, not the roles: the layout reads them too.
    page = data_page.layout(**link)
    found = {i: component(page, i).value for i in ("data-numeric", "data-exclude")}
    assert found == {"data-numeric": expected["score"]["numeric"],
                     "data-exclude": expected["score"]["exclude"]}
