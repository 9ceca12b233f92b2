"""The Data page's plain functions on uploads that are refused (issue #26)."""

from __future__ import annotations

from _pages import page_module, store_csv

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
