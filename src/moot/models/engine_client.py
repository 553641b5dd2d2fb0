"""Finding, starting and talking to the shared engine process of a model file.

Every moot process that uses a local model sends its requests to one engine process per
weight file (:mod:`moot.models.engine_server`), the way clients of Ollama or llama.cpp's
server share one loaded model: processes no longer each load the weights and fight over the
cores. The first process that needs the engine starts it; a lock file makes sure two
processes starting at the same instant start one engine; a client that finds a stale socket
or a dead engine starts a new one and tries once more.

Where things live: one private directory per user (``$MOOT_ENGINE_DIR``, else
``$XDG_RUNTIME_DIR/moot-engines``, else ``/tmp/moot-engines-<uid>``), mode 0700, owned by the
user; a directory that is not (a file, a symlink, another user's, open to others) is refused
with the fix. Per model file: ``<key>.sock`` (the socket), ``<key>.json`` (what runs there),
``<key>.pid.lock`` (held by the engine while it lives), ``<key>.start.lock`` (held by the
process starting it) and ``<key>.log`` (the engine's own messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: no flock and no unix-socket peer checks; the engine runs in-process there
    fcntl = None  # type: ignore[assignment]

from moot.errors import ConfigError, ModelConnectionError, ModelError
from moot.models.engine import EngineRejected, EngineSettings
from moot.models.engine_server import MAX_LINE, PROTOCOL, weights_stamp

DEFAULT_IDLE_S = 300.0
"""An engine with no request for this long exits and frees its memory (Ollama keeps a model
five minutes too); ``MOOT_ENGINE_IDLE_S`` or ``moot engine start --idle`` change it."""

START_TIMEOUT_S = 180.0
"""Loading the 0.5B weights takes about a second; a loaded 2-core machine can take far longer."""

RECHECK_S = 2.0
"""How long a client trusts its last check that the engine serves the current weight file
before checking again (a check is one status round trip and one stat)."""

SOCKET_PATH_MAX = 100
"""AF_UNIX paths are limited to 108 bytes on Linux (104 on macOS)."""


def engine_mode() -> str:
    """``shared`` (default: one engine process per model file) or ``inprocess``."""
    mode = os.environ.get("MOOT_LOCAL_ENGINE", "").strip().lower() or "shared"
    if mode not in ("shared", "inprocess"):
        raise ConfigError(
            f"MOOT_LOCAL_ENGINE={mode!r} is not a known engine mode", fix="set it to shared or inprocess, or unset it"
        )
    if fcntl is None or not hasattr(socket, "AF_UNIX"):
        return "inprocess"  # no file locks or unix sockets on this platform: nothing to share by
    return mode


def idle_timeout() -> float:
    raw = os.environ.get("MOOT_ENGINE_IDLE_S", "").strip()
    try:
        return float(raw) if raw else DEFAULT_IDLE_S
    except ValueError:
        raise ConfigError(f"MOOT_ENGINE_IDLE_S={raw!r} is not a number of seconds", fix="unset it or set seconds, e.g. 300") from None


def engine_dir(*, create: bool = True) -> Path:
    """The user's private engine directory, checked (and made, mode 0700, when missing)."""
    override = os.environ.get("MOOT_ENGINE_DIR", "").strip()
    if override:
        path = Path(override).expanduser()
    elif os.environ.get("XDG_RUNTIME_DIR"):
        path = Path(os.environ["XDG_RUNTIME_DIR"]) / "moot-engines"
    else:
        path = Path("/tmp") / f"moot-engines-{os.getuid()}"
    fix = f"remove it (rm -r {path}) or set MOOT_ENGINE_DIR to a folder only you can use"
    try:
        info = path.lstat()
    except FileNotFoundError:
        if not create:
            return path
        try:
            path.mkdir(mode=0o700, parents=False)
        except FileExistsError:
            pass  # another process made it first; it is checked below like any other
        except OSError as exc:
            raise ConfigError(f"cannot create the engine directory {path}: {exc.strerror}", fix=fix) from None
        info = path.lstat()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"the engine directory {path} is not a plain directory", fix=fix)
    if info.st_uid != os.getuid():
        raise ConfigError(f"the engine directory {path} belongs to another user (uid {info.st_uid})", fix=fix)
    if info.st_mode & 0o077:
        raise ConfigError(
            f"the engine directory {path} can be used by other users (mode {stat.S_IMODE(info.st_mode):o})",
            fix=f"chmod 700 {path}, or remove it",
        )
    return path


