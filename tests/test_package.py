"""`pip install .` gives the core, the dashboard and the `varimp` command (issue #16).

The wheel is built as ``pip wheel .`` builds it, installed into a fresh venv (its
dependencies are this environment's, reached through a ``.pth`` file, so nothing is
downloaded), and run from a directory that is not the checkout, with no PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import requests

from _served import page_layout, running
from _servers import free_port

ROOT = Path(__file__).resolve().parents[1]
#: What the package installs: the core, the dashboard's module, pages and assets.
INSTALLED = ("varimp_core", "pages", "assets", "app.py")


def _checkout_files() -> set[str]:
    """The files of INSTALLED that git knows (tracked or new, not ignored), no caches."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", *INSTALLED],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {f for f in out.split() if "__pycache__" not in f and (ROOT / f).is_file()}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, venv's bin folder, a working directory outside the checkout)."""
    tmp = tmp_path_factory.mktemp("package")
    src = tmp / "src"  # a copy: setuptools writes build/ and *.egg-info beside the code
    for name in sorted(_checkout_files()) + ["pyproject.toml", "README.md"]:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes((ROOT / name).read_bytes())
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q",
                    "-w", str(tmp / "dist")], check=True, timeout=600, cwd=tmp)
    wheel = next((tmp / "dist").glob("varimp-*.whl"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # The dependencies: this environment's site-packages, after the venv's own.
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "-q",
                    str(wheel)], check=True, timeout=300)
    away = tmp / "elsewhere"
    away.mkdir()
    return wheel, venv / "bin", away


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["VARIMP_SECRET_KEY"] = "test-package-" + "0" * 40
    return env


def test_the_wheel_holds_the_core_the_dashboard_and_the_command(installed):
    wheel, _, _ = installed
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    files = {n for n in names if ".dist-info/" not in n}
    assert files == _checkout_files()  # every file of the core and the dashboard, nothing else
    assert {"app.py", "assets/varimp.css", "assets/varimp.js", "pages/importances.py",
            "pages/_server/limits.py", "varimp_core/exact/eqn3.py"} <= files
    assert "varimp = varimp_core.__main__:main" in entry


def test_the_installed_command_runs_outside_the_checkout(installed):
    from varimp_core import __version__

    _, bin_, away = installed
    run = lambda *a: subprocess.run([str(bin_ / "varimp"), *a], capture_output=True,  # noqa: E731
                                    text=True, env=_env(), cwd=away, timeout=300)
    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"varimp {__version__}"
    out = run("importances", "--problem", "xor:relevant=2,irrelevant=1", "--method", "exact",
              "--format", "json")
    assert out.returncode == 0, out.stderr
    # XOR of two bits, K=1: each relevant bit carries half of I(X; Y) = 1 bit (Louppe et
    # al. 2013, Eqn 3), the irrelevant one nothing.
    assert json.loads(out.stdout)["importances"] == pytest.approx([0.5, 0.5, 0.0])
    where = subprocess.run([str(bin_ / "python"), "-c",
                            "import app, pages, varimp_core; print(app.__file__); "
                            "print(pages.__file__); print(varimp_core.__file__)"],
                           capture_output=True, text=True, env=_env(), cwd=away, timeout=120)
    assert where.returncode == 0, where.stderr
    for path in where.stdout.split():   # the installed copies, not the checkout's
        assert Path(path).is_relative_to(bin_.parent) and not Path(path).is_relative_to(ROOT)
    bad = run("serve", "--port", "0")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --port must be from 1")


@pytest.mark.parametrize("dev", [False, True], ids=["gunicorn", "dev-server"])
def test_varimp_serve_serves_the_installed_dashboard(installed, dev, tmp_path):
    _, bin_, away = installed
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [str(bin_ / "varimp"), "serve", "--port", str(port), "--workers", "1"]
    env = {**_env(), "VARIMP_CACHE_DIR": str(tmp_path / "cache")}
    with running(cmd + (["--dev"] if dev else []), base=base, cwd=away, env=env,
                 log=tmp_path / "serve.log"):
        assert requests.get(base + "/_health", timeout=10).text == "ok"
        css = requests.get(base + "/assets/varimp.css", timeout=10)
        assert css.status_code == 200 and css.content == (ROOT / "assets/varimp.css").read_bytes()
        layout = page_layout(base, "/importances")
        assert '"imp-graph"' in layout and '"imp-error"' in layout
    log = (tmp_path / "serve.log").read_text(errors="replace")
    assert ("Listening at: " + base in log) if not dev else ("Running on " + base in log), log
