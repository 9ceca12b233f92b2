"""The command line is a public contract: flags, JSON keys, exit status 2 on errors."""

import itertools
import json
import math

import numpy as np
import pytest

from _tables import TABLE2_EQN3, led_rows
from varimp_core.__main__ import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_importances_json_contract(capsys):
    code, out, err = run(capsys, "importances", "--problem", "led", "--format", "json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert set(d) >= {"variables", "importances", "importances_std", "by_degree", "information",
                      "parameters"}
    assert d["variables"] == [f"X{j}" for j in range(1, 8)]
    np.testing.assert_array_equal(np.floor(np.array(d["importances"]) * 1000) / 1000, TABLE2_EQN3)
    assert d["importances_std"] is None
    assert np.array(d["by_degree"]).shape == (7, 7)
    assert d["information"] == pytest.approx(math.log2(10))


def test_terms(capsys):
    code, out, _ = run(capsys, "importances", "--problem", "xor:relevant=2", "--terms",
                       "--format", "json")
    terms = json.loads(out)["terms"]
    assert {"variable": "X1", "conditioning": ["X2"], "degree": 1, "weight": 0.5, "cmi": 1.0} in terms


def test_forest_has_std_and_csv(capsys, tmp_path):
    code, out, _ = run(capsys, "importances", "--problem", "sym", "--method", "forest",
                       "--n-estimators", "50", "--format", "json")
    assert code == 0 and len(json.loads(out)["importances_std"]) == 2
    code, out, _ = run(capsys, "importances", "--problem", "sym", "--format", "csv")
    assert out.splitlines()[0].startswith("variable,importance")


def test_csv_data_file(capsys, tmp_path):
    f = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    f.write_text("a,b,y\n" + "\n".join(f"{x},{z},{x}" for x, z in zip(a, b)))
    code, out, _ = run(capsys, "importances", "--data", str(f), "--target", "y", "--format", "json")
    d = json.loads(out)
    assert code == 0 and d["variables"] == ["a", "b"]
    assert d["importances"][0] > 0.9 and d["importances"][1] < 0.05


def test_relevance_json(capsys):
    code, out, _ = run(capsys, "relevance", "--problem", "xor:relevant=2,irrelevant=1", "--format", "json")
    assert json.loads(out) == {"variables": ["X1", "X2", "X3"],
                               "relevance": ["strong", "strong", "irrelevant"],
                               "degree": [1, 1, None], "markov_boundary": ["X1", "X2"],
                               "minimal_boundary": ["X1", "X2"], "boundary_unique": True}


def test_relevance_json_has_the_minimal_boundary_and_whether_it_is_unique(capsys):
    # LED is not strictly positive (10 of 128 cells), so markov_boundary stays null; the
    # boundary is found by brute force here: Y is a different digit on each of the 10 rows,
    # so M is a Markov blanket iff the segments in M tell all 10 rows apart.
    X, _ = led_rows()
    blankets = [set(c) for k in range(8) for c in itertools.combinations(range(7), k)
                if len({tuple(row[list(c)]) for row in X}) == 10]
    boundaries = [b for b in blankets if not any(o < b for o in blankets)]
    smallest = min(boundaries, key=len)
    assert [f"X{j + 1}" for j in sorted(smallest)] == ["X1", "X2", "X3", "X4", "X5"]
    code, out, _ = run(capsys, "relevance", "--problem", "led", "--format", "json")
    d = json.loads(out)
    assert code == 0 and d["markov_boundary"] is None
    assert d["minimal_boundary"] == ["X1", "X2", "X3", "X4", "X5"]
    assert d["boundary_unique"] is (len(boundaries) == 1) is True
    code, out, _ = run(capsys, "relevance", "--problem", "led")
    assert out.rstrip().endswith("X5 (the only one, although the distribution is not "
                                 "strictly positive)")


def test_problems_and_version(capsys):
    code, out, _ = run(capsys, "problems")
    assert code == 0 and "led" in out and "strobl" in out
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0


@pytest.mark.parametrize("argv", [
    ["importances", "--problem", "nope"],
    ["importances", "--problem", "led", "--max-features", "9"],
    ["importances", "--problem", "madelon", "--method", "exact"],
    ["importances", "--data", "/no/such.csv", "--target", "y"],
    ["importances", "--problem", "led", "--method", "forest", "--terms"],
])
def test_errors_are_one_sentence_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["importances"])
    assert e.value.code == 2


def test_csv_export_neutralises_formula_names(capsys, tmp_path):
    f = tmp_path / "d.csv"
    rows = "\n".join(f"{i % 2},{i % 3},{i % 2}" for i in range(60))
    f.write_text("=cmd|' /C calc'!A0,@b,y\n" + rows)
    code, out, _ = run(capsys, "importances", "--data", str(f), "--target", "y", "--format", "csv")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("\"'=cmd") or lines[1].startswith("'=cmd")
    assert lines[2].startswith("'@b")


