"""Shared fixtures for the precall test suite."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_DIR = TESTS_DIR.parent

# make ``import oracles`` work regardless of how pytest was invoked
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

try:  # keep hypothesis modest and deterministic-ish across the suite
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "precall",
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.register_profile(
        "precall-thorough",
        max_examples=400,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "precall"))
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass


def _shared_data_dir() -> Path | None:
    env = os.environ.get("PRECALL_SHARED_DATA")
    candidates = []
    if env:
        candidates.append(Path(env))
    candidates.append(REPO_DIR.parent / "shared" / "data")
    for c in candidates:
        if c.is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """Directory with the public reference data sets (see its README.md).

    Found through the environment variable PRECALL_SHARED_DATA, else
    <repo>/../shared/data.  Tests that need it are skipped when it is absent.
    """
    d = _shared_data_dir()
    if d is None:
        pytest.skip(
            "shared reference data not found: set PRECALL_SHARED_DATA to the folder "
            "holding pROC_aSAH.csv / yardstick_two_class_example.csv "
            f"(looked in {REPO_DIR.parent / 'shared' / 'data'})"
        )
    return d


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh, seeded random generator per test (reproducible failures)."""
    return np.random.default_rng(20240607)
