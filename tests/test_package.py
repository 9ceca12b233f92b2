"""`pip install .` gives the core and a `varimp` command (issue #16)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_the_core_and_the_varimp_command(tmp_path):
    """Build the wheel pip would install; install it into an empty folder (its dependencies
    are this environment's) and run the `varimp` command from there, outside the checkout."""
    src = tmp_path / "src"  # a copy: setuptools writes build/ and *.egg-info beside the code
    shutil.copytree(ROOT / "varimp_core", src / "varimp_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps",
                    "-q", "-w", str(tmp_path / "dist")],
                   check=True, timeout=300, cwd=tmp_path)
    wheel = next((tmp_path / "dist").glob("varimp-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "varimp_core/__init__.py" in names and "varimp_core/exact/eqn3.py" in names
    assert not any(n.startswith(("pages/", "tests/", "bench/")) for n in names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "varimp = varimp_core.__main__:main" in zipfile.ZipFile(wheel).read(entry).decode()

    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(target)}
    script = target / "bin" / "varimp"
    out = subprocess.run([sys.executable, str(script), "importances", "--problem", "xor",
                          "--format", "json"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert '"importances"' in out.stdout
    # the installed core, not the checkout's
    where = subprocess.run([sys.executable, "-c", "import varimp_core; print(varimp_core.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert where.stdout.strip().startswith(str(target))