@dataclass(frozen=True)
class EnginePaths:
    """The files of one model file's engine."""

    directory: Path
    key: str

    @classmethod
    def for_model(cls, model_path: Path, directory: Path | None = None, identity: str | None = None) -> EnginePaths:
        """The engine files for a model: keyed by ``identity`` (the bundled weights' verified
        sha256, so two copies of the same weights in two homes share one engine), else by
        the file's resolved path."""
        directory = directory if directory is not None else engine_dir()
        key = hashlib.sha256((identity or str(model_path.resolve())).encode()).hexdigest()[:16]
        paths = cls(directory, key)
        if len(str(paths.socket)) > SOCKET_PATH_MAX:
            raise ConfigError(
                f"the engine socket path {paths.socket} is too long for a unix socket",
                fix="set MOOT_ENGINE_DIR to a shorter folder, e.g. /tmp/moot-engines",
            )
        return paths

    @property
    def socket(self) -> Path:
        return self.directory / f"{self.key}.sock"

    @property
    def state(self) -> Path:
        return self.directory / f"{self.key}.json"

    @property
    def pid_lock(self) -> Path:
        return self.directory / f"{self.key}.pid.lock"

    @property
    def start_lock(self) -> Path:
        return self.directory / f"{self.key}.start.lock"

    @property
    def log(self) -> Path:
        return self.directory / f"{self.key}.log"

    def read_state(self) -> dict[str, Any] | None:
        try:
            state = json.loads(self.state.read_text())
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) else None


# ---------------------------------------------------------------- blocking helpers


def _connect(path: Path, timeout: float = 5.0) -> socket.socket | None:
    """A connected socket, or ``None`` when nothing listens there (no file, or a stale one)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK):
            return None
        raise ModelConnectionError(f"cannot reach the shared engine at {path}: {exc.strerror}") from None
    return sock


def call(paths: EnginePaths, message: dict[str, Any], timeout: float = 10.0) -> dict[str, Any] | None:
    """One short request (status, stop); ``None`` when no engine runs."""
    sock = _connect(paths.socket, timeout)
    if sock is None:
        return None
    with sock, sock.makefile("rwb") as stream:
        try:
            stream.write(json.dumps(message).encode() + b"\n")
            stream.flush()
            line = stream.readline()
        except OSError:
            return None
    try:
        reply = json.loads(line) if line else None
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


def status(paths: EnginePaths, timeout: float = 10.0) -> dict[str, Any] | None:
    """What the engine reports about itself, or ``None`` when none runs for these paths."""
    reply = call(paths, {"op": "status"}, timeout)
    return reply.get("status") if reply else None


def running_engines(directory: Path | None = None) -> list[dict[str, Any]]:
    """The status of every engine that answers in the engine directory."""
    directory = directory if directory is not None else engine_dir(create=False)
    if not directory.is_dir():
        return []
    found = []
    for sock in sorted(directory.glob("*.sock")):
        info = status(EnginePaths(directory, sock.stem), timeout=5.0)
        if info is not None:
            found.append(info)
    return found


def stop(paths: EnginePaths, timeout: float = 30.0) -> bool:
    """Ask the engine to exit and wait until it has; False when none was running."""
    reply = call(paths, {"op": "stop"})
    if reply is None:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _holds_lock(paths.pid_lock):
        time.sleep(0.05)
    return True


def _holds_lock(path: Path) -> bool:
    """Whether a live process holds ``path``'s lock (an engine holds its pid lock until it exits)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock we may have taken
    return False


