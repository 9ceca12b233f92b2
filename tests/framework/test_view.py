"""JobView (:mod:`pages._framework.view`): a job that runs out of memory names the input that
most likely caused it (issue #26); a control change writes one result cache entry family and
serialises each core result once, a hit decodes it once (issue #25)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from _pages import component, first_peek, page_module, upload_frame

from pages._framework import datasource
from pages._framework.view import MANY_LEVELS, memory_hint
from pages._server import cache, jobs


def _store(params: dict) -> dict:
    p = datasource.canonical_params(params)
    return {"params": p, "query": datasource.data_query(p)}


def _customers(rows: int = 600, names: int = 300) -> pd.DataFrame:
    """``customer``: 300 names, two rows each (name-like); ``region``: 4 levels."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({"region": rng.choice(list("NESW"), rows),
                         "customer": [f"name{i % names:03d}" for i in range(rows)],
                         "y": rng.integers(0, 2, rows)})


def test_a_kept_name_like_column_is_named_when_memory_runs_out():
    params = {**upload_frame(_customers(), "customers.csv"), "exclude": []}   # kept by a click
    hint = memory_hint(_store(params))
    assert hint is not None and "'customer' has 300 distinct values" in hint
    message = jobs.failure_message(MemoryError(), shown=False, hint=hint)
    assert message.startswith("This computation needs more memory")
    assert message.endswith(hint)


def test_no_column_is_blamed_when_none_has_many_values():
    # By default the name-like column is excluded: region's 4 values are no cause.
    assert memory_hint(_store(upload_frame(_customers(), "customers.csv"))) is None
    assert memory_hint(_store({"problem": "led"})) is None
    assert memory_hint(None) is None                      # unreadable: the refusal alone
    # Exactly MANY_LEVELS values is not "many"; one more is.
    at = _customers(rows=2 * (MANY_LEVELS + 1), names=MANY_LEVELS)
    assert memory_hint(_store({**upload_frame(at, "at.csv"), "exclude": []})) is None
    over = _customers(rows=2 * (MANY_LEVELS + 1), names=MANY_LEVELS + 1)
    assert memory_hint(_store({**upload_frame(over, "over.csv"), "exclude": []})) is not None


# -- one cache, one serialisation (issue #25, item 3) -----------------------------------------
def _k_change(monkeypatch, tmp_path, K=2):
    """A fresh cache, counters on the core's codecs, and the Importances page's K change as
    the browser makes it: the plain callback (a miss), then the job."""
    import collections

    from varimp_core.exact.moments import ImportanceMoments
    from varimp_core.result import ImportanceResult
    from pages._framework.datachoice import DataChoice

    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))   # nothing cached yet
    imp = page_module("importances")
    calls = collections.Counter()
    for cls in (ImportanceResult, ImportanceMoments):
        for name in ("to_dict", "from_dict"):
            real = getattr(cls, name)
            if name == "from_dict":
                def spy(c, d, _real=real.__func__, _n=f"{cls.__name__}.{name}"):
                    calls[_n] += 1
                    return _real(c, d)
                monkeypatch.setattr(cls, name, classmethod(spy))
            else:
                def spy(self, _real=real, _n=f"{cls.__name__}.{name}"):
                    calls[_n] += 1
                    return _real(self)
                monkeypatch.setattr(cls, name, spy)
    written = []
    real_set = cache.get_cache().set

    def spy_set(key, value, *args, **kwargs):
        written.append(key)
        return real_set(key, value, *args, **kwargs)
    monkeypatch.setattr(cache.get_cache(), "set", spy_set)
    store = DataChoice.from_page({"problem": "led"})[0].to_store()
    values = {"method": "exact", "max_features": K, "max_depth": None, "criterion": "entropy",
              "k_semantics": "id3", "spread": "se", "order": "columns", "show": "above"}
    args = [values.get(n) for n in imp.VIEW.params.names] + [store]
    out = imp.VIEW.peek(*args)
    miss = out[len(imp.VIEW.outputs) + len(imp.VIEW.params.names) + 1]
    assert isinstance(miss, dict)                       # a miss: the job runs
    result, settings, data = imp.VIEW.run(miss["values"], miss["data"], {}, jobs.Progress(None))
    drawn = imp.VIEW.draw_and_keep(result, settings, data, {})
    return imp, calls, written, (result, settings, data, drawn, args)


