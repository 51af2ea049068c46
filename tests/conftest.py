"""Shared fixtures: paths to the team's shared real inputs (skipped when absent)."""
from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

#: The team's shared inputs: $STSIM_SHARED, else ../shared beside the checkout.
SHARED = Path(os.environ.get("STSIM_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")


def shared_path(*parts: str) -> Path:
    """A path under ../shared/, or skip the test with the reason."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not present: the shared test inputs come with the team's checkout, not "
                    "with a clone (set STSIM_SHARED to their folder)")
    return p


@pytest.fixture(scope="session")
def stark_data(tmp_path_factory) -> Path:
    """STARK's released data, unpacked once per session from ../shared/stark/."""
    archive = shared_path("stark", "data_final.tar.gz")
    dest = tmp_path_factory.mktemp("stark")
    with tarfile.open(archive) as tf:
        tf.extractall(dest, filter="data")
    return dest / "data_final_v5"


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """Archives unpacked by ``--data X.tar.gz``, the GeoQA entity store and its question pools
    go to a cache private to this test run, not ~/.cache.  The run's worker processes
    (pytest-xdist, ``-n`` in pyproject.toml) share it, as one process would: each of them
    builds into it atomically (a temporary file or folder renamed into place), so a pool one
    worker drew is not drawn again by the other.  A test that needs a cold cache sets its own
    ``XDG_CACHE_HOME``."""
    old = os.environ.get("XDG_CACHE_HOME")
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the run's base folder, parent of the workers' own
        cache = tmp_path_factory.getbasetemp().parent / "xdg-cache"
        cache.mkdir(exist_ok=True)
    else:
        cache = tmp_path_factory.mktemp("xdg-cache")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture
def interrupt_generate(monkeypatch):
    """``interrupt_generate(k)``: the suites' task generation raises KeyboardInterrupt on its
    ``k``-th call (a Ctrl-C in the middle of ``stsim generate``)."""
    from stsim.benchmarks import suites
    real = suites.generate_task

    def arm(k: int = 3) -> None:
        calls = {"n": 0}

        def flaky(*a, **kw):
            calls["n"] += 1
            if calls["n"] == k:
                raise KeyboardInterrupt
            return real(*a, **kw)
        monkeypatch.setattr(suites, "generate_task", flaky)
    return arm