def _balanced_copy_csv(tmp_path):
    # y = a with a balanced: a tree grown on all 200 rows splits on a (K = p = 2) at the root
    # and gains H(Y) = 1 bit exactly; b is independent of y by construction (zero gain).
    f = tmp_path / "copy.csv"
    rows = [(i % 2, (i // 2) % 2, i % 2) for i in range(200)]
    f.write_text("a,b,y\n" + "\n".join(f"{a},{b},{y}" for a, b, y in rows))
    return str(f)


def test_no_bootstrap_grows_every_tree_on_all_rows(capsys, tmp_path):
    base = ("importances", "--data", _balanced_copy_csv(tmp_path), "--target", "y", "--method",
            "sklearn-rf", "--max-features", "2", "--criterion", "entropy", "--n-estimators",
            "30", "--format", "json", "--no-verdicts")   # 99 regrowths each: not this test's subject
    code, out, err = run(capsys, *base, "--no-bootstrap")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["parameters"]["bootstrap"] is False
    np.testing.assert_allclose(d["importances"], [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(d["importances_std"], [0.0, 0.0], atol=1e-12)
    for flags in ((), ("--bootstrap",)):   # sklearn-rf's default, and the old flag, still resample
        code, out, _ = run(capsys, *base, *flags)
        d = json.loads(out)
        assert code == 0 and d["parameters"]["bootstrap"] is True
        assert d["importances_std"][0] > 1e-3   # H(Y) of each bootstrap sample varies


@pytest.mark.parametrize("method", ["exact", "exact-rf"])
@pytest.mark.parametrize("flag", ["--bootstrap", "--no-bootstrap"])
def test_bootstrap_flags_on_an_exact_method_are_refused(capsys, method, flag):
    """An exact method has no bootstrap: the flag is refused with a sentence, not ignored."""
    code, out, err = run(capsys, "importances", "--problem", "xor", "--method", method, flag)
    assert code != 0 and out == ""
    assert "apply to the sampled methods" in err and "Traceback" not in err


def _analyst_csv(tmp_path):
    """40 rows: a row number, a date, a text column with 3 blanks, a copy of y with 2 blanks.

    By construction: ``row`` is a monotone integer index (excluded), ``day`` a date
    column, ``island`` misses rows 1, 2, 3 and ``x`` rows 0 and 5.
    """
    f = tmp_path / "analyst.csv"
    lines = ["row,day,island,x,y"]
    for i in range(40):
        island = "" if i in (1, 2, 3) else ("Biscoe", "Dream")[i % 2]
        x = "" if i in (0, 5) else str(i % 2)
        lines.append(f"{i + 1},2024-01-{i % 28 + 1:02d},{island},{x},{i % 2}")
    f.write_text("\n".join(lines) + "\n")
    return str(f)


def test_missing_exclude_and_dates_options(capsys, tmp_path):
    base = ("importances", "--data", _analyst_csv(tmp_path), "--target", "y", "--format",
            "json")
    code, out, err = run(capsys, *base)
    assert code == 0 and "note: Excluded: 'row'" in err
    d = json.loads(out)
    # Every day is in January 2024: only the weekday changes, the constant year and month
    # are no inputs.
    assert d["variables"] == ["day_weekday", "island", "x"]
    assert [e["column"] for e in d["excluded"]] == ["row"]
    assert "monotone integer index" in d["excluded"][0]["reason"]
    assert d["missing"] == {"island": 3, "x": 2}
    code, out, _ = run(capsys, *base, "--missing", "drop", "--exclude", "island,day")
    d = json.loads(out)
    assert code == 0 and d["variables"] == ["x"]
    assert {e["column"]: e["reason"] for e in d["excluded"]} == {
        "island": "excluded by choice", "day": "excluded by choice",
        "row": d["excluded"][-1]["reason"]}
    # Only x's blanks count once island is excluded: rows 0 (y=0) and 5 (y=1) are dropped,
    # leaving 19 zeros and 19 ones; x copies y there, so Imp(x) = I(x;Y) = H(Y) = 1 bit.
    assert d["importances"] == pytest.approx([1.0])
    code, out, _ = run(capsys, *base, "--dates", "exclude")
    assert json.loads(out)["variables"] == ["island", "x"]


@pytest.mark.parametrize("argv, words", [
    (["--missing", "refuse"], "'island', 'x' have missing values (3, 2; 5 incomplete rows)"),
    (["--exclude", "nope"], "'nope'"),
    (["--exclude", "y"], "cannot be excluded"),
])
def test_data_option_refusals_are_one_sentence(capsys, tmp_path, argv, words):
    code, out, err = run(capsys, "importances", "--data", _analyst_csv(tmp_path), "--target",
                         "y", *argv)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1


def test_exclude_needs_a_data_file(capsys):
    code, out, err = run(capsys, "importances", "--problem", "led", "--exclude", "X1")
    assert code == 2 and "--exclude applies to --data" in err


def test_serve_becomes_gunicorn_or_the_dev_server_and_refuses_bad_values(capsys, monkeypatch):
    """What `varimp serve` execs (tests/test_package.py starts it for real, installed)."""
    import sys

    from varimp_core.__main__ import _serve_command, build_parser

    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    cmd, env = _serve_command(build_parser().parse_args(["serve", "--port", "8123"]))
    assert cmd == [sys.executable, "-m", "gunicorn", "app:server", "--bind", "127.0.0.1:8123",
                   "--workers", "3", "--timeout", "120"]
    cmd, env = _serve_command(build_parser().parse_args(
        ["serve", "--dev", "--host", "::1", "--port", "9000"]))
    assert cmd[-1] == "import app; app.main()"
    assert (env["VARIMP_HOST"], env["VARIMP_PORT"]) == ("::1", "9000")
    cmd, _ = _serve_command(build_parser().parse_args(["serve", "--host", "::1", "--workers", "1"]))
    assert cmd[cmd.index("--bind") + 1] == "[::1]:8050" and cmd[cmd.index("--workers") + 1] == "1"
    monkeypatch.setenv("WEB_CONCURRENCY", "many")
    for argv, sentence in ((["serve"], "WEB_CONCURRENCY must be a whole number"),
                           (["serve", "--workers", "0"], "--workers must be at least 1"),
                           (["serve", "--port", "70000"], "--port must be from 1 to 65535")):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and err.startswith("error: " + sentence), err
