"""The shared engine's protocol, lifecycle and safety checks, with a stand-in for llama.cpp.

The real engine process is exercised on the embedded model in test_engine_embedded.py; here
the :class:`EngineServer` runs in a thread with an engine that streams made-up chunks, so the
lifecycle (hang-ups, idle exit, stop, one engine per model, refused directories) is tested in
milliseconds and exactly.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from moot.errors import ConfigError, ModelError
from moot.models import engine_client
from moot.models.engine import EngineSettings
from moot.models.engine_client import EngineGone, EnginePaths, SharedEngine
from moot.models.engine_server import PROTOCOL, EngineServer, weights_stamp


class FakeEngine:
    """Streams ``max_tokens`` chunks, ``delay`` seconds apart; records how each stream ended."""

    instances: list[FakeEngine] = []

    def __init__(self, path: Path, settings: EngineSettings) -> None:
        self.ended: list[str] = []
        self.closed = False
        FakeEngine.instances.append(self)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        n = int(body.get("max_tokens", 3))
        sent = 0
        try:
            for i in range(n):
                await asyncio.sleep(float(body.get("delay", 0)))
                yield {"choices": [{"delta": {"content": f"t{i} "}}]}
                sent += 1
            yield {
                "choices": [{"delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": n, "prompt_tokens_details": {"cached_tokens": 7}},
            }
            self.ended.append("complete")
        finally:
            if sent < n:
                self.ended.append(f"stopped after {sent}")

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def engine_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # Short, private, and this test's own: unix socket paths are limited to about 100 bytes.
    directory = Path(tempfile.mkdtemp(prefix="me-"))
    monkeypatch.setenv("MOOT_ENGINE_DIR", str(directory))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def weights(engine_home: Path) -> Path:
    path = engine_home.parent / f"{engine_home.name}-weights.gguf"
    path.write_bytes(b"GGUF stand-in")
    yield path
    path.unlink(missing_ok=True)


@contextlib.contextmanager
def serving(weights: Path, *, idle_s: float = 0, factory: Any = FakeEngine,
            identity: str | None = None) -> Iterator[tuple[EngineServer, EnginePaths, threading.Thread]]:
    paths = EnginePaths.for_model(weights, identity=identity)
    server = EngineServer(
        name="fake", model_path=weights.resolve(), settings=EngineSettings(), socket_path=paths.socket,
        state_path=paths.state, pid_lock_path=paths.pid_lock, idle_s=idle_s, engine_factory=factory,
        identity=identity,
    )  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while engine_client.status(paths) is None:
        assert time.monotonic() < deadline, "the engine did not start"
        time.sleep(0.01)
    try:
        yield server, paths, thread
    finally:
        server.request_stop()
        thread.join(10)


def wait_for(predicate: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


async def collect(engine: SharedEngine, body: dict[str, Any]) -> list[dict[str, Any]]:
    return [chunk async for chunk in engine.stream(body)]


def test_requests_stream_through_the_engine_and_are_counted(weights: Path) -> None:
    with serving(weights) as (_server, paths, _thread):
        client = SharedEngine(weights, "fake", EngineSettings())
        chunks = asyncio.run(collect(client, {"max_tokens": 3}))
        text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
        assert text == "t0 t1 t2 "
        info = engine_client.status(paths)
        assert info is not None
        assert info["requests"] == 1 and info["active"] == 0
        assert info["prompt_tokens"] == 10 and info["cached_prompt_tokens"] == 7
        assert [c["pid"] for c in info["clients"]] == [os.getpid()]
        assert info["weights"] == weights_stamp(weights) and info["protocol"] == PROTOCOL


def test_a_client_that_hangs_up_mid_answer_frees_its_slot(weights: Path) -> None:
    with serving(weights) as (server, paths, _thread):
        client = SharedEngine(weights, "fake", EngineSettings())

        async def read_two_then_hang_up() -> None:
            async with contextlib.aclosing(client.stream({"max_tokens": 500, "delay": 0.02})) as chunks:
                seen = 0
                async for _ in chunks:
                    seen += 1
                    if seen == 2:
                        break

        asyncio.run(read_two_then_hang_up())
        assert wait_for(lambda: (engine_client.status(paths) or {}).get("active") == 0)
        engine = FakeEngine.instances[-1]
        assert wait_for(lambda: bool(engine.ended))
        assert engine.ended[0].startswith("stopped after"), engine.ended


def test_a_client_killed_with_sigkill_mid_answer_frees_its_slot(weights: Path) -> None:
    with serving(weights) as (_server, paths, _thread):
        script = (
            "import json, socket, sys\n"
            "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
            "s.sendall(json.dumps({'op': 'chat', 'body': {'max_tokens': 10000, 'delay': 0.01}}).encode() + b'\\n')\n"
            "f = s.makefile('rb'); f.readline(); print('streaming', flush=True)\n"
            "import time; time.sleep(60)\n"
        )
        child = subprocess.Popen([sys.executable, "-c", script, str(paths.socket)], stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "streaming"
            assert (engine_client.status(paths) or {}).get("active") == 1
            child.kill()
            child.wait(10)
            assert wait_for(lambda: (engine_client.status(paths) or {}).get("active") == 0)
            assert FakeEngine.instances[-1].ended[0].startswith("stopped after")
        finally:
            child.kill()


def test_an_idle_engine_exits_and_removes_its_socket(weights: Path) -> None:
    with serving(weights, idle_s=0.3) as (_server, paths, thread):
        thread.join(10)
        assert not thread.is_alive()
        assert not paths.socket.exists() and not paths.state.exists()
        assert FakeEngine.instances[-1].closed


def test_stop_ends_the_engine(weights: Path) -> None:
    with serving(weights) as (_server, paths, thread):
        assert engine_client.stop(paths) is True
        thread.join(10)
        assert not thread.is_alive() and not paths.socket.exists()
        assert engine_client.status(paths) is None and engine_client.stop(paths) is False


def test_a_second_engine_for_the_same_model_refuses_to_start(weights: Path) -> None:
    with serving(weights) as (_server, paths, _thread):
        second = EngineServer(
            name="fake", model_path=weights.resolve(), settings=EngineSettings(), socket_path=paths.socket,
            state_path=paths.state, pid_lock_path=paths.pid_lock, engine_factory=FakeEngine,
        )  # fmt: skip
        assert second.run() == 3
        assert engine_client.status(paths) is not None  # the first one still serves


def test_a_garbled_request_gets_an_error_and_the_engine_keeps_serving(weights: Path) -> None:
    with serving(weights) as (_server, paths, _thread):
        with socket.socket(socket.AF_UNIX) as raw:
            raw.connect(str(paths.socket))
            raw.sendall(b"this is not json\n")
            reply = json.loads(raw.makefile("rb").readline())
        assert "not one JSON object" in reply["error"]
        assert engine_client.call(paths, {"op": "launch"}) == {"error": "unknown request 'launch'"}
        assert engine_client.status(paths) is not None


def test_an_engine_that_dies_mid_answer_gives_a_clear_retryable_error(weights: Path, engine_home: Path) -> None:
    """A stand-in engine process that sends one chunk and vanishes (as kill -9 would)."""
    paths = EnginePaths.for_model(weights)
    stamp = weights_stamp(weights.resolve())
    ready = threading.Event()
    loop = asyncio.new_event_loop()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        message = json.loads(await reader.readline())
        if message["op"] == "status":
            writer.write(json.dumps({"status": {"protocol": PROTOCOL, "weights": stamp}}).encode() + b"\n")
        else:
            writer.write(json.dumps({"chunk": {"choices": [{"delta": {"content": "half"}}]}}).encode() + b"\n")
        await writer.drain()
        writer.close()

    async def serve() -> None:
        server = await asyncio.start_unix_server(handle, path=str(paths.socket))
        ready.set()
        async with server:
            await asyncio.sleep(30)

    thread = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
    thread.start()
    assert ready.wait(10)
    client = SharedEngine(weights, "fake", EngineSettings())
    with pytest.raises(EngineGone) as info:
        asyncio.run(collect(client, {}))
    assert info.value.retryable
    assert "stopped in the middle of a request" in info.value.one_line()
    assert "next request starts a new engine" in info.value.one_line()


def test_an_engine_on_replaced_weights_is_stopped_and_a_failed_start_names_the_log(weights: Path) -> None:
    with serving(weights) as (_server, paths, thread):
        replacement = weights.with_name(weights.name + ".new")
        replacement.write_bytes(b"GGUF other bytes")
        os.replace(replacement, weights)
        # The old engine serves bytes that are gone: it is stopped, and a new one is started on
        # the new file, which here is not a real model, so the start fails and says where to look.
        with pytest.raises(ModelError) as info:
            engine_client.ensure_engine(weights, name="fake", settings=EngineSettings())
        thread.join(10)
        assert not thread.is_alive()
        assert "exited while starting" in info.value.message and str(paths.log) in info.value.fix


def test_two_copies_of_the_bundled_weights_share_one_engine(weights: Path) -> None:
    """Two moot homes (two MOOT_MODELS_DIR) each assemble the same verified weights: one engine."""
    copy = weights.with_name(weights.stem + "-copy.gguf")
    copy.write_bytes(weights.read_bytes())
    try:
        with serving(weights, identity="local:0123abcd") as (_server, paths, thread):
            assert EnginePaths.for_model(copy, identity="local:0123abcd") == paths
            got = engine_client.ensure_engine(copy, name="fake", settings=EngineSettings(), identity="local:0123abcd")
            assert got == paths and thread.is_alive()  # served as it is, not stopped for "other" weights
            assert EnginePaths.for_model(copy) != paths  # a GGUF given by path is keyed by its path
    finally:
        copy.unlink(missing_ok=True)


def test_a_busy_engine_slow_to_answer_is_waited_for_not_replaced(weights: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On two cores with every slot decoding, a status reply came after its timeout and the
    client started a second engine (removing the first one's socket). A held pid lock means a
    live engine: the client waits for it."""
    with serving(weights) as (_server, paths, thread):
        real_status = engine_client.status
        silent = {"left": 3}  # the first status requests get no reply in time

        def slow_status(p: EnginePaths, timeout: float = 10.0) -> Any:
            if silent["left"] > 0:
                silent["left"] -= 1
                return None
            return real_status(p, timeout)

        started: list[Path] = []
        monkeypatch.setattr(engine_client, "status", slow_status)
        monkeypatch.setattr(engine_client, "_start", lambda *args, **kwargs: started.append(args[0]))
        got = engine_client.ensure_engine(weights, name="fake", settings=EngineSettings())
        assert got == paths and started == [] and silent["left"] == 0
        assert thread.is_alive() and paths.socket.exists()  # the first engine still serves, on its socket


