"""The import arrows point only downstream (docs/architecture.md).

Every module of every room is parsed (not imported) and each of its imports, including the lazy
ones inside functions, is resolved to a room; a module may import its own room or rooms below
it, never one above.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import stsim

PKG = Path(stsim.__file__).parent

#: room -> level; a module may import only rooms of its own level or lower (docs/architecture.md).
LEVELS = {
    "cli": 5, "__main__": 5,
    "benchmarks": 4,
    "solvers": 3, "scoring": 3,
    "sandbox": 2, "baselines": 2, "generators": 2,
    "sim": 1, "spatial": 1, "qstr": 1, "geoqa": 1,
    "records": 0, "answers": 0, "answers_geo": 0, "answers_locale": 0, "refusal": 0, "registry": 0, "seeding": 0, "__init__": 0,
}


def _room(module: str) -> str:
    parts = module.split(".")
    assert parts[0] == "stsim", module
    return parts[1] if len(parts) > 1 else "__init__"


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        yield path, ".".join(parts), is_pkg


def _imports(path: Path, module: str, is_pkg: bool):
    """(line, imported module) for every import of an ``stsim`` module in ``path``."""
    package = module if is_pkg else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "stsim":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "stsim":
                continue
            if target == "stsim" or (node.module is None and node.level):
                # ``from . import x`` / ``from stsim import x``: each name may be a module
                for alias in node.names:
                    yield node.lineno, f"{target}.{alias.name}" if target != "stsim" or alias.name in LEVELS else target
            else:
                yield node.lineno, target


MODULES = list(_modules())


def test_every_room_has_a_level():
    rooms = {_room(m) for _, m, _ in MODULES}
    assert rooms <= set(LEVELS), f"rooms without a level in this test and docs/architecture.md: {rooms - set(LEVELS)}"


@pytest.mark.parametrize("path,module,is_pkg", MODULES, ids=[m for _, m, _ in MODULES])
def test_imports_only_downstream(path, module, is_pkg):
    here = _room(module)
    upstream = [f"{path.relative_to(PKG.parent)}:{line} imports {target} (room {_room(target)!r}, "
                f"level {LEVELS[_room(target)]} > {LEVELS[here]})"
                for line, target in _imports(path, module, is_pkg)
                if _room(target) in LEVELS and LEVELS[_room(target)] > LEVELS[here]]
    assert not upstream, "\n".join(upstream)


def test_the_checker_sees_an_upstream_import(tmp_path):
    """The parser above catches a lazy relative import of a higher room (the registry used to
    import the generators this way)."""
    fake = tmp_path / "stsim" / "registry.py"
    fake.parent.mkdir()
    fake.write_text("def f():\n    import stsim.generators\n    from .benchmarks import runner\n")
    found = [t for _, t in _imports(fake, "stsim.registry", False)]
    assert found == ["stsim.generators", "stsim.benchmarks"]
    assert all(LEVELS[_room(t)] > LEVELS["registry"] for t in found)
