"""The packages keep their layering: no import cycle in the runner and the flow language, nor in the
tools, the client, the server, the devices, the protocol, the reports or the MCP adapter (lazy imports
inside functions count), `flows/` imports nothing of ours but errors, limits and the CPU pool, and the engine names no
tool and no directive."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import argent
from argent.tools.builtin import build_registry

PACKAGE = Path(argent.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """Every module of ours ``path`` imports, wherever the import statement is (a function body too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("argent"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("argent"):
            if node.module != "argent":  # ``from argent import limits`` imports argent.limits alone
                found.add(node.module)
            # ``from argent.flows import parse``: the submodule is imported too.
            for alias in node.names:
                if (
                    (PACKAGE.parent / (node.module + "." + alias.name).replace(".", "/"))
                    .with_suffix(".py")
                    .exists()
                ):
                    found.add(f"{node.module}.{alias.name}")
    return frozenset(found)


def _graph(*packages: str) -> dict[str, set[str]]:
    modules = {}
    for package in packages:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            modules[_module_name(path)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        for dep in _imports(path):
            # Importing ``a.b.c`` runs the package ``a.b`` first, unless the importer is inside it.
            parts = dep.split(".")
            for end in range(2, len(parts) + 1):
                prefix = ".".join(parts[:end])
                if prefix in modules and not name.startswith(prefix + ".") and prefix != name:
                    deps.add(prefix)
        graph[name] = deps
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        trail.append(name)
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                return [*trail[trail.index(dep) :], dep]
            if dep not in state and (found := visit(dep)) is not None:
                return found
        trail.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state and (found := visit(name)) is not None:
            return found
    return None


def test_the_runner_and_the_flow_language_have_no_import_cycle() -> None:
    cycle = _cycle(_graph("runner", "flows"))
    assert cycle is None, " -> ".join(cycle or [])


#: The packages whose modules must not import each other in a circle either (an import inside a
#: function or under ``TYPE_CHECKING`` counts, as above); each is checked with the layers below it.
ACYCLIC = ("link", "devices", "tools", "client", "server", "reports", "mcp", "cli", "testing")


@pytest.mark.parametrize("package", ACYCLIC)
def test_a_package_has_no_import_cycle(package: str) -> None:
    cycle = _cycle(_graph("link", "flows", "devices", "runner", package))
    assert cycle is None, " -> ".join(cycle or [])


#: What the flow language may use of ours: the errors, the limits, the CPU pool that parses run on
#: (a leaf module of its own: asyncio and the limits only), the key vocabulary a `press:` step
#: is checked with (a leaf module too, shared with the devices, which may not import the flows), and
#: the engine table its platforms and launch keys come from (a leaf: it imports no engine).
FLOWS_MAY_IMPORT = (
    "argent.errors",
    "argent.limits",
    "argent.cpu",
    "argent.utils.keys",
    "argent.devices.registry",
)


def test_flows_imports_nothing_of_ours_but_errors_limits_and_the_cpu_pool() -> None:
    for path in sorted((PACKAGE / "flows").rglob("*.py")):
        outside = {
            dep
            for dep in _imports(path)
            if not dep.startswith("argent.flows") and dep not in FLOWS_MAY_IMPORT
        }
        assert not outside, f"{path.name} imports {sorted(outside)}"


def test_the_engine_names_no_tool_and_no_directive() -> None:
    engine = PACKAGE / "runner" / "engine.py"
    tree = ast.parse(engine.read_text(encoding="utf-8"))
    strings = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    tools = {spec.name for spec in build_registry()} | {"await-ui-element", "run-sequence", "flow-execute"}
    assert not strings & tools
    model_names = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "argent.flows.model"
        for alias in node.names
    }
    assert model_names <= {"Flow", "Step"}


#: The packages of the browser engines: only ``argent.devices`` may import them (the rest holds a
#: ``Device``, asks its engine's capabilities and reads ``argent.devices.registry``).
ENGINE_PACKAGES = tuple(
    f"argent.{path.relative_to(PACKAGE).as_posix().replace('/', '.')}"
    for path in sorted((PACKAGE / "devices").iterdir())
    if path.is_dir() and path.name not in ("web", "__pycache__")
)


def _outside_devices() -> list[Path]:
    return [
        path for path in sorted(PACKAGE.rglob("*.py")) if "devices" not in path.relative_to(PACKAGE).parts
    ]


def test_nothing_outside_devices_imports_an_engine_package() -> None:
    from argent.devices.registry import ENGINES

    assert {f"argent.devices.{engine.platform}" for engine in ENGINES} <= set(ENGINE_PACKAGES)
    found = [
        f"{path.relative_to(PACKAGE)} imports {dep}"
        for path in _outside_devices()
        for dep in sorted(_imports(path))
        if any(dep == engine or dep.startswith(engine + ".") for engine in ENGINE_PACKAGES)
    ]
    assert found == []


def test_device_ids_are_spelled_only_in_the_engine_table() -> None:
    """An id prefix (``chromium-cdp-``) in a string outside ``argent.devices`` would be a second home
    for what the registry declares (docstrings aside)."""
    from argent.devices.registry import ENGINES

    prefixes = [engine.id_prefix for engine in ENGINES]
    found: list[str] = []
    for path in _outside_devices():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        found.extend(
            f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and any(prefix in node.value for prefix in prefixes)
        )
    assert found == []
