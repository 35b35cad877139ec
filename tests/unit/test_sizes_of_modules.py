"""No module of the service or of its tools is over 600 lines, and no function over 120: past
that a module holds several concerns and a function several steps, and a change to one
has to be found among the others. The templates compiled to Python are written by Jinja2
(`make templates`), not by hand, and are left out."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 120
CHECKED = ("layers", "tools")
GENERATED = ROOT / "layers/common/evalsvc/reports/compiled"
# The layer's top level holds packages by concern, and at most this many modules beside them.
MAX_TOP_MODULES = 4


def _modules() -> list[Path]:
    found = [path for top in CHECKED for path in sorted((ROOT / top).rglob("*.py"))]
    return [path for path in found if not path.is_relative_to(GENERATED)]


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _functions(tree: ast.Module) -> list[tuple[str, int]]:
    """(name, lines) of every function and method, nested ones too; a function's lines run
    from its first decorator to its last line, the functions it holds included."""
    return [
        (
            node.name,
            node.end_lineno - min([node.lineno, *(d.lineno for d in node.decorator_list)]) + 1,
        )
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None
    ]


def test_the_modules_are_found() -> None:
    names = {_name(path) for path in _modules()}
    assert "tools/evalsvc_tools/cli.py" in names
    assert any(name.startswith("layers/common/evalsvc/") for name in names)
    assert not any(name.startswith(_name(GENERATED)) for name in names)


def test_no_module_over_600_lines_nor_a_function_over_120() -> None:
    over: list[str] = []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            over.append(f"{_name(path)}: {lines} lines")
        over += [
            f"{_name(path)}: {name}() has {length} lines"
            for name, length in _functions(ast.parse(text))
            if length > MAX_FUNCTION_LINES
        ]
    assert not over, (
        f"over {MAX_MODULE_LINES} lines a module or {MAX_FUNCTION_LINES} a function:\n"
        + "\n".join(over)
    )


def test_the_layer_top_level_holds_packages_not_a_pile_of_modules() -> None:
    top = ROOT / "layers/common/evalsvc"
    modules = sorted(path.name for path in top.glob("*.py"))
    packages = sorted(path.name for path in top.iterdir() if (path / "__init__.py").is_file())
    assert len(modules) <= MAX_TOP_MODULES, modules
    assert {"api", "core", "logic", "models", "statistics", "storage"} <= set(packages)
