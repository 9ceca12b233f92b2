"""The compiled multiway forest (issue #30): the same law whichever path the weights take,
the same forest for every n_jobs when chunks are small, and a kernel that runs uncompiled."""

import dataclasses

import numpy as np
import pytest

from varimp_core.data.table import DiscreteTable
from varimp_core.forests import multiway_kernel as kern
from varimp_core.forests.multiway import TREES_PER_CHUNK, grow_forest, trees_per_chunk


def _sample(n=3000, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, p))
    y = (X[:, 0] + X[:, 1] * (X[:, 2] > 0) + rng.integers(0, 2, n)) % 3
    return DiscreteTable.from_codes(X, y)


def _scaled(table, factor):
    """The same rows with every weight times ``factor`` (not whole counts any more)."""
    return dataclasses.replace(table, weight=table.weight * factor)


@pytest.mark.parametrize("criterion", ["entropy", "gini"])
@pytest.mark.parametrize("semantics", ["id3", "sklearn"])
def test_whole_counts_and_fractions_grow_the_same_forest(criterion, semantics):
    """A sample's counts are grown as counts (entropies from a k log2 k table); the same
    rows with fractional weights take the logarithm path.  Same draws, same trees."""
    t = _sample()
    a = grow_forest(t, n_estimators=40, max_features=2, k_semantics=semantics,
                    criterion=criterion, random_state=3)
    b = grow_forest(_scaled(t, 0.37), n_estimators=40, max_features=2, k_semantics=semantics,
                    criterion=criterion, random_state=3)
    np.testing.assert_allclose(a.per_tree, b.per_tree, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.by_degree, b.by_degree, rtol=1e-9, atol=1e-12)


def test_chunk_size_follows_the_work_only():
    assert trees_per_chunk(10, 7) == TREES_PER_CHUNK            # the paper's LED: 64 trees
    assert 1 <= trees_per_chunk(20_000, 17) < 16                # many distinct rows: small chunks
    assert trees_per_chunk(10 ** 7, 30) == 1
    assert trees_per_chunk(20_000, 1) > trees_per_chunk(20_000, 17)   # stumps are cheap


@pytest.mark.parametrize("bootstrap", [False, True])
def test_small_chunks_in_threads_change_nothing(bootstrap):
    t = _sample(n=40_000, p=8, seed=1)
    assert 3 * trees_per_chunk(t.n_rows, 8) <= 60       # three chunks or more
    kw = dict(n_estimators=60, max_features=3, bootstrap=bootstrap, random_state=5)
    one = grow_forest(t, **kw)
    two = grow_forest(t, n_jobs=2, **kw)
    np.testing.assert_array_equal(one.per_tree, two.per_tree)
    np.testing.assert_array_equal(one.by_degree, two.by_degree)


def test_uncompiled_kernel_grows_the_same_trees(monkeypatch):
    """What runs where numba is missing: the kernel's Python source, same numbers."""
    assert kern.HAVE_NUMBA, "numba is a pinned dependency (requirements.txt): it must import"
    t = _sample(n=300, p=4, seed=2)
    kw = dict(n_estimators=8, max_features=2, criterion="gini", random_state=1)
    compiled = grow_forest(t, **kw)
    monkeypatch.setattr(kern, "grow_level", kern.grow_level.py_func)
    plain = grow_forest(t, **kw)
    np.testing.assert_allclose(plain.per_tree, compiled.per_tree, rtol=1e-12, atol=1e-15)


def test_random_stream_is_uniform():
    state = np.array([12345], dtype=np.uint64)
    draws = np.array([kern._below(state, 7) for _ in range(7000)])
    counts = np.bincount(draws, minlength=7)
    assert counts.min() > 850 and counts.max() < 1150
    u = np.array([kern._uniform(state) for _ in range(2000)])
    assert 0.0 <= u.min() and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.03



class _Alarm(Exception):
    pass


def test_an_exception_from_a_signal_handler_arrives_as_itself(monkeypatch):
    """A job's time-limit alarm fires wherever the forest is; in numba's dispatcher the
    handler's exception came out as ``SystemError: CPUDispatcher(...) returned a result
    with an exception set`` (its cause the handler's), and the page said "something went
    wrong" instead of the time-limit sentence.  The dispatcher's wrapping, as observed
    (SystemError from SystemError from the handler's exception), is imitated here."""
    def dispatched(*args):
        try:
            try:
                raise _Alarm()
            except _Alarm as alarm:
                raise SystemError("<function _numba_unpickle> returned a result") from alarm
        except SystemError as inner:
            raise SystemError("CPUDispatcher(grow_level) returned a result") from inner

    monkeypatch.setattr(kern, "grow_level", dispatched)
    with pytest.raises(_Alarm):
        grow_forest(_sample(n=300, p=4), n_estimators=2, random_state=0)


def test_a_system_error_of_its_own_stays_one(monkeypatch):
    def broken(*args):
        raise SystemError("a kernel's own failure")

    monkeypatch.setattr(kern, "grow_level", broken)
    with pytest.raises(SystemError, match="own failure"):
        grow_forest(_sample(n=300, p=4), n_estimators=2, random_state=0)
