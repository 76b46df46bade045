"""The import contract: data flows one way, so every module imports only from layers below it.

Each module of the package has a rank (the order of ``docs/design.md``); an
import of a precall module, at module level or inside a function, must point to
a lower rank, with no exception: the drawing conveniences (``ThresholdTable.plot``,
``PrecisionRecallCurve.plot``, ``RocCurve.plot``) are attached by the package root
(:mod:`precall`, above :mod:`precall.plot`) and ``CocoEvaluation.bootstrap`` by
:mod:`precall.detection` (above :mod:`precall.detection.bootstrap`), as ``VocEvaluation.bootstrap``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "precall"

RANKS = {
    "precall._version": 0,
    "precall._core": 0,  # the package docstring only
    "precall._core.undefined": 1,
    "precall._core.normal": 1,
    "precall._core.text": 1,
    "precall._core.jsonshape": 1,
    "precall._core.compiled": 1,
    "precall._core.scratch": 1,
    "precall._core.backend": 2.5,
    "precall._core.validate": 2,
    "precall._core.sort": 3,
    "precall._core.steps": 4,
    "precall._core.conventions": 5,
    "precall._core.evaluation": 6,
    "precall._core.metric": 7,
    "precall.curves": 10,
    "precall.table": 11,
    "precall.space": 12,
    "precall.multiclass": 13,
    "precall.slices": 13.5,
    "precall.metrics": 14,
    "precall.stats._segments": 19.5,
    "precall.stats._resample": 20,
    "precall.stats.results": 20,
    "precall.stats.bootstrap": 20.5,
    "precall.stats.delong": 20.7,
    "precall.stats.slices": 20.8,
    "precall.stats": 21,
    "precall.stats.bands": 21.5,
    "precall._slicing": 21.9,
    "precall.scale.binned": 22,
    "precall.scale.accumulator": 23,
    "precall.scale.sliced": 23.5,
    "precall.scale": 24,
    "precall.scale.ranges": 25,
    "precall.scale.dask": 26,
    "precall.dask": 27,
    "precall.scale.spark": 26,
    "precall.spark": 27,
    "precall.detection._rle": 30,
    "precall.detection.io": 31,
    "precall.detection._match": 32,
    "precall.detection.coco": 33,
    "precall.detection.voc": 33,
    "precall.detection.keypoints": 34,
    "precall.detection.bootstrap": 34,
    "precall.detection.tide": 34,
    "precall.detection.diagnostics": 34.2,
    "precall.detection.metric": 34.5,
    "precall.detection": 35,
    "precall.readers": 40,
    "precall.plot": 41,
    "precall.plot.detection": 41.5,
    "precall.plot.report": 42,
    "precall.report": 43,
    "precall": 50,
    "precall.cli._format": 60,
    "precall.cli._common": 61,
    "precall.cli._inputs": 61.5,
    "precall.cli._intervals": 61.5,
    "precall.cli._engines": 62,
    "precall.cli._reports": 62,
    "precall.cli._slices": 62,
    "precall.cli": 69,
    "precall.cli.main": 68,
    "precall.__main__": 70,
}
def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _rank(name: str) -> float:
    if name in RANKS:
        return RANKS[name]
    parent, _, leaf = name.rpartition(".")
    if parent in ("precall.detection", "precall.cli"):  # the leaves of a package: between its base and itself
        return RANKS[parent] - 0.5 if parent == "precall.detection" else 65
    raise KeyError(f"{name} has no layer: add it to RANKS in tests/test_layers.py (and to docs/design.md)")


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """Every precall module ``name`` imports, with the line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "precall"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "precall":
                continue
            for alias in node.names:  # `from pkg import module` imports the module
                sub = f"{target}.{alias.name}"
                out.append((sub if sub in MODULES else target, node.lineno))
    return out


