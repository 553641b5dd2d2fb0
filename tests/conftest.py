"""Suite-wide set-up: an isolated moot home, and real model requests blocked by default.

Tests that need the embedded model use the ``local_model`` fixture (it allows real requests
for that model only and loads it once per session).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

from moot import config
from moot.models.testing import allow_real_requests, block_real_requests

# Keep the shared weight cache (assembled once by `moot setup`) but give the suite its own
# home, so run stores and knowledge bases never touch the user's.
os.environ.setdefault("MOOT_MODELS_DIR", str(config.models_dir()))
os.environ.pop("MOOT_MODEL", None)
# A moot.toml in the developer's folder or config directory must not change what the suite
# tests: every process of the suite reads an empty one (tests of the file set their own).
_EMPTY_CONFIG = os.path.join(tempfile.mkdtemp(prefix="moot-suite-config-"), "moot.toml")
open(_EMPTY_CONFIG, "w").close()
os.environ["MOOT_CONFIG"] = _EMPTY_CONFIG


@pytest.fixture(autouse=True, scope="session")
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    os.environ["MOOT_HOME"] = str(tmp_path_factory.mktemp("moot-home"))
    # Embedded-model tests use the machine's shared engine like every other moot process: a
    # suite with an engine of its own would fight a second suite's (or a user's) for the cores.
    # It is not stopped at the end (another process may be using it); it exits when idle.
    os.environ.setdefault("MOOT_ENGINE_IDLE_S", "120")
    with block_real_requests():
        yield


@pytest.fixture(scope="session")
def _loaded_local_model():  # type: ignore[no-untyped-def]
    from moot.models.registry import infer_model

    return infer_model("local")


@pytest.fixture
def local_model(_loaded_local_model):  # type: ignore[no-untyped-def]
    """The embedded model, loaded once per session; real requests are allowed in this test only."""
    with allow_real_requests():
        yield _loaded_local_model


@pytest.fixture
def allow_real() -> Iterator[None]:
    with allow_real_requests():
        yield


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # pytest exits 5 when it collected nothing; for this project that is a broken suite, not a pass.
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
