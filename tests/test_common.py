"""Shared page helpers: failure sentences, views kept after Cancel."""

from pages._ui import common, jobs


def test_failure_message_adds_what_still_shows():
    exc = ValueError("K must be a whole number from 1 to 7, got 9.")
    assert jobs.failure_message(exc) == "K must be a whole number from 1 to 7, got 9."
    assert jobs.failure_message(exc, True, "The heatmaps").endswith(
        "got 9. The heatmaps still show the previous settings.")
    assert jobs.failure_message(exc, True, "The figure").endswith(
        "The figure still shows the previous settings.")
    # a library's error is not shown as is
    assert "operands" not in jobs.failure_message(ValueError("operands could not be broadcast"))


def test_a_stopped_view_is_returned_but_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    key = common.cache.key_for("test-view", 1)

    def stopped():
        raise common.Stopped({"done": 2})

    assert common.cached_view(key, stopped) == {"done": 2, "partial": True}
    assert common.cache.get_json(key) is None
    assert common.cached_view(key, lambda: {"done": 5}) == {"done": 5, "partial": False}
    assert common.cached_view(key, stopped) == {"done": 5, "partial": False}  # read back
    assert common.keep_view({"done": 5, "partial": False}, key, "a", "ns") == (key, False)
    where, partial = common.keep_view({"done": 2, "partial": True}, key, "a", "ns")
    assert partial and where != key and common.cache.get_json(where)["done"] == 2