@pytest.mark.parametrize("problem", ["file", "symlink", "open to others", "other owner"])
def test_an_unsafe_engine_directory_is_refused_with_the_fix(problem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "engines"
    if problem == "file":
        target.write_text("not a directory")
    elif problem == "symlink":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        target.symlink_to(tmp_path / "elsewhere")
    elif problem == "open to others":
        target.mkdir()
        target.chmod(0o777)
    else:
        if os.getuid() != 0:
            pytest.skip("only root can give a directory to another user")
        target.mkdir(mode=0o700)
        os.chown(target, 65534, 65534)
    monkeypatch.setenv("MOOT_ENGINE_DIR", str(target))
    with pytest.raises(ConfigError) as info:
        engine_client.engine_dir()
    line = info.value.one_line()
    assert str(target) in line and ("rm -r" in line or "chmod 700" in line)


def test_a_missing_engine_directory_is_made_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_ENGINE_DIR", str(tmp_path / "engines"))
    made = engine_client.engine_dir()
    assert made.is_dir() and (made.stat().st_mode & 0o777) == 0o700


def test_a_socket_path_too_long_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / ("x" * 90)
    monkeypatch.setenv("MOOT_ENGINE_DIR", str(deep))
    with pytest.raises(ConfigError) as info:
        EnginePaths.for_model(tmp_path / "m.gguf")
    assert "MOOT_ENGINE_DIR" in info.value.fix


def test_an_unknown_engine_mode_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_LOCAL_ENGINE", "cluster")
    with pytest.raises(ConfigError) as info:
        engine_client.engine_mode()
    assert "shared or inprocess" in info.value.fix
    monkeypatch.setenv("MOOT_LOCAL_ENGINE", "InProcess")
    assert engine_client.engine_mode() == "inprocess"


# ---------------------------------------------------------------- the command line


def moot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "moot", *args], capture_output=True, text=True, timeout=120)


