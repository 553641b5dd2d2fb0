"""The embedded model: a GGUF file run in-process by llama.cpp (through ``xllamacpp``).

No key, no network, no server to start. One loaded engine per model file per process is
shared by every :class:`LocalModel` on that file, so parallel sub-agents use the engine's
parallel slots instead of loading the weights twice. The engine is created on the first
request, in a worker thread, so building a model (``infer_model("local")``) is instant.

The engine always opens an HTTP listener of its own. It is bound to a unix socket in a
private 0700 directory and protected by a random API key, so no other user or process can
use it; moot itself calls the engine in-process and never uses that listener.

Tool calls and structured output use the engine's JSON-schema constrained decoding (see
:mod:`moot.models.toolchoice` for why and how).
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
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moot.errors import ConfigError, MalformedResponseError, ModelError, ModelTimeoutError
from moot.models import toolchoice
from moot.models.base import (
    AssistantMessage,
    Model,
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamEvent,
    SystemMessage,
    TextDelta,
    ToolResultMessage,
    Usage,
    UserMessage,
    parse_json_output,
)
from moot.models.testing import check_allowed
from moot.models.weights import DEFAULT_VARIANT, ensure_weights, get_variant, weights_path

MODEL_VARIANTS = {"local": DEFAULT_VARIANT, "local-1.5b": "qwen2.5-coder-1.5b"}
"""Model strings of the bundled weights, and the weights variant each one uses."""

DEFAULT_MAX_TOKENS = 1024
"""Used when a request sets no ``max_tokens``: a small model can repeat itself until the
context is full, and every loop in moot needs a bound."""


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    try:
        return int(value) if value else default
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a whole number", fix=f"unset {name} or set a number") from None


@dataclass(frozen=True)
class EngineSettings:
    """How the engine is loaded. Environment overrides: MOOT_LOCAL_SLOTS, _CONTEXT, _THREADS."""

    slots: int = 4
    """Requests decoded in parallel (llama.cpp ``n_parallel``); more wait in the engine's queue."""
    context: int = 8192
    """Tokens of KV cache shared by all slots (unified), so one long prompt can use it all."""
    threads: int = 2

    @classmethod
    def from_env(cls) -> EngineSettings:
        cores = os.cpu_count() or 2
        return cls(
            slots=max(1, _env_int("MOOT_LOCAL_SLOTS", 4)),
            context=max(512, _env_int("MOOT_LOCAL_CONTEXT", 8192)),
            threads=max(1, _env_int("MOOT_LOCAL_THREADS", min(cores, 8))),
        )


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

    def chat(self, body: dict[str, Any], on_chunk: Callable[[dict[str, Any]], bool]) -> Any:
        """Stream one chat completion; ``on_chunk`` returns True to stop generating."""
        return self.server.handle_chat_completions(body, on_chunk)

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


def _acquire(path: Path, settings: EngineSettings) -> Engine:
    with _engines_lock:
        engine = _engines.get(path)
        if engine is None:
            engine = Engine(path, settings)
            _engines[path] = engine
            _loads[path] += 1
        engine.refs += 1
        return engine


def _release(engine: Engine) -> None:
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


# --------------------------------------------------------------------------- the model


def _openai_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """Messages for a plain (no tools) request, in the OpenAI format the chat template reads."""
    import json

    out: list[dict[str, Any]] = []
    for message in request.messages:
        if isinstance(message, (SystemMessage, UserMessage)):
            out.append({"role": message.role, "content": message.content})
        elif isinstance(message, AssistantMessage):
            item: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                item["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in message.tool_calls
                ]
            out.append(item)
        elif isinstance(message, ToolResultMessage):
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content})
    return out


