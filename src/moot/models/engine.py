"""The llama.cpp engine for one GGUF file, loaded in this process (through ``xllamacpp``).

Two users: :class:`moot.models.local.LocalModel` with ``MOOT_LOCAL_ENGINE=inprocess``, and
the shared engine process (:mod:`moot.models.engine_server`) that serves every moot process
on the machine. Both read an answer the same way, as an async stream of OpenAI-style chunks
(:meth:`Engine.stream`), so the two paths differ only in where the chunks come from.

llama.cpp always opens an HTTP listener of its own. It is bound to a unix socket in a private
0700 directory and protected by a random API key, so no other user or process can use it;
moot never uses that listener.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import secrets
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moot.errors import ConfigError, ModelError


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a whole number", fix=f"unset {name} or set a number") from None


@dataclass(frozen=True)
class EngineSettings:
    """How the engine is loaded. Environment overrides: MOOT_LOCAL_SLOTS, _CONTEXT, _THREADS,
    MOOT_LOCAL_PROMPT_CACHE (0 turns prefix reuse off, for measuring what it saves)."""

    slots: int = 4
    """Requests decoded in parallel (llama.cpp ``n_parallel``); more wait in the engine's queue."""
    context: int = 8192
    """Tokens of KV cache shared by all slots (unified), so one long prompt can use it all."""
    threads: int = 2
    prompt_cache: bool = True
    """Reuse the longest cached prefix of a prompt (system prompt, retrieved facts) instead of
    evaluating it again; llama.cpp keeps one per slot and a host-memory cache beside them."""

    @classmethod
    def from_env(cls) -> EngineSettings:
        cores = os.cpu_count() or 2
        return cls(
            slots=max(1, _env_int("MOOT_LOCAL_SLOTS", 4)),
            context=max(512, _env_int("MOOT_LOCAL_CONTEXT", 8192)),
            threads=max(1, _env_int("MOOT_LOCAL_THREADS", min(cores, 8))),
            prompt_cache=_env_int("MOOT_LOCAL_PROMPT_CACHE", 1) != 0,
        )

    def as_dict(self) -> dict[str, Any]:
        return {"slots": self.slots, "context": self.context, "threads": self.threads, "prompt_cache": self.prompt_cache}


PROMPT_CACHE_MIB = 1024
"""Host memory for cached prompt prefixes, beyond what each slot keeps in its KV cache."""


class EngineRejected(ModelError):
    """The engine refused a request it cannot serve (for example a schema it cannot compile)."""


class Engine:
    """One loaded model file: the xllamacpp server, its private listener, a thread pool."""

    def __init__(self, path: Path, settings: EngineSettings) -> None:
        import xllamacpp

        self.path = path
        self.settings = settings
        self._dir = tempfile.mkdtemp(prefix="moot-engine-")
        os.chmod(self._dir, 0o700)
        self.socket = Path(self._dir) / "engine.sock"
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = settings.context
        params.n_parallel = settings.slots
        params.kv_unified = True
        params.cache_prompt = settings.prompt_cache
        # llama.cpp's host-memory prompt cache defaults to 8 GiB; an engine that serves a whole
        # machine for hours must stay bounded (1 GiB holds about 85,000 tokens of the 0.5B model).
        params.cache_ram_mib = PROMPT_CACHE_MIB if settings.prompt_cache else 0
        params.cpuparams.n_threads = settings.threads
        params.cpuparams_batch.n_threads = settings.threads
        params.warmup = False
        params.verbosity = -1  # keeps llama.cpp's load log off the user's terminal
        params.hostnames = [str(self.socket)]
        params.api_keys = [secrets.token_urlsafe(24)]
        try:
            self.server = xllamacpp.Server(params)
        except BaseException:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        # Blocking calls run here, not in asyncio's default pool, so they never starve it.
        self.executor = ThreadPoolExecutor(max_workers=max(8, settings.slots * 4), thread_name_prefix="moot-local")
        self.refs = 0

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The chunks of one streamed chat completion. Closing the iterator early (a timeout,
        a cancelled task, a client that hung up) stops decoding, so the slot frees up."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        stop = threading.Event()

        def on_chunk(chunk: dict[str, Any]) -> bool:
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
            return stop.is_set()

        def run() -> Any:
            try:
                return self.server.handle_chat_completions(body, on_chunk)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, None)

        future = loop.run_in_executor(self.executor, run)
        try:
            while (chunk := await queue.get()) is not None:
                yield chunk
            try:
                result = await future
            except ValueError as exc:  # e.g. a schema the grammar compiler cannot handle
                raise EngineRejected(f"the engine rejected the request: {exc}", fix="check the tool and output schemas") from None
            if isinstance(result, dict) and "error" in result:
                yield {"error": result["error"]}
        finally:
            stop.set()

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.__dict__.pop("server", None)  # dropping the last reference unloads the weights
        shutil.rmtree(self._dir, ignore_errors=True)


_engines: dict[Path, Engine] = {}
_engines_lock = threading.Lock()
_loads: Counter[Path] = Counter()


def engine_loads(path: str | Path) -> int:
    """How many times this process loaded the file (tests and benchmarks check sharing)."""
    return _loads[Path(path).resolve()]


def acquire(path: Path, settings: EngineSettings) -> Engine:
    """The process's engine for ``path``, loading it on first use; pair with :func:`release`."""
    with _engines_lock:
        engine = _engines.get(path)
        if engine is None:
            engine = Engine(path, settings)
            _engines[path] = engine
            _loads[path] += 1
        engine.refs += 1
        return engine


def release(engine: Engine) -> None:
    with _engines_lock:
        engine.refs -= 1
        if engine.refs <= 0 and _engines.get(engine.path) is engine:
            del _engines[engine.path]
            engine.close()


@atexit.register
def _close_all() -> None:
    with _engines_lock:
        for engine in _engines.values():
            engine.close()
        _engines.clear()


__all__ = ["Engine", "EngineRejected", "EngineSettings", "acquire", "engine_loads", "release"]
