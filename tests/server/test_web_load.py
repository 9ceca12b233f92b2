"""The app under gunicorn with ten users at once: every answer complete and right.

A bounded smoke run of ``bench/bench_web.py``: the same client (real
``/_dash-update-component`` requests, background callbacks polled as the
renderer polls them) against ``gunicorn app:server`` with 2 workers on a free
loopback port.  Nothing here asserts timing; the benchmark measures it.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from bench.bench_web import (DashClient, check_answer, control_change, control_load,
                             expected_importances, page_load, serve)

pytestmark = pytest.mark.slow

CLIENTS = 10
SECONDS = 5.0


@pytest.fixture(scope="module")
def expected():
    return expected_importances()


@pytest.fixture(scope="module")
def server(tmp_path_factory, expected):
    """gunicorn with its own cache, warmed with each distinct request once."""
    with serve(workers=2, cache_dir=str(tmp_path_factory.mktemp("web-cache"))) as base:
        client = DashClient(base)
        page = client.open_page("/importances")
        for k, values in expected.items():
            assert check_answer(control_change(client, page, k), values) is None, k
        client.close()
        yield base


def test_concurrent_control_changes_all_get_their_figure(server, expected):
    tally = control_load(server, clients=CLIENTS, seconds=SECONDS, expected=expected)
    assert tally.errors == []
    assert len(tally.latencies) >= CLIENTS


def test_identical_requests_at_once_all_get_their_figure(server, expected):
    # Dash keyed a background result by the callback's arguments and deleted it
    # once read: of ten users sending the same request at once, most got no update.
    users = [DashClient(server) for _ in range(CLIENTS)]
    pages = [u.open_page("/importances") for u in users]
    barrier = threading.Barrier(CLIENTS)
    answers: list = [None] * CLIENTS

    def send(i):
        barrier.wait()
        answers[i] = control_change(users[i], pages[i], 3)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for u in users:
        u.close()
    assert [check_answer(a, expected[3]) for a in answers] == [None] * CLIENTS


def test_concurrent_page_loads_of_every_page(server):
    paths = ["/", *DashClient(server).open_page("/").nav_paths]  # the home page and the nav's
    assert "/importances" in paths and "/data" in paths
    tally = page_load(server, clients=CLIENTS, seconds=3.0, paths=paths)
    assert tally.errors == []
    assert len(tally.latencies) >= CLIENTS


def test_page_state_from_the_routing_callback(server):
    client = DashClient(server)
    page = client.open_page("/importances", "?problem=xor:relevant=2,irrelevant=1&K=2")
    assert page.value("imp-k", "value") == 2
    assert page.value("imp-data", "data")["params"]["problem"] == "xor:irrelevant=1"
    answer = control_change(client, page, 2, values={})
    from varimp_core.api import compute_importances, load_data

    xor = compute_importances(load_data(problem="xor:relevant=2,irrelevant=1"),
                              method="exact", max_features=2)
    assert check_answer(answer, xor.importances) is None
    np.testing.assert_allclose(xor.importances[:2], 0.5)
    client.close()


def test_job_result_keys_are_per_request():
    from pages._server import jobs

    manager, _ = jobs.make_manager()
    args = ["exact", 2, None]
    keys = {manager.build_cache_key(test_job_result_keys_are_per_request, args, [], None)
            for _ in range(3)}
    assert len(keys) == 3