@dataclass
class LocalModel(Model):
    """A GGUF model run in-process. Build it with :func:`load_local`.

    Sampling defaults to temperature 0, so the same request gives the same answer (with one
    request in flight; parallel slots can change floating-point order slightly).
    ``max_tool_rounds``: after this many tool-call turns since the last user message the
    model must answer; the 0.5B model otherwise calls the same tool again after every result
    (measured: 10/10 repeat calls; forced answer 10/10 correct).
    """

    name: str
    path: Path | None = None
    """The GGUF file; ``None`` for a bundled variant until its weights are assembled."""
    variant: str | None = None
    settings: EngineSettings = field(default_factory=EngineSettings.from_env)
    max_tool_rounds: int = 1
    _engine: Engine | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    # ---------------------------------------------------------------- engine

    def _resolve_path(self) -> Path:
        if self.path is None:
            self.path = ensure_weights(self.variant or DEFAULT_VARIANT)
        return self.path.resolve()

    def _get_engine(self) -> Engine:
        with self._lock:
            if self._engine is None:
                self._engine = _acquire(self._resolve_path(), self.settings)
            return self._engine

    async def engine(self) -> Engine:
        """The shared engine for this model's file, loading it on first use."""
        if self._engine is not None:
            return self._engine
        return await asyncio.to_thread(self._get_engine)

    async def aclose(self) -> None:
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            _release(engine)

    def describe(self) -> dict[str, Any]:
        path = self.path or (weights_path(self.variant) if self.variant else None)
        info: dict[str, Any] = {
            "provider": "local",
            "model": self.name,
            "path": str(path) if path else "",
            "bytes": path.stat().st_size if path and path.exists() else None,
            "slots": self.settings.slots,
            "context": self.settings.context,
            "threads": self.settings.threads,
            "loaded": self._engine is not None,
            "listener": f"unix:{self._engine.socket}" if self._engine else "unix socket in a private 0700 dir (on load)",
        }
        if self.variant:
            info["weights"] = get_variant(self.variant).title
        return info

    # ---------------------------------------------------------------- requests

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        s = request.settings
        body: dict[str, Any] = {
            "max_tokens": s.max_tokens or DEFAULT_MAX_TOKENS,
            "temperature": 0.0 if s.temperature is None else s.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if s.top_p is not None:
            body["top_p"] = s.top_p
        if s.seed is not None:
            body["seed"] = s.seed
        if s.stop:
            body["stop"] = list(s.stop)
        if request.tools:
            allow = toolchoice.tool_rounds_since_user(request.messages) < self.max_tool_rounds
            schema = toolchoice.choice_schema(request.tools, request.output, allow_calls=allow)
            body["messages"] = toolchoice.render_messages(request.messages)
            # The chat template lists the tools in Qwen's own words; that made the 0.5B model
            # pick the right tool 10/10, against 0/10 with our own prompt (see docs/models.md).
            body["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in request.tools
            ]
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "choice", "schema": schema}}
        else:
            body["messages"] = _openai_messages(request)
            if request.output is not None:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": request.output.name, "schema": request.output.json_schema},
                }
        return body

    async def _generate(self, request: ModelRequest, on_text: Callable[[str], None] | None) -> ModelResponse:
        check_allowed(self.name)
        engine = await self.engine()
        body = self._body(request)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        stop = threading.Event()

        def on_chunk(chunk: dict[str, Any]) -> bool:
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
            return stop.is_set()

        def run() -> Any:
            try:
                return engine.chat(body, on_chunk)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, None)

        future = loop.run_in_executor(engine.executor, run)
        pieces: list[str] = []
        usage = Usage(requests=1)
        finish = "stop"
        error: str | None = None
        try:
            async with asyncio.timeout(request.settings.timeout_s):
                while (chunk := await queue.get()) is not None:
                    if "error" in chunk:
                        error = str(chunk["error"].get("message", chunk["error"]))
                    for choice in chunk.get("choices") or ():
                        text = (choice.get("delta") or {}).get("content")
                        if text:
                            pieces.append(text)
                            if on_text is not None:
                                on_text(text)
                        finish = choice.get("finish_reason") or finish
                    if chunk.get("usage"):
                        usage = Usage(
                            input_tokens=chunk["usage"].get("prompt_tokens", 0),
                            output_tokens=chunk["usage"].get("completion_tokens", 0),
                            requests=1,
                        )
                result = await future
        except TimeoutError:
            stop.set()
            raise ModelTimeoutError(
                f"{self.name} gave no complete answer within {request.settings.timeout_s:g}s",
                fix="raise timeout_s or lower max_tokens",
            ) from None
        except ValueError as exc:  # the engine rejects a request it cannot serve (e.g. a bad schema)
            raise ModelError(f"{self.name} rejected the request: {exc}", fix="check the tool and output schemas") from None
        except BaseException:
            stop.set()  # cancelled: stop decoding so the slot frees up
            raise
        if isinstance(result, dict) and "error" in result:
            error = str(result["error"].get("message", result["error"]))
        if error:
            raise ModelError(f"{self.name} failed: {error}", fix="shorten the prompt or raise MOOT_LOCAL_CONTEXT")
        return self._response(request, "".join(pieces), usage, finish)

    def _response(self, request: ModelRequest, text: str, usage: Usage, finish: str) -> ModelResponse:
        base = {"usage": usage, "model": self.name, "finish_reason": finish}
        if request.tools:
            if finish == "length":
                if request.output is None and (words := toolchoice.salvage_cut_answer(text)):
                    return ModelResponse(text=words, **base)  # finish_reason "length" says it was cut
                error = MalformedResponseError(
                    f"{self.name} ran out of max_tokens while choosing a tool", fix="raise max_tokens"
                )
                # The same request runs out in the same place again: retrying only burns time.
                error.retryable = False
                error.usage = usage
                raise error
            choice = toolchoice.parse_choice(text, request.tools, request.output)
            if choice.tool_calls:
                return ModelResponse(tool_calls=choice.tool_calls, **{**base, "finish_reason": "tool_calls"})
            return ModelResponse(text=choice.text, output=choice.output, **base)
        if request.output is not None:
            return ModelResponse(text=text, output=parse_json_output(text, request.output), **base)
        return ModelResponse(text=text, **base)

    async def request(self, request: ModelRequest) -> ModelResponse:
        return await self._generate(request, None)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Text deltas as the engine decodes them (a tool-mode answer comes in one piece,
        since its raw form is JSON the caller should not see)."""
        if request.tools:
            response = await self.request(request)
            if response.text:
                yield TextDelta(response.text)
            yield StreamDone(response)
            return
        deltas: asyncio.Queue[str | None] = asyncio.Queue()

        async def produce() -> ModelResponse:
            try:
                return await self._generate(request, deltas.put_nowait)
            finally:
                deltas.put_nowait(None)

        task = asyncio.ensure_future(produce())
        try:
            while (text := await deltas.get()) is not None:
                yield TextDelta(text)
            yield StreamDone(await task)
        finally:
            if not task.done():
                task.cancel()


def load_local(spec: str) -> LocalModel:
    """Build a local model from ``local``, ``local-1.5b`` or ``local:/path/to/model.gguf``."""
    spec = spec.strip()
    if spec in MODEL_VARIANTS:
        variant = MODEL_VARIANTS[spec]
        if not weights_path(variant).exists():
            get_variant(variant).part_paths()  # a missing part package fails now, naming the fix
        return LocalModel(name=spec, variant=variant)
    if spec.startswith("local:"):
        raw = spec[len("local:") :].strip()
        path = Path(raw).expanduser()
        if not raw or not path.is_file():
            raise ConfigError(
                f"model file {raw or '(empty)'} does not exist",
                fix="give the path of a .gguf file: local:/path/to/model.gguf",
            )
        return LocalModel(name=f"local:{path}", path=path)
    raise ConfigError(
        f"unknown local model {spec!r}", fix="use local, local-1.5b or local:/path/to/model.gguf"
    )


__all__ = ["MODEL_VARIANTS", "Engine", "EngineSettings", "LocalModel", "engine_loads", "load_local"]
