"""The Docker image, proved without Docker (issue #16): its files, user, ENV, CMD and HEALTHCHECK.

``tests/_image.py`` reproduces the image's filesystem from the Dockerfile (exactly the
paths its COPY lines name), and the CMD runs there as an unprivileged user with the
image's ENV and this suite's packages standing for the image's ``pip install``: a venv of a
Python 3.11 the user can run (this suite's own interpreter may sit in root's home) whose
``.pth`` file points at this suite's site-packages, with a ``gunicorn`` script like pip's.  The server
must answer ``/_health``, serve its assets, run a page's background callback end to end
(``/_dash-update-component``, the Importances page's exact XOR importances) and pass the
HEALTHCHECK command run exactly as written.  Each COPY line dropped in turn must fail it.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
import requests

from _image import BuildError, build, instructions
from _served import running
from _servers import DashCallbackClient, free_port

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
COPY_LINES = [f"COPY {args}" for word, args in instructions(DOCKERFILE) if word == "COPY"]


def _drop_to(uid: int, gid: int):
    """preexec_fn: become ``uid``/``gid`` (this suite runs as root here)."""
    def drop():
        if os.getuid() == 0:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
    return drop


@pytest.fixture(scope="module")
def venv_bin():
    """The bin folder of a venv the unprivileged user can run, with this suite's packages."""
    nobody = pwd.getpwnam("nobody")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    with tempfile.TemporaryDirectory(prefix="varimp-image-venv-", dir="/tmp") as d:
        venv = Path(d) / "venv"
        for python in (getattr(sys, "_base_executable", sys.executable), f"/usr/bin/python{version}"):
            try:
                subprocess.run([python, "-c", "pass"], check=True, capture_output=True, timeout=60,
                               preexec_fn=_drop_to(nobody.pw_uid, nobody.pw_gid))
            except (OSError, subprocess.CalledProcessError):
                continue  # not there, or the user cannot run it
            subprocess.run([python, "-m", "venv", "--without-pip", "--clear", str(venv)],
                           check=True, timeout=120)
            site = subprocess.run([str(venv / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip()
            Path(site, "suite.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
            script = venv / "bin" / "gunicorn"   # what pip writes for gunicorn's entry point
            script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\n"
                              "from gunicorn.app.wsgiapp import run\nsys.exit(run())\n")
            script.chmod(0o755)
            for path in (Path(d), *Path(d).rglob("*")):
                path.chmod(path.stat().st_mode | 0o005 | (0o050 if path.is_dir() else 0))
            yield venv / "bin"
            return
        pytest.fail(f"No Python {version} that the user nobody can run was found.")


@pytest.fixture
def image_root():
    """A folder for the image's /, that the unprivileged user can enter."""
    with tempfile.TemporaryDirectory(prefix="varimp-image-", dir="/tmp") as d:
        os.chmod(d, 0o755)
        yield Path(d)


def _as_user(image):
    """preexec_fn: become the image's user."""
    return _drop_to(image.uid, image.gid)


def _exact_xor_importances(base: str) -> dict:
    """The Importances page's background callback over HTTP, as dash-renderer drives it."""
    from pages._framework.datachoice import DataChoice

    client = DashCallbackClient.over_http(base, "imp-graph.figure", "/importances")
    data = DataChoice.from_page({"problem": "xor:relevant=2,irrelevant=1"})[0]
    controls = {"method": "exact", "max_features": 1, "max_depth": None,
                "criterion": "entropy", "k_semantics": "id3", "n_estimators": 100,
                "bootstrap": [], "random_state": 0, "spread": "se", "order": "columns"}
    values = {"imp-miss.data": {"values": controls, "extra": {}, "data": data.to_store()},
              "imp-instance.data": "test-image"}
    _, _, last = client.run(values, "imp-miss.data", timeout=120)
    return last


def _numbers(values) -> list[float]:
    """A figure's array: a list, or plotly's typed array ({"dtype", "bdata"})."""
    if isinstance(values, dict):
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return [float(v) for v in values]


def serve_and_check(image, venv_bin: Path, log: Path) -> None:
    """Run the image's CMD as its user; check health, assets, a page's callback, HEALTHCHECK."""
    port = free_port()
    env = image.run_env(venv_bin, PORT=str(port))
    base = f"http://127.0.0.1:{port}"
    health = ["/bin/sh", "-c", image.healthcheck]
    with running(image.cmd, base=base, cwd=image.path("."), env=env, log=log,
                 preexec=_as_user(image), timeout=60):
        assert requests.get(base + "/_health", timeout=10).text == "ok"
        css = requests.get(base + "/assets/varimp.css", timeout=10)
        assert css.status_code == 200, "the image serves no assets"
        last = _exact_xor_importances(base)
        assert "response" in last, last
        bars = last["response"]["imp-graph"]["figure"]["data"]
        exact = next(bar for bar in bars if bar.get("name", "").startswith("exact"))
        # XOR of two bits, K=1, the exact method: each relevant bit carries half of
        # I(X; Y) = 1 bit, the irrelevant one nothing (Louppe et al. 2013, Eqn 3).
        assert list(exact["x"]) == ["X1", "X2", "X3"], exact
        assert _numbers(exact["y"]) == pytest.approx([0.5, 0.5, 0.0]), exact
        check = subprocess.run(health, env=env, cwd=image.path("."), preexec_fn=_as_user(image),
                               capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stderr
    stopped = subprocess.run(health, env=env, preexec_fn=_as_user(image), capture_output=True,
                             timeout=30)
    assert stopped.returncode != 0  # the HEALTHCHECK fails once the server is gone
    cache = Path(env["VARIMP_CACHE_DIR"])
    assert any(cache.iterdir()), "the job left nothing in the image's cache folder"


def test_the_image_starts_and_serves_as_its_user(image_root, venv_bin, tmp_path):
    image = build(DOCKERFILE, ROOT, image_root)
    assert image.user and image.uid != 0
    assert set(image.copied) >= {"app.py", "varimp_core", "pages", "assets"}
    assert not (image.path(".") / "tests").exists()  # only what COPY names
    serve_and_check(image, venv_bin, tmp_path / "image.log")


@pytest.mark.parametrize("dropped", COPY_LINES)
def test_an_image_without_one_copy_line_fails(dropped, image_root, venv_bin, tmp_path):
    dockerfile = DOCKERFILE.replace(dropped + "\n", "", 1)
    assert dockerfile != DOCKERFILE
    with pytest.raises((BuildError, AssertionError, pytest.fail.Exception)):
        serve_and_check(build(dockerfile, ROOT, image_root), venv_bin, tmp_path / "image.log")