def test_a_k_change_serialises_its_importances_once_in_one_entry_family(monkeypatch, tmp_path):
    from pages._framework import parts, results

    imp, calls, written, (result, settings, data, drawn, _) = _k_change(monkeypatch, tmp_path)
    # One serialisation of each core result, none read back: render drew the computed objects.
    assert calls == {"ImportanceResult.to_dict": 1, "ImportanceMoments.to_dict": 1}
    assert result["result"].importances.shape == (7,)
    # The entries written: the shared importances and moments, the page's result, its drawing.
    key = imp.VIEW.key(data, settings, {})
    kwargs = imp.core_settings(settings, "classification")
    part = parts.part_key("importances", data, kwargs)
    assert sorted(written) == sorted([part, parts.part_key(
        "moments", data, results.moments_kwargs(result["result"])), key,
        imp.VIEW.drawn_key(data, settings, {})])
    # The page's entry refers to the shared part: no second serialised copy.
    stored = cache.get_json(key)
    assert stored["result"] == {"__part__": part} and parts.part_keys(stored) == [
        part, parts.part_key("moments", data, results.moments_kwargs(result["result"]))]
    # ... the very entry the other pages read (Decomposition's test of that sharing).
    np.testing.assert_array_equal(results.peek_importances(data.as_dict, kwargs).importances,
                                  result["result"].importances)


def test_a_cache_hit_decodes_its_result_once(monkeypatch, tmp_path):
    imp, calls, _, (result, settings, data, _, _) = _k_change(monkeypatch, tmp_path)
    calls.clear()
    hit = imp.VIEW.cached(data, settings)
    assert calls == {"ImportanceResult.from_dict": 1, "ImportanceMoments.from_dict": 1}
    np.testing.assert_array_equal(hit["result"].importances, result["result"].importances)
    assert hit["information"] == result["information"] and hit["notes"] == result["notes"]


def test_an_evicted_shared_part_makes_the_page_result_a_miss_recomputed(monkeypatch, tmp_path):
    from pages._framework import parts

    imp, calls, _, (result, settings, data, _, args) = _k_change(monkeypatch, tmp_path)
    part = parts.part_key("importances", data, imp.core_settings(settings, "classification"))
    cache.get_cache().delete(part)                      # the LRU evicted it
    n = len(imp.VIEW.outputs) + len(imp.VIEW.params.names)
    kept = imp.VIEW.peek(*args)          # the kept drawing is whole: drawn, no error
    assert kept[n + 3] == "Done (cached)." and kept[-2] == ""
    assert imp.VIEW.cached(data, settings) is None      # the result itself: a miss ...
    assert cache.get_json(imp.VIEW.key(data, settings, {})) is None   # ... forgotten,
    assert cache.get_json(imp.VIEW.drawn_key(data, settings, {})) is None   # with its drawing
    out = imp.VIEW.peek(*args)                          # so the page computes it again
    assert isinstance(out[n + 1], dict) and out[-2] == ""
    again, _, _ = imp.VIEW.run(out[n + 1]["values"], out[n + 1]["data"], {},
                               jobs.Progress(None))
    assert imp.VIEW.cached(data, settings) is not None
    np.testing.assert_allclose(again["result"].importances, result["result"].importances)
    assert cache.get_json(part) is not None


