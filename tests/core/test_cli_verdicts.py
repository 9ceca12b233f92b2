"""The CLI's verdicts: ``verdicts``, ``procedure`` and ``warnings`` in the JSON of a sample."""
import json

import numpy as np
import pytest

from varimp_core.__main__ import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _csv(tmp_path, n=300):
    """``a`` is y with 10% of the rows flipped; ``copy`` is y on 97% of the rows (a leak);
    ``noise`` (4 levels) is independent of y."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.9, y, 1 - y)
    copy = np.where(rng.random(n) < 0.97, y, 1 - y)
    noise = rng.integers(0, 4, n)
    f = tmp_path / "v.csv"
    f.write_text("a,copy,noise,y\n" + "\n".join(f"{r[0]},{r[1]},{r[2]},{r[3]}"
                                                 for r in zip(a, copy, noise, y)))
    return str(f)


def test_json_of_a_sample_has_verdicts_procedure_and_warnings(capsys, tmp_path):
    argv = ("importances", "--data", _csv(tmp_path), "--target", "y", "--method", "exact",
            "--format", "json", "--n-permutations", "39", "--alpha", "0.05")
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["verdicts"] == {"a": "relevant", "copy": "relevant", "noise": "chance"}
    assert d["procedure"]["name"] == "permutation maxT (Westfall-Young)"
    assert d["procedure"]["level"] == 0.05 and d["procedure"]["n_permutations"] == 39
    assert [(w["column"], w["kind"]) for w in d["warnings"]] == [("copy", "leak")]
    assert 0.95 <= d["warnings"][0]["score"] <= 1
    assert len(d["above_chance"]) == len(d["p_adjusted"]) == 3
    assert json.loads(run(capsys, *argv)[1]) == d          # seeded: the same output again


def test_no_verdicts_and_exact_distributions_have_none(capsys, tmp_path):
    code, out, _ = run(capsys, "importances", "--data", _csv(tmp_path), "--target", "y",
                       "--format", "json", "--no-verdicts")
    assert code == 0 and not {"verdicts", "procedure", "warnings"} & set(json.loads(out))
    code, out, _ = run(capsys, "importances", "--problem", "xor", "--format", "json")
    assert code == 0 and "verdicts" not in json.loads(out)


def test_a_sampled_problem_gets_verdicts(capsys):
    code, out, _ = run(capsys, "importances", "--problem", "xor:relevant=2,irrelevant=1",
                       "--n-samples", "400", "--method", "exact", "--format", "json",
                       "--n-permutations", "19")
    d = json.loads(out)
    assert code == 0
    assert list(d["verdicts"].values()) == ["relevant", "relevant", "chance"]
    assert d["warnings"] == []


def test_too_few_permutations_leave_everything_undecided(capsys, tmp_path):
    code, out, _ = run(capsys, "importances", "--data", _csv(tmp_path), "--target", "y",
                       "--method", "exact", "--format", "json", "--n-permutations", "9")
    assert code == 0 and set(json.loads(out)["verdicts"].values()) == {"undecided"}


@pytest.mark.parametrize("flag, value, words", [("--alpha", "1.5", "--alpha"),
                                                ("--n-permutations", "0", "--n-permutations")])
def test_bad_verdict_flags_are_one_sentence(capsys, tmp_path, flag, value, words):
    code, out, err = run(capsys, "importances", "--data", _csv(tmp_path), "--target", "y",
                         "--format", "json", flag, value)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1
