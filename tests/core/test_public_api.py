"""The public face of varimp_core: every exported name is importable and documented, and the
examples in the docstrings run."""
import doctest
import importlib
import inspect

import pytest

import varimp_core

# The Examples of the package docstring, of every public function and class, and of the
# modules whose docstrings carry examples (serialize, api).
_MODULES = ("varimp_core", "varimp_core.api", "varimp_core.serialize")


def test_all_names_are_importable_and_documented():
    assert "compute_importances" in varimp_core.__all__ and "load_data" in varimp_core.__all__
    assert len(set(varimp_core.__all__)) == len(varimp_core.__all__)
    for name in varimp_core.__all__:
        obj = getattr(varimp_core, name)            # importable from the package
        if name == "__version__":
            assert isinstance(obj, str)
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"
            assert importlib.import_module(obj.__module__) is not varimp_core, \
                f"{name} should be defined in its own module, not the package"


def test_every_result_type_round_trips_through_a_dict():
    for name in varimp_core.__all__:
        obj = getattr(varimp_core, name)
        if inspect.isclass(obj) and (name.endswith(("Result", "Null", "Selection", "Fit"))
                                     or name in ("LocalImportance", "Interactions",
                                                 "PartialImportance", "ImportanceOverLabels",
                                                 "PartialDependence", "PartialDependenceSet",
                                                 "DependenceOverResponses")):
            assert callable(getattr(obj, "to_dict", None)), name
            assert inspect.ismethod(getattr(obj, "from_dict", None)), name   # a classmethod


def _doctests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    seen, tests = set(), []
    for modname in _MODULES:
        module = importlib.import_module(modname)
        for t in finder.find(module, modname):
            if t.name not in seen and t.examples:
                seen.add(t.name)
                tests.append(t)
    for name in varimp_core.__all__:
        obj = getattr(varimp_core, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        module = importlib.import_module(obj.__module__)
        for t in finder.find(obj, f"{obj.__module__}.{obj.__qualname__}", module=module,
                             globs=vars(module)):
            if t.name not in seen and t.examples:
                seen.add(t.name)
                tests.append(t)
    return tests


_TESTS = _doctests()


def test_the_package_docstring_has_examples():
    assert any(t.name == "varimp_core" for t in _TESTS)


@pytest.mark.parametrize("test", _TESTS, ids=[t.name for t in _TESTS])
def test_docstring_examples_run(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    test.globs = dict(test.globs)
    runner.run(test, out=lambda s: None)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{test.name}: {result.failed} of {result.attempted} examples failed"
