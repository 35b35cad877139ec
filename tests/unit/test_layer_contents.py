"""The Lambda layer ships the `evalsvc` package and its runtime dependencies only: nothing in it
imports the local tools, the test oracle or what only the local server installs."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

LAYER = ROOT / "layers" / "common" / "evalsvc"
# Installed for the local server, tests or benchmarks only: never in the layer.
NOT_SHIPPED = {"evalsvc_tools", "moto", "uvicorn", "yaml", "scipy", "hypothesis", "pytest"}


def imported_roots(source: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_layer_imports_nothing_it_does_not_ship() -> None:
    offending = {
        str(path.relative_to(ROOT)): sorted(imported_roots(path.read_text()) & NOT_SHIPPED)
        for path in LAYER.rglob("*.py")
    }
    assert {path: roots for path, roots in offending.items() if roots} == {}


def test_the_local_server_and_operator_cli_live_outside_the_layer() -> None:
    assert not (LAYER / "local").exists()
    assert not (LAYER / "cli.py").exists()
    tools = ROOT / "tools" / "evalsvc_tools"
    assert {"server.py", "store.py", "tables.py", "workers.py"} <= {
        path.name for path in (tools / "local").glob("*.py")
    }
    assert (tools / "cli.py").is_file()