def test_a_small_exact_problem_is_drawn_by_the_plain_callback_without_a_job(
        monkeypatch, tmp_path):
    """Issue 26 (a demo's first figure within 2 s): a built-in exact problem of at most 11
    inputs is computed in the request (``JobView(quick=...)``), skipping a job's start and
    polls; a larger or sampled one still goes to the job.  Table 2's K = 1 column is Eqn 3,
    the paper's values typed from Louppe et al. (2013), Table 2."""
    import dash

    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))   # nothing cached yet
    masking, decomp = page_module("masking"), page_module("decomposition")
    out = first_peek(masking.EXACT, masking.layout(problem="led"))
    assert out[-5] is dash.no_update and out[-3].startswith("Done in "), out[-3]
    names = [o[0] + "." + o[1] for o in masking.EXACT.outputs]
    rows = out[names.index("masking-table.rowData")]
    k1 = {r["variable"]: r for r in rows if str(r.get("variable", "")).startswith("X")}
    paper = {"X1": 0.412, "X2": 0.581, "X3": 0.531, "X4": 0.542, "X5": 0.656, "X6": 0.225,
             "X7": 0.372}
    column = next(c for c in rows[0] if c.replace(" ", "") in ("K=1", "K1", "k1"))
    for name, value in paper.items():
        assert abs(k1[name][column] - value) < 0.0015, (name, k1[name][column])
    assert masking.EXACT.cached(*masking.EXACT.check(
        {n: component(masking.layout(problem="led"), masking.EXACT.params.id(n)).value
         for n in masking.EXACT.params.names},
        component(masking.layout(problem="led"), masking.EXACT.data_store).data)) is not None

    out = first_peek(decomp.VIEW, decomp.layout(problem="led", K="1", depth="2"))
    assert out[-5] is dash.no_update and out[-3].startswith("Done in "), out[-3]

    # Theorem 5's demo (11 inputs, every K): in the request too.  Theorem 5: the four fair
    # bits leave the K = 1 importances of the LED's inputs as in Table 2 and get 0.
    out = first_peek(masking.EXACT, masking.layout(problem="led:irrelevant=4"))
    assert out[-5] is dash.no_update and out[-3].startswith("Done in "), out[-3]
    rows = {r["variable"]: r for r in out[names.index("masking-table.rowData")]
            if str(r.get("variable", "")).startswith("X")}
    assert sorted(rows, key=lambda v: int(v[1:])) == [f"X{i}" for i in range(1, 12)]
    for name, value in paper.items():
        assert abs(rows[name][column] - value) < 0.0015, (name, rows[name][column])
    for name in ("X8", "X9", "X10", "X11"):
        assert abs(rows[name][column]) < 1e-9, (name, rows[name][column])

    # Why this row's exact demos: in the request; its forest methods in a job.
    explain = page_module("explain")
    for query in ({"problem": "led:irrelevant=2", "method": "exact", "row": "0"},
                  {"problem": "xor:irrelevant=2", "method": "exact", "row": "0"}):
        out = first_peek(explain.VIEW, explain.layout(**query))
        assert out[-5] is dash.no_update and out[-3].startswith("Done in "), (query, out[-3])
    assert isinstance(first_peek(explain.VIEW, explain.layout(
        problem="led:irrelevant=2", method="et", row="0"))[-5], dict)

    # Larger (12 inputs; 11 and a noisy copy) or sampled: the job computes them.
    for layout in (masking.layout(problem="led:irrelevant=5"),
                   masking.layout(problem="led:irrelevant=4", copy="X5")):
        assert isinstance(first_peek(masking.EXACT, layout)[-5], dict)
    for layout in (decomp.layout(problem="led:irrelevant=5"),
                   decomp.layout(problem="led", sampling="sample", n="300")):
        assert isinstance(first_peek(decomp.VIEW, layout)[-5], dict)
    for query in ({"problem": "led:irrelevant=5"},             # 12 inputs
                  {"problem": "sym:irrelevant=8", "trees": "100"}):  # 1,536 rows x 100 trees
        assert isinstance(first_peek(explain.VIEW, explain.layout(
            **query, method="exact", row="0"))[-5], dict), query