def test_engine_status_stop_and_start_on_the_command_line(weights: Path, engine_home: Path) -> None:
    idle = moot("engine", "status", "--json")
    assert idle.returncode == 0 and json.loads(idle.stdout) == {
        "mode": "shared", "directory": str(engine_home), "engines": [],
    }  # fmt: skip
    assert "no engine is running" in moot("engine", "status").stdout
    with serving(weights) as (_server, _paths, thread):
        asyncio.run(collect(SharedEngine(weights, "fake", EngineSettings()), {"max_tokens": 2}))
        shown = json.loads(moot("engine", "status", "--json").stdout)["engines"]
        assert [(e["name"], e["pid"], e["requests"]) for e in shown] == [("fake", os.getpid(), 1)]
        table = moot("engine", "status").stdout
        assert "fake" in table and f"client pid {os.getpid()}" in table
        stopped = moot("engine", "stop", "--json")
        assert json.loads(stopped.stdout) == {"stopped": [{"model": "fake", "pid": os.getpid()}]}
        thread.join(10)
        assert not thread.is_alive()
    assert "no engine was running" in moot("engine", "stop").stdout
    remote = moot("engine", "start", "--model", "openai:gpt-4o-mini")
    assert remote.returncode == 2 and "not a local model" in remote.stderr and "Traceback" not in remote.stderr