def test_every_module_has_a_layer():
    for name in MODULES:
        _rank(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    upward = []
    for target, line in _imports(name, MODULES[name]):
        if target == name:
            continue
        if _rank(target) >= _rank(name):
            upward.append(f"{MODULES[name].name}:{line} imports {target} (layer {_rank(target)} >= {_rank(name)})")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_the_core_needs_numpy_only():
    for name, path in MODULES.items():
        if not name.startswith("precall._core"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            allowed = {"numpy", "math", "numbers", "warnings", "dataclasses", "typing", "__future__", "sys",
                       "statistics", "re", "os", "types", "unicodedata"}  # AS241 (normal.py); text.py: the
            # regex of unsafe characters and the terminal columns of wide ones (standard library)
            if path.name == "backend.py":  # `beside`: a second thread for by= (standard library)
                allowed |= {"threading", "concurrent", "collections", "itertools"}
            if path.name == "scratch.py":  # the lock of the blocks kept between calls (standard library)
                allowed.add("threading")
            if path.name == "compiled.py":  # the optional compiled pass (the `fast` extra), loaded by backend.py only
                allowed.add("numba")
            if path.name == "text.py":  # `wrap`: prose within a width, as textwrap breaks ASCII (standard library)
                allowed.add("textwrap")
            if path.name == "jsonshape.py":  # `show`: parsed input in messages, shortened (standard library)
                allowed.add("reprlib")
            if path.name == "undefined.py":  # scikit-learn's warning class, only when scikit-learn is loaded already
                allowed.add("sklearn")
            assert roots <= allowed, f"{path.name}:{node.lineno} imports {roots}"


def test_numba_is_loaded_by_the_kernel_choice_only():
    """Only backend.py imports the compiled module, inside a function (numba stays optional)."""
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("compiled") or (
                    isinstance(node, ast.ImportFrom) and node.level and any(a.name == "compiled" for a in node.names)):
                assert name == "precall._core.backend" and id(node) not in top, f"{path.name}:{node.lineno}"


def test_the_contract_catches_an_upward_import(tmp_path):
    """The checker itself: a core module importing the table is reported."""
    fake = tmp_path / "steps.py"
    fake.write_text("from ..table import ThresholdTable\n")
    imports = _imports("precall._core.steps", fake)
    assert imports == [("precall.table", 1)] and _rank("precall.table") > _rank("precall._core.steps")


def test_the_conveniences_are_wired_from_above():
    """The methods the data objects offer exist without any data module importing upward."""
    import precall
    import precall.detection

    assert callable(precall.ThresholdTable.plot) and callable(precall.PrecisionRecallCurve.plot)
    assert callable(precall.RocCurve.plot) and callable(precall.detection.CocoEvaluation.bootstrap)
    assert callable(precall.detection.VocEvaluation.bootstrap)


COMMANDS = sorted(name for name in MODULES if name.startswith("precall.cli.")
                  and not name.rpartition(".")[2].startswith("_") and name != "precall.cli.main")


def test_there_are_command_modules():
    assert {"precall.cli.evaluate", "precall.cli.compare", "precall.cli.explain", "precall.cli.demo"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_command_imports_no_other_command(name):
    """What several commands share lives in a ``cli._*`` module meant for it: a command module
    (``cli/<command>.py``) imports only those and the library, never another command."""
    others = [f"{MODULES[name].name}:{line} imports {target}" for target, line in _imports(name, MODULES[name])
              if target.startswith("precall.cli") and target != name
              and not target.rpartition(".")[2].startswith("_")]
    assert not others, "a command imports another command:\n" + "\n".join(others)


def test_the_command_rule_catches_a_command_import(tmp_path):
    fake = tmp_path / "demo.py"
    fake.write_text("from .evaluate import Report\nfrom ._reports import Report\n")
    targets = [t for t, _ in _imports("precall.cli.demo", fake)]
    assert targets == ["precall.cli.evaluate", "precall.cli._reports"]
