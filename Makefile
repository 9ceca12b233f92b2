# varimp: `make run` (PORT=8051 HOST=0.0.0.0 to change) serves the dashboard, `make test` runs every test (browser ones too).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
HOST ?= 127.0.0.1
PORT ?= 8050
BENCH_ARGS ?=

.PHONY: run serve test bench browser redis clean-cache

$(PY):
	$(PYTHON) -m venv $(VENV)

# The multiway forest's numba kernel is compiled once into numba's on-disk cache after an
# install, so that neither the first page nor the first test of a process waits for it.
WARM_KERNEL = -$(PY) -c "from varimp_core.api import compute_importances, load_data; compute_importances(load_data(problem='led'), method='forest', n_estimators=2)"

# Reinstall only when a requirements file is newer than its stamp.
$(VENV)/.stamp-run: requirements.txt | $(PY)
	$(PIP) install --disable-pip-version-check -q -r requirements.txt
	$(WARM_KERNEL)
	touch $@

$(VENV)/.stamp-test: requirements.txt requirements-test.txt | $(PY)
	$(PIP) install --disable-pip-version-check -q -r requirements-test.txt
	$(WARM_KERNEL)
	touch $@ $(VENV)/.stamp-run

# A signing secret kept between runs (VARIMP_SECRET_KEY; see the README), made once.
SECRET_FILE ?= .varimp-secret
$(SECRET_FILE):
	@umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_hex(32))" > $@

run: $(VENV)/.stamp-run $(SECRET_FILE)
	VARIMP_SECRET_KEY=$${VARIMP_SECRET_KEY:-$$(cat $(SECRET_FILE))} VARIMP_PORT=$(PORT) VARIMP_HOST=$(HOST) \
		$(PY) app.py

# gthread workers: a slow client holds one of WEB_THREADS threads, not a whole worker.
serve: $(VENV)/.stamp-run $(SECRET_FILE)
	VARIMP_SECRET_KEY=$${VARIMP_SECRET_KEY:-$$(cat $(SECRET_FILE))} $(VENV)/bin/gunicorn app:server --workers $${WEB_CONCURRENCY:-2} \
		--worker-class gthread --threads $${WEB_THREADS:-4} --timeout 120 --graceful-timeout 30 \
		--keep-alive 5 --bind $(HOST):$(PORT)

# Debian's Chromium and its driver for the browser tests (installed only when missing).
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		echo "Installing chromium and chromium-driver with apt-get"; \
		$$SUDO apt-get update && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			chromium chromium-driver; \
	fi

# Debian's redis-server for the scale-out tests and bench/bench_fanout.py (each starts its own).
redis:
	@if ! command -v redis-server >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		echo "Installing redis-server with apt-get"; \
		$$SUDO apt-get update && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			redis-server; \
	fi

# Tests run in TEST_WORKERS processes (pytest-xdist), a test file per process at a time, the
# long files first (tests/conftest.py): most of a browser test is waiting for the page, so two
# share two cores well.  Tests marked
# `serial` time requests, and would time the others beside them: they run alone, after.
# `timeout` turns a hang into a failure that says so.  A browser test whose Chromium itself
# died (its session gone, its renderer silent) runs once more, shown as R in the report; any
# other failure, the app's, fails the run at once.
TEST_WORKERS ?= 2
PYTEST = $(VENV)/bin/pytest tests --webdriver Chrome --headless -p no:cacheprovider \
	--reruns 1 --only-rerun InvalidSessionIdException \
	--only-rerun "Unable to receive message from renderer" --durations=60
test: $(VENV)/.stamp-test browser redis
	timeout -k 30 2700 $(PYTEST) -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
		-m "not serial"
	timeout -k 30 900 $(PYTEST) -m serial

bench: $(VENV)/.stamp-run redis
	@set -e; found=0; for f in bench/*.py; do \
		[ -e "$$f" ] || continue; case "$$(basename $$f)" in _*) continue;; esac; \
		found=1; echo "== $$f"; PYTHONPATH=. $(PY) "$$f" $(BENCH_ARGS); \
	done; [ $$found = 1 ] || echo "no benchmarks in bench/"

clean-cache:
	rm -rf "$${VARIMP_CACHE_DIR:-$$($(PY) -c 'import tempfile, os; print(os.path.join(tempfile.gettempdir(), "varimp-cache-%d" % os.getuid()))')}"