@contextlib.contextmanager
def _start_lock(paths: EnginePaths, timeout: float) -> Iterator[None]:
    fd = os.open(paths.start_lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ModelError(
                        "another process has been starting the shared engine for too long",
                        fix=f"see {paths.log}, or run: moot engine stop",
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


_children: list[subprocess.Popen[bytes]] = []
"""Engines this process started, polled now and then so an exited one leaves no zombie."""


def _reap() -> None:
    for child in list(_children):
        if child.poll() is not None:
            _children.remove(child)


def ensure_engine(
    model_path: Path,
    *,
    name: str,
    settings: EngineSettings,
    idle_s: float | None = None,
    paths: EnginePaths | None = None,
    identity: str | None = None,
) -> EnginePaths:
    """Make sure an engine serves ``model_path`` (starting one if none answers) and return its
    paths. Blocking: call it in a thread from async code."""
    _reap()
    model_path = model_path.resolve()
    paths = paths or EnginePaths.for_model(model_path, identity=identity)
    if _serves(paths, model_path, identity):
        return paths
    with _start_lock(paths, START_TIMEOUT_S):
        if _serves(paths, model_path, identity):  # started by the process that held the lock before us
            return paths
        if _wait_for_busy_engine(paths, model_path, identity):
            return paths
        _start(paths, model_path, name=name, settings=settings, idle_s=idle_timeout() if idle_s is None else idle_s,
               identity=identity)
    return paths


def _wait_for_busy_engine(paths: EnginePaths, model_path: Path, identity: str | None) -> bool:
    """Whether a live engine, too busy to answer a status request in time, answers later.

    An engine holds its pid lock until it exits, so a held lock means a live engine, however
    slowly it answers: on two cores with every slot decoding and several moot processes
    starting, a status reply took longer than its timeout, and the client took the engine for
    dead, removed its socket and started a second one. Only when the lock is free (or the
    engine never answers) is a new engine started."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while _holds_lock(paths.pid_lock):
        if _serves(paths, model_path, identity):
            return True
        if time.monotonic() > deadline:
            raise ModelError(f"the shared engine (pid lock {paths.pid_lock}) has not answered for {START_TIMEOUT_S:.0f} s",
                             fix=f"see {paths.log}, or run: moot engine stop")
        time.sleep(0.5)
    return False


def _serves(paths: EnginePaths, model_path: Path, identity: str | None = None) -> bool:
    """Whether a live engine of this protocol serves the current bytes of ``model_path``.

    An engine whose weight file was replaced since it loaded it is stopped here, so the
    caller starts a new one on the new file. An engine keyed by a verified identity serves
    every copy of those bytes (the weights check compared this copy with the sidecar)."""
    info = status(paths)
    if info is None:
        return False
    if info.get("protocol") == PROTOCOL and identity is not None and info.get("identity") == identity:
        return True
    try:
        current = weights_stamp(model_path)
    except OSError:
        raise ConfigError(f"the model file {model_path} is gone", fix="run: moot setup") from None
    if info.get("protocol") != PROTOCOL or info.get("weights") != current:
        stop(paths)
        return False
    return True


def _start(paths: EnginePaths, model_path: Path, *, name: str, settings: EngineSettings, idle_s: float,
           identity: str | None = None) -> None:
    for leftover in (paths.socket, paths.state):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
    command = [
        sys.executable, "-m", "moot.models.engine_server",
        "--name", name,
        "--model-path", str(model_path),
        "--socket", str(paths.socket),
        "--state", str(paths.state),
        "--pid-lock", str(paths.pid_lock),
        "--idle", str(idle_s),
        "--slots", str(settings.slots),
        "--context", str(settings.context),
        "--threads", str(settings.threads),
        "--prompt-cache", "1" if settings.prompt_cache else "0",
        *(["--identity", identity] if identity else []),
    ]  # fmt: skip
    log = os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        # Its own session: a Ctrl-C in the terminal that started it, or the end of that
        # command, does not take the engine from the other processes using it.
        child = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True
        )
    finally:
        os.close(log)
    _children.append(child)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if child.poll() is not None:
            tail = _log_tail(paths.log)
            if child.returncode == 3:  # another engine holds the lock: it is starting or running
                if _wait_for_socket(paths, deadline):
                    return
            raise ModelError(
                f"the shared engine for {name} exited while starting (code {child.returncode}): {tail}",
                fix=f"see {paths.log}; MOOT_LOCAL_ENGINE=inprocess runs the model inside this process instead",
            )
        if paths.state.exists() and status(paths, timeout=5.0) is not None:
            return
        time.sleep(0.05)
    child.kill()
    raise ModelError(
        f"the shared engine for {name} did not start within {START_TIMEOUT_S:.0f}s", fix=f"see {paths.log}"
    )


def _wait_for_socket(paths: EnginePaths, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if status(paths, timeout=5.0) is not None:
            return True
        if not _holds_lock(paths.pid_lock):
            return False
        time.sleep(0.05)
    return False


def _log_tail(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return " | ".join(lines[-3:])[-400:] or "(no output)"


def client_info() -> dict[str, Any]:
    """Who is asking, for ``moot engine status``: the pid and the command's first words."""
    if not sys.argv or not sys.argv[0]:
        return {"pid": os.getpid(), "command": "python"}
    program = Path(sys.argv[0])
    name = program.parent.name if program.name == "__main__.py" else program.name  # python -m moot / pytest
    return {"pid": os.getpid(), "command": " ".join([name, *sys.argv[1:2]])}


# ---------------------------------------------------------------- the async client


class EngineGone(ModelConnectionError):
    """The engine process ended in the middle of a request (killed, crashed, stopped)."""


@dataclass
class SharedEngine:
    """The client side of one model file's shared engine, used by :class:`LocalModel`."""

    model_path: Path
    name: str
    settings: EngineSettings
    identity: str | None = None
    """The verified weights' identity for bundled models (see :meth:`EnginePaths.for_model`)."""
    _paths: EnginePaths | None = field(default=None, init=False, repr=False)
    _checked_at: float = field(default=0.0, init=False, repr=False)

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The chunks of one chat completion, decoded by the shared engine.

        Connecting retries once: a dead engine, a stale socket or an engine that resets the
        connection before answering is replaced by a new engine. An engine that dies mid-answer raises :class:`EngineGone` (retryable: the next request
        starts a new engine). Closing the iterator early hangs up, which frees the slot."""
        for attempt in (1, 2):
            reader, writer = await self._open()
            answered = False
            try:
                try:
                    writer.write(
                        json.dumps({"op": "chat", "body": body, "client": client_info()}, separators=(",", ":")).encode()
                        + b"\n"
                    )
                    await writer.drain()
                    while True:
                        line = await reader.readline()
                        if not line:
                            raise EngineGone(
                                f"the shared engine for {self.name} stopped in the middle of a request",
                                fix="retry: the next request starts a new engine (moot engine status shows it)",
                            )
                        message = json.loads(line)
                        if "chunk" in message:
                            answered = True
                            yield message["chunk"]
                        elif message.get("done"):
                            return
                        elif "rejected" in message:
                            raise EngineRejected(str(message["rejected"]), fix="check the tool and output schemas")
                        else:
                            raise ModelError(f"the shared engine failed: {message.get('error', message)}")
                except (ConnectionResetError, BrokenPipeError) as exc:
                    # An engine killed as we connected (a SIGKILLed process keeps its socket until the
                    # kernel has torn it down) resets the connection: check again and start a new one,
                    # once; a reset after the answer began is the engine dying mid-answer.
                    if answered or attempt == 2:
                        raise EngineGone(
                            f"the shared engine for {self.name} stopped in the middle of a request",
                            fix="retry: the next request starts a new engine (moot engine status shows it)",
                        ) from exc
                    self._paths = None
            finally:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        for attempt in (1, 2):
            paths = self._paths
            if paths is None or time.monotonic() - self._checked_at > RECHECK_S:
                # Checks that the engine serves the current weight file, starting one if needed.
                paths = await asyncio.to_thread(ensure_engine, self.model_path, name=self.name, settings=self.settings,
                                                identity=self.identity)
                self._paths, self._checked_at = paths, time.monotonic()
            try:
                return await asyncio.open_unix_connection(str(paths.socket), limit=MAX_LINE)
            except (FileNotFoundError, ConnectionRefusedError):
                self._paths = None  # a dead engine: the next attempt starts a new one
                if attempt == 2:
                    raise EngineGone(
                        f"the shared engine for {self.name} went away twice while connecting",
                        fix=f"see {paths.log}; MOOT_LOCAL_ENGINE=inprocess runs the model in this process",
                    ) from None
        raise AssertionError("unreachable")

    def describe(self) -> dict[str, Any]:
        """The running engine's status, without starting one."""
        try:
            paths = EnginePaths.for_model(self.model_path, engine_dir(create=False), identity=self.identity)
            info = status(paths, timeout=2.0) if paths.directory.is_dir() else None
        except (ConfigError, ModelError):
            info = None
        return info or {}


__all__ = [
    "DEFAULT_IDLE_S",
    "EngineGone",
    "EnginePaths",
    "SharedEngine",
    "engine_dir",
    "engine_mode",
    "ensure_engine",
    "idle_timeout",
    "running_engines",
    "status",
    "stop",
]
