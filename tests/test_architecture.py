"""The layer rules of docs/architecture.md, as a test that reads the code (``ast``, no import).

Layers run one way: pages -> ``pages._framework`` -> ``pages._server`` -> ``varimp_core``
(and ``app`` above them all).  The test fails when

- an import cycle appears among the project's modules;
- a module imports one of a layer above its own, or a page imports another page (Dash
  loads each page module once, when the app is built);
- the core imports dash, flask, celery, redis, psutil, signal or resource, at the top of a
  module or inside a function;
- a core module is reached by no import from ``varimp_core/__init__.py`` or
  ``varimp_core/__main__.py`` (dead code, or a module only the web side uses);
- an underscore name (``from x import _name``) is imported from another module.

Line counts are printed for information; no file has a line budget.  The same rules, with a
summary line, come from ``python ../shared/tools/arch_check.py`` (run from the project root).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Libraries of the web and the server that the core never imports.
SERVER_LIBS = ("dash", "flask", "celery", "redis", "psutil", "signal", "resource")
#: Layers from the bottom: a module may import its own layer and those below.
LAYERS = ("varimp_core", "pages._server", "pages._framework", "pages", "app")


def _module_files() -> dict[str, Path]:
    """Every project module (``app``, ``pages...``, ``varimp_core...``) -> its file."""
    files = {"app": ROOT / "app.py"}
    for package in ("pages", "varimp_core"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            files[".".join(parts)] = path
    return files


MODULES = _module_files()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _known(name: str) -> str | None:
    """The longest project module that ``name`` is or lies in (None outside the project)."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in MODULES:
            return ".".join(parts)
        parts.pop()
    return None


def _imports(name: str) -> list[tuple[str, str | None, int]]:
    """``(module, imported name or None, line)`` of every import in module ``name``.

    Relative imports are made absolute; imports inside functions count too.
    """
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if _is_package(name) else name.split(".")[:-1]
                package = package[:len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            out += [(base, alias.name, node.lineno) for alias in node.names]
    return out


def _edges() -> dict[str, dict[str, int]]:
    """Project module -> {project module it imports: line of the first such import}.

    ``from package import module`` points at the module; importing ``a.b.c`` runs the
    packages ``a`` and ``a.b`` first, so they count as imported too.
    """
    edges: dict[str, dict[str, int]] = defaultdict(dict)
    for name in MODULES:
        for base, what, line in _imports(name):
            full = f"{base}.{what}" if what else base
            target = full if full in MODULES else _known(base)
            if target is None or target == name:
                continue
            edges[name].setdefault(target, line)
            parts = target.split(".")[:-1]
            while parts:
                parent = ".".join(parts)
                if parent in MODULES and parent != name and not name.startswith(parent + "."):
                    edges[name].setdefault(parent, line)
                parts.pop()
    return edges


EDGES = _edges()


def _layer(name: str) -> int:
    """Index in :data:`LAYERS` of the layer that module ``name`` belongs to."""
    if name == "app":
        return LAYERS.index("app")
    for i in (2, 1, 0):  # the most specific prefix first
        if name == LAYERS[i] or name.startswith(LAYERS[i] + "."):
            return i
    return LAYERS.index("pages")  # pages and its page modules


def _cycles() -> list[list[str]]:
    """Strongly connected components (Tarjan) with more than one module.

    A package and the modules it holds (``__init__`` importing its own modules, which
    import their package) are one idea, not a cycle.
    """
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in EDGES.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in MODULES:
        if v not in index:
            visit(v)

    def own_package(component):
        return all(any(o.startswith(x + ".") or x.startswith(o + ".") for o in component
                       if o != x) for x in component)

    return [c for c in found if not own_package(c)]


def test_line_counts_are_printed_never_capped():
    counts = {name: sum(1 for _ in path.open(encoding="utf-8")) for name, path in MODULES.items()}
    core = sum(n for name, n in counts.items() if name.startswith("varimp_core"))
    web = sum(n for name, n in counts.items() if not name.startswith("varimp_core"))
    largest = max((n, name) for name, n in counts.items())
    print(f"\n{len(MODULES)} modules: core {core} lines, web {web} lines, "
          f"largest {largest[1]} ({largest[0]} lines)")
    assert core > 0 and web > 0


def test_no_import_cycle():
    assert _cycles() == []


def test_layers_import_only_downwards():
    wrong = []
    for name, targets in EDGES.items():
        for target, line in targets.items():
            if _layer(target) > _layer(name):
                wrong.append(f"{MODULES[name].relative_to(ROOT)}:{line}: {name} "
                             f"({LAYERS[_layer(name)]}) imports {target} "
                             f"({LAYERS[_layer(target)]}, a layer above)")
            elif (_layer(name) == _layer(target) == LAYERS.index("pages")
                  and name != "pages" and target != "pages"):
                wrong.append(f"{MODULES[name].relative_to(ROOT)}:{line}: page {name} imports "
                             f"page {target} (Dash loads each page once; share through "
                             f"pages._framework)")
    assert wrong == []


@pytest.mark.parametrize("library", SERVER_LIBS)
def test_the_core_imports_no_web_or_server_library(library):
    found = []
    for name in MODULES:
        if not name.startswith("varimp_core"):
            continue
        for base, what, line in _imports(name):
            if base.split(".")[0] == library:
                found.append(f"{MODULES[name].relative_to(ROOT)}:{line}: imports {library}")
    assert found == []


def test_every_core_module_is_reached_from_the_package_or_its_command():
    core = {name for name in MODULES if name.startswith("varimp_core")}
    seen, todo = set(), ["varimp_core", "varimp_core.__main__"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [t for t in EDGES.get(name, {}) if t in core]
    assert sorted(core - seen) == []


def test_no_underscore_name_is_imported_from_another_module():
    found = []
    for name in MODULES:
        for base, what, line in _imports(name):
            if (what and what.startswith("_") and not what.startswith("__")
                    and _known(base) is not None and f"{base}.{what}" not in MODULES):
                found.append(f"{MODULES[name].relative_to(ROOT)}:{line}: {what} from {base}")
    assert found == []


TEST_FOLDERS = ("core", "framework", "server", "pages", "browser")


def test_tests_mirror_the_source():
    """A test file lies in the folder of what it tests (``tests/core/<subpackage>/``,
    ``framework/``, ``server/``, ``pages/``, ``browser/``); at the top of ``tests/`` only the
    project-wide checks (this file, the package and the container image)."""
    tests = ROOT / "tests"
    top = sorted(p.name for p in tests.glob("test_*.py"))
    assert top == ["test_architecture.py", "test_image.py", "test_package.py"], top
    for path in tests.rglob("test_*.py"):
        parts = path.relative_to(tests).parts
        if len(parts) == 1 or parts[0] in ("data", "hostile"):
            continue
        assert parts[0] in TEST_FOLDERS, path
        if parts[0] == "core" and len(parts) == 3:
            assert (ROOT / "varimp_core" / parts[1] / "__init__.py").exists(), path
        if parts[0] == "pages" and parts[-1] not in ("test_app_shell.py", "test_headers.py",
                                                     "test_user_text.py", "test_streaming.py"):
            page = parts[-1].removeprefix("test_").removesuffix(".py").split("_")[0]
            assert (ROOT / "pages" / f"{page}.py").exists(), path
