"""The shared engine process: one loaded model file serving every moot process on the machine.

Started by the first moot process that needs the model (see :mod:`moot.models.engine_client`)
or by ``moot engine start``; it listens only on a unix socket in the user's private engine
directory, answers requests from all clients through the engine's parallel slots, and exits
after ``idle_s`` seconds with no request in flight.

The protocol is one JSON object per line. A client sends one request line and reads lines
until the answer ends:

- ``{"op": "chat", "body": {...}, "client": {"pid": N, "command": "moot ask"}}`` answers
  ``{"chunk": {...}}`` lines (OpenAI-style stream chunks), then ``{"done": true}``, or
  ``{"rejected": "..."}`` / ``{"error": "..."}``. A client that hangs up stops the decoding,
  so its slot frees up for others.
- ``{"op": "status"}`` answers ``{"status": {...}}``; ``{"op": "stop"}`` answers
  ``{"stopping": true}`` and the engine exits.

Only processes of the same user can connect: the directory is 0700, the socket 0600, and on
Linux each connection's peer credentials are checked as well.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: see moot.models.engine_client.engine_mode
    fcntl = None  # type: ignore[assignment]

from moot.models.engine import Engine, EngineRejected, EngineSettings

PROTOCOL = 1
"""Bumped when the line protocol changes; a client refuses an engine of another protocol."""

MAX_LINE = 64 * 1024 * 1024
"""A request line holds a whole prompt; 64 MiB is far above any context window."""


def weights_stamp(path: Path) -> dict[str, int]:
    """What identifies the bytes of a weight file without reading them: a file replaced or
    rewritten in place changes its inode, size or modification time."""
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _peer_uid(sock: socket.socket | None) -> int | None:
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None  # not Linux: the 0700 directory is the guard
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return uid


@dataclass
class ClientRecord:
    """A process that has sent requests to this engine."""

    pid: int
    command: str
    first_seen: float
    last_seen: float
    requests: int = 0
    active: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "command": self.command,
            "requests": self.requests,
            "active": self.active,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
        }


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class EngineServer:
    """Serves one model file on one unix socket until stopped or idle."""

    name: str
    model_path: Path
    settings: EngineSettings
    socket_path: Path
    state_path: Path
    pid_lock_path: Path
    idle_s: float = 300.0
    identity: str | None = None
    """The verified identity of the weights (bundled models), shared by every copy of them."""
    started_at: float = field(default_factory=time.time)
    clients: dict[int, ClientRecord] = field(default_factory=dict)
    active: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    _last_activity: float = field(default_factory=time.monotonic)
    engine_factory: Callable[[Path, EngineSettings], Any] = Engine
    """Loads the weights; tests pass a stand-in with the same ``stream``/``close`` methods."""
    _stop: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _engine: Any = None
    _stamp: dict[str, int] = field(default_factory=dict)

    # ------------------------------------------------------------ lifecycle

    def request_stop(self) -> None:
        """Stop serving (thread-safe); the engine exits as if told ``stop``."""
        if self._stop is not None and self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between: already stopped
                self._loop.call_soon_threadsafe(self._stop.set)

    def run(self) -> int:
        """Hold the engine's lock, load the weights, serve; 3 if another engine holds the lock."""
        lock_fd = os.open(self.pid_lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"an engine for {self.name} is already running", file=sys.stderr)
            os.close(lock_fd)
            return 3
        try:
            return asyncio.run(self._serve())
        finally:
            os.close(lock_fd)  # releases the lock: the next client may start a new engine

    async def _serve(self) -> int:
        self._stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if threading.current_thread() is threading.main_thread():
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.add_signal_handler(sig, self._stop.set)
        self._stamp = weights_stamp(self.model_path)
        self._engine = await asyncio.to_thread(self.engine_factory, self.model_path, self.settings)
        # We hold the lock, so a socket file left here belongs to a dead engine.
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        old_umask = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(self._handle, path=str(self.socket_path), limit=MAX_LINE)
        finally:
            os.umask(old_umask)
        write_json_atomic(self.state_path, self._state())
        watcher = asyncio.create_task(self._watch_idle())
        try:
            await self._stop.wait()
        finally:
            watcher.cancel()
            server.close()
            self._remove_own_files()
            engine, self._engine = self._engine, None
            engine.close()
        return 0

    def _remove_own_files(self) -> None:
        try:
            state = json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            state = {}
        if state.get("pid") == os.getpid():
            with contextlib.suppress(FileNotFoundError):
                self.state_path.unlink()
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()

    async def _watch_idle(self) -> None:
        assert self._stop is not None
        while True:
            await asyncio.sleep(0.5)
            if self.idle_s > 0 and self.active == 0 and time.monotonic() - self._last_activity >= self.idle_s:
                self._stop.set()
                return

    def _state(self) -> dict[str, Any]:
        return {
            "protocol": PROTOCOL,
            "pid": os.getpid(),
            "name": self.name,
            "model_path": str(self.model_path),
            "weights": self._stamp,
            "identity": self.identity,
            "socket": str(self.socket_path),
            "settings": self.settings.as_dict(),
            "idle_s": self.idle_s,
            "started_at": self.started_at,
        }

    def status(self) -> dict[str, Any]:
        for pid in [pid for pid, c in self.clients.items() if not c.active and not _pid_alive(pid)]:
            del self.clients[pid]
        return {
            **self._state(),
            "uptime_s": round(time.time() - self.started_at, 1),
            "idle_for_s": round(time.monotonic() - self._last_activity, 1) if not self.active else 0.0,
            "active": self.active,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "cached_prompt_tokens": self.cached_tokens,
            "output_tokens": self.output_tokens,
            "clients": [c.as_dict() for c in sorted(self.clients.values(), key=lambda c: c.first_seen)],
        }

    # ------------------------------------------------------------ connections

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if (uid := _peer_uid(writer.get_extra_info("socket"))) is not None and uid != os.getuid():
                return  # another user: the directory's mode should have kept them out already
            try:
                line = await reader.readline()
                message = json.loads(line) if line else None
            except (ValueError, asyncio.LimitOverrunError):
                await self._send(writer, {"error": "the request line is not one JSON object"})
                return
            if not isinstance(message, dict):
                return
            op = message.get("op")
            if op == "chat" and isinstance(message.get("body"), dict):
                await self._chat(message, reader, writer)
            elif op == "status":
                await self._send(writer, {"status": self.status()})
            elif op == "stop":
                await self._send(writer, {"stopping": True})
                assert self._stop is not None
                self._stop.set()
            else:
                await self._send(writer, {"error": f"unknown request {op!r}"})
        except (ConnectionError, BrokenPipeError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        await writer.drain()

    def _client(self, info: Any) -> ClientRecord:
        info = info if isinstance(info, dict) else {}
        pid = int(info.get("pid") or 0)
        now = time.time()
        record = self.clients.get(pid)
        if record is None:
            record = self.clients[pid] = ClientRecord(pid, str(info.get("command") or "?")[:120], now, now)
        record.last_seen = now
        return record

    async def _chat(self, message: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._engine is not None
        client = self._client(message.get("client"))
        client.requests += 1
        client.active += 1
        self.requests += 1
        self.active += 1
        self._last_activity = time.monotonic()
        stream = asyncio.current_task()
        assert stream is not None

        async def watch_hang_up() -> None:
            # A client sends nothing after its request line: EOF means it went away (killed,
            # timed out, cancelled), and decoding for it would only take a slot from others.
            with contextlib.suppress(Exception):
                await reader.read(1)
            stream.cancel()

        watcher = asyncio.create_task(watch_hang_up())
        try:
            async with contextlib.aclosing(self._engine.stream(message["body"])) as chunks:
                async for chunk in chunks:
                    self._count(chunk)
                    await self._send(writer, {"chunk": chunk})
            await self._send(writer, {"done": True})
        except asyncio.CancelledError:
            if self._stop is not None and self._stop.is_set():
                raise
            # the client hung up: the closed stream already told the engine to stop
        except EngineRejected as exc:
            with contextlib.suppress(ConnectionError):
                await self._send(writer, {"rejected": exc.message})
        except (ConnectionError, BrokenPipeError):
            pass
        except Exception as exc:  # the engine failed: tell this client, keep serving others
            with contextlib.suppress(ConnectionError):
                await self._send(writer, {"error": f"{type(exc).__name__}: {exc}"})
        finally:
            watcher.cancel()
            client.active -= 1
            self.active -= 1
            self._last_activity = time.monotonic()

    def _count(self, chunk: dict[str, Any]) -> None:
        usage = chunk.get("usage")
        if not isinstance(usage, dict):
            return
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.output_tokens += int(usage.get("completion_tokens") or 0)
        details = usage.get("prompt_tokens_details") or {}
        self.cached_tokens += int(details.get("cached_tokens") or 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m moot.models.engine_server", description=__doc__.split("\n")[0])
    parser.add_argument("--name", required=True, help="the model string it serves, for status displays")
    parser.add_argument("--model-path", required=True, type=Path)
    parser.add_argument("--socket", required=True, type=Path)
    parser.add_argument("--state", required=True, type=Path)
    parser.add_argument("--pid-lock", required=True, type=Path)
    parser.add_argument("--idle", type=float, default=300.0, help="seconds without requests before exiting; 0 never")
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-cache", type=int, default=1)
    parser.add_argument("--identity", default=None, help="the weights' verified identity (bundled models)")
    args = parser.parse_args(argv)
    server = EngineServer(
        name=args.name,
        model_path=args.model_path.resolve(),
        settings=EngineSettings(
            slots=args.slots, context=args.context, threads=args.threads, prompt_cache=bool(args.prompt_cache)
        ),
        socket_path=args.socket,
        state_path=args.state,
        pid_lock_path=args.pid_lock,
        idle_s=args.idle,
        identity=args.identity,
    )
    return server.run()


if __name__ == "__main__":
    sys.exit(main())
