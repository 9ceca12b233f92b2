"""The Docker image's filesystem and command, reproduced from the Dockerfile without Docker.

:func:`build` reads the Dockerfile and does what ``docker build`` would do with it, into a
directory standing for the image's ``/``: ``WORKDIR`` makes the folder, ``COPY`` copies
exactly the paths it names from the build context (less ``.dockerignore``; a path that is
not there fails the build, as in Docker), ``ENV`` sets the environment, ``USER`` names the
user the command runs as, and ``CMD`` and ``HEALTHCHECK`` are kept as written.  ``RUN``
steps are emulated one command at a time, and a command this module does not know fails
the build (so a new RUN step has to be taught here, not silently skipped):

* ``groupadd`` / ``useradd``: the user is an unprivileged user of this machine (``nobody``),
  its home made under the image's root with ``--create-home``;
* ``mkdir -p`` and ``chown`` under the image's root (``chown`` gives to that user);
* ``pip install -r FILE``: FILE must have been copied to the image; instead of installing
  from an index, the test's venv must hold every requirement FILE names (versions are not
  compared: this environment is the one the suite is tested with).

Absolute paths in ``ENV`` values are mapped under the image's root.
"""

from __future__ import annotations

import fnmatch
import json
import os
import pwd
import re
import shlex
import shutil
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

__all__ = ["BuildError", "Image", "build", "instructions"]


class BuildError(Exception):
    """What ``docker build`` would stop on (a missing COPY source, an unknown step)."""


@dataclass
class Image:
    root: Path
    workdir: str = "/"
    env: dict = field(default_factory=dict)
    user: str | None = None
    uid: int = 0
    gid: int = 0
    home: Path | None = None
    cmd: list = field(default_factory=list)
    healthcheck: str | None = None
    copied: list = field(default_factory=list)

    def path(self, p: str) -> Path:
        """The image's absolute or WORKDIR-relative path ``p`` on this machine."""
        p = p if p.startswith("/") else os.path.join(self.workdir, p)
        return self.root / os.path.normpath(p).lstrip("/")

    def run_env(self, venv_bin: Path, **override) -> dict:
        """The image's ENV (absolute paths mapped), the venv's programs first on PATH."""
        env = {k: str(self.root) + v if v.startswith("/") else v for k, v in self.env.items()}
        env.update(PATH=f"{venv_bin}:/usr/bin:/bin", HOME=str(self.home or self.root),
                   LANG="C.UTF-8", **override)
        return env


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: continuations joined, comments dropped."""
    out, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        word, _, rest = current.partition(" ")
        out.append((word.upper(), rest.strip()))
        current = ""
    if current:
        raise BuildError("the Dockerfile ends inside a continued line")
    return out


def _ignored(context: Path) -> list[str]:
    f = context / ".dockerignore"
    lines = f.read_text().splitlines() if f.exists() else []
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def _copy(image: Image, context: Path, args: str) -> None:
    words = json.loads(args) if args.startswith("[") else shlex.split(args)
    if any(w.startswith("--") for w in words):
        raise BuildError(f"COPY flags are not emulated: {args}")
    *sources, dest = words
    patterns = _ignored(context)

    def skip(rel: str) -> bool:
        return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, p.removeprefix("**/"))
                   or fnmatch.fnmatch(os.path.basename(rel), p.removeprefix("**/"))
                   for p in patterns)

    for src in sources:
        origin = context / src
        if not origin.exists() or skip(src):
            raise BuildError(f"COPY {src}: not found in the build context")
        target = image.path(dest)
        if origin.is_file():
            if dest.endswith("/") or dest in (".", "./") or target.is_dir():
                target = target / origin.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)
        else:
            shutil.copytree(origin, target, dirs_exist_ok=True,
                            ignore=lambda d, names: [n for n in names if skip(
                                os.path.relpath(os.path.join(d, n), context))])
        image.copied.append(src)


def _requirements(file: Path) -> None:
    for line in file.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name = re.split(r"[\[<>=!~; ]", line, maxsplit=1)[0]
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            raise BuildError(f"{file.name} names {line}, which the test venv lacks") from None


def _run(image: Image, command: str, user: pwd.struct_passwd) -> None:
    for step in re.split(r"\s*&&\s*", command.strip()):
        words = shlex.split(step)
        prog, args = words[0], words[1:]
        if prog == "groupadd":
            continue
        if prog == "useradd":
            image.uid, image.gid = user.pw_uid, user.pw_gid
            if "--create-home" in args or "-m" in args:
                image.home = image.path(f"/home/{args[-1]}")
                image.home.mkdir(parents=True, exist_ok=True)
                os.chown(image.home, image.uid, image.gid)
        elif prog == "mkdir" and args[:1] == ["-p"]:
            for p in args[1:]:
                image.path(p).mkdir(parents=True, exist_ok=True)
        elif prog == "chown":
            for p in args[1:]:
                os.chown(image.path(p), image.uid, image.gid)
        elif prog == "pip" and args[:2] == ["install", "-r"]:
            file = image.path(args[2])
            if not file.is_file():
                raise BuildError(f"RUN pip install -r {args[2]}: no such file in the image")
            _requirements(file)
        else:
            raise BuildError(f"RUN step not emulated by tests/_image.py: {step}")


def build(dockerfile: str, context: Path, root: Path, user: str = "nobody") -> Image:
    """The image of ``dockerfile`` (its text) built from ``context`` into ``root``."""
    image, account = Image(root=root), pwd.getpwnam(user)
    for word, args in instructions(dockerfile):
        if word in ("FROM", "EXPOSE", "LABEL", "ARG"):
            continue
        if word == "ENV":
            pairs = shlex.split(args)
            if pairs and "=" not in pairs[0]:
                pairs = [f"{pairs[0]}={' '.join(pairs[1:])}"]
            image.env.update(p.split("=", 1) for p in pairs)
        elif word == "WORKDIR":
            image.workdir = args if args.startswith("/") else os.path.join(image.workdir, args)
            image.path(".").mkdir(parents=True, exist_ok=True)
        elif word == "COPY":
            _copy(image, context, args)
        elif word == "RUN":
            _run(image, args, account)
        elif word == "USER":
            image.user = args
        elif word == "HEALTHCHECK":
            image.healthcheck = args.split(" CMD ", 1)[1].strip()
        elif word == "CMD":
            image.cmd = json.loads(args) if args.startswith("[") else ["/bin/sh", "-c", args]
        else:
            raise BuildError(f"Dockerfile instruction not emulated: {word}")
    if image.user in (None, "root", "0"):
        raise BuildError("the image runs as root: it needs a USER")
    return image
