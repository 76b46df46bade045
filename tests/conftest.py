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

    settings.register_profile(  # the suite's (and CI's) profile: the same examples every run
        "precall",
        max_examples=40,
        derandomize=True,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.register_profile(  # exploration: HYPOTHESIS_PROFILE=precall-thorough, new examples each run
        "precall-thorough",
        max_examples=400,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "precall"))
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    pass


DATA_DIR = TESTS_DIR / "data"


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The public reference data sets the tests compare against (``tests/data``; sources and
    licences in its README.md).  They ship with the repository, so no test skips for want of them."""
    return DATA_DIR


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh, seeded random generator per test (reproducible failures)."""
    return np.random.default_rng(20240607)
