"""Shared page helpers: failure sentences, studies kept only when they finished."""

from pages._server import cache, jobs

from pages._framework import studies


def test_failure_message_adds_what_still_shows():
    exc = ValueError("K must be a whole number from 1 to 7, got 9.")
    assert jobs.failure_message(exc) == "K must be a whole number from 1 to 7, got 9."
    assert jobs.failure_message(exc, True, "The heatmaps").endswith(
        "got 9. The heatmaps still show the previous settings.")
    assert jobs.failure_message(exc, True, "The figure").endswith(
        "The figure still shows the previous settings.")
    # a library's error is not shown as is
    assert "operands" not in jobs.failure_message(ValueError("operands could not be broadcast"))


def test_a_stopped_study_is_returned_but_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    assert studies.cached_study("test-view", 1, lambda: {"done": 2, "partial": True}) == \
        {"done": 2, "partial": True}
    assert cache.get_json(studies.study_key("test-view", 1)) is None
    assert studies.cached_study("test-view", 1, lambda: {"done": 5}) == {"done": 5}
    assert studies.cached_study("test-view", 1, lambda: {"done": 2, "partial": True}) == \
        {"done": 5}                                                           # read back
