"""The embedded model: a GGUF file run by llama.cpp (through ``xllamacpp``) on this machine.

No key, no network, no server for the user to start. By default every moot process on the
machine sends its requests to one shared engine process per model file, started by the first
process that needs it (:mod:`moot.models.engine_client`); ``MOOT_LOCAL_ENGINE=inprocess``
loads the weights inside this process instead, one engine per file per process, shared by
every :class:`LocalModel` on that file. Either way parallel sub-agents use the engine's
parallel slots instead of loading the weights twice, and building a model
(``infer_model("local")``) is instant: the engine starts on the first request.

Tool calls and structured output use the engine's JSON-schema constrained decoding (see
:mod:`moot.models.toolchoice` for why and how).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
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
    charged_on_error,
    merge_token_logprobs,
    parse_json_output,
    salvage_cut_json,
)
from moot.models.engine import Engine, EngineRejected, EngineSettings, acquire, engine_loads, release
from moot.models.engine_client import SharedEngine, engine_mode
from moot.models.testing import check_allowed
from moot.models.tokenizer import count_chat_tokens, tokenizer_for
from moot.models.weights import DEFAULT_VARIANT, ensure_weights, get_variant, weights_path
from moot.models.timing import current_clock, engine_times

MODEL_VARIANTS = {"local": DEFAULT_VARIANT, "local-1.5b": "qwen2.5-coder-1.5b"}
"""Model strings of the bundled weights, and the weights variant each one uses."""

DEFAULT_MAX_TOKENS = 1024
"""Used when a request sets no ``max_tokens``: a small model can repeat itself until the
context is full, and every loop in moot needs a bound."""


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
    _shared: SharedEngine | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    # ---------------------------------------------------------------- engine

    def _resolve_path(self) -> Path:
        if self.path is None:
            self.path = ensure_weights(self.variant or DEFAULT_VARIANT)
        return self.path.resolve()

    def _get_engine(self) -> Engine:
        with self._lock:
            if self._engine is None:
                self._engine = acquire(self._resolve_path(), self.settings)
            return self._engine

    async def engine(self) -> Engine:
        """This process's own engine for the model's file, loading it on first use (the
        ``inprocess`` mode; benchmarks use it to compare against the shared engine)."""
        if self._engine is not None:
            return self._engine
        return await asyncio.to_thread(self._get_engine)

    def engine_identity(self) -> str | None:
        """For bundled weights, their pinned sha256 (verified before use), so every copy of
        them, in any moot home, is served by one shared engine; ``None`` for a GGUF path."""
        return f"{self.variant}:{get_variant(self.variant).sha256}" if self.variant else None

    def _shared_engine(self) -> SharedEngine:
        with self._lock:
            if self._shared is None:
                self._shared = SharedEngine(self._resolve_path(), self.name, self.settings, self.engine_identity())
            return self._shared

    async def _chunks(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The answer's stream chunks, from the shared engine process or this process's own."""
        if engine_mode() == "inprocess":
            source = (await self.engine()).stream(body)
        else:
            source = (await asyncio.to_thread(self._shared_engine)).stream(body)
        async with contextlib.aclosing(source) as chunks:
            async for chunk in chunks:
                yield chunk

    async def aclose(self) -> None:
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            release(engine)

    def describe(self) -> dict[str, Any]:
        path = self.path or (weights_path(self.variant) if self.variant else None)
        mode = engine_mode()
        info: dict[str, Any] = {
            "provider": "local",
            "model": self.name,
            "path": str(path) if path else "",
            "bytes": path.stat().st_size if path and path.exists() else None,
            "slots": self.settings.slots,
            "context": self.settings.context,
            "threads": self.settings.threads,
            "engine": mode,
        }
        if mode == "inprocess":
            info["loaded"] = self._engine is not None
        elif path is not None and path.exists():
            running = SharedEngine(path.resolve(), self.name, self.settings, self.engine_identity()).describe()
            info["loaded"] = bool(running)
            if running:
                info.update(
                    engine_pid=running.get("pid"),
                    uptime_s=running.get("uptime_s"),
                    clients=len(running.get("clients", ())),
                    active=running.get("active"),
                    **running.get("settings", {}),
                )
        if self.variant:
            info["weights"] = get_variant(self.variant).title
        return info

    # ---------------------------------------------------------------- requests

    def count_input_tokens(self, request: ModelRequest) -> int | None:
        """The prompt's size in the model's own tokens, read with the tokenizer in its weights
        file (budgets hold this instead of an estimate); ``None`` before the weights exist
        (counting never assembles them)."""
        path = self.path or weights_path(self.variant or DEFAULT_VARIANT)
        tokenizer = tokenizer_for(path)
        if tokenizer is None:
            return None
        body = self._body(request)
        return count_chat_tokens(tokenizer, body["messages"], body.get("tools", ()))

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
        if s.top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = s.top_logprobs
        if request.tools:
            allow = (request.tool_choice != "none"
                     and toolchoice.tool_rounds_since_user(request.messages) < self.max_tool_rounds)
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
        body = self._body(request)
        pieces: list[str] = []
        usage = Usage(requests=1)
        finish = "stop"
        error: str | None = None
        first: list[dict[str, Any]] | None = None
        try:
            async with asyncio.timeout(request.settings.timeout_s):
                async with contextlib.aclosing(self._chunks(body)) as chunks:
                    async for chunk in chunks:
                        if "error" in chunk:
                            error = str(chunk["error"].get("message", chunk["error"]))
                        for choice in chunk.get("choices") or ():
                            text = (choice.get("delta") or {}).get("content")
                            if text:
                                pieces.append(text)
                                if on_text is not None:
                                    on_text(text)
                            finish = choice.get("finish_reason") or finish
                            if first is None and (content := (choice.get("logprobs") or {}).get("content")):
                                first = content[0].get("top_logprobs") or []
                        if chunk.get("usage"):
                            usage = _usage(chunk["usage"])
                        if (times := engine_times(chunk)) is not None and (clock := current_clock()) is not None:
                            clock.engine(*times)  # the engine's own prompt and generation times
        except TimeoutError:
            raise ModelTimeoutError(
                f"{self.name} gave no complete answer within {request.settings.timeout_s:g}s",
                fix="raise timeout_s or lower max_tokens",
            ) from None
        except EngineRejected as exc:  # the engine cannot serve the request (e.g. a bad schema)
            raise ModelError(f"{self.name} rejected the request: {exc.message}", fix=exc.fix) from None
        if error:
            raise ModelError(f"{self.name} failed: {error}", fix="shorten the prompt or raise MOOT_LOCAL_CONTEXT")
        response = self._response(request, "".join(pieces), usage, finish)
        if request.settings.top_logprobs and first is not None:
            response.top_logprobs = merge_token_logprobs((t.get("token", ""), t.get("logprob")) for t in first)
        return response

    def _response(self, request: ModelRequest, text: str, usage: Usage, finish: str) -> ModelResponse:
        with charged_on_error(usage):  # the engine decoded the tokens even when the answer is unusable
            return self._parsed(request, text, usage, finish)

    def _parsed(self, request: ModelRequest, text: str, usage: Usage, finish: str) -> ModelResponse:
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
            try:
                return ModelResponse(text=text, output=parse_json_output(text, request.output), **base)
            except MalformedResponseError as error:
                if finish != "length":
                    raise
                # Cut by max_tokens (a 0.5B model can loop inside one string until the limit):
                # keep the complete list items, or fail without a retry, which would decode the
                # same tokens and run out in the same place again.
                salvaged = salvage_cut_json(text, request.output)
                if salvaged is not None:
                    return ModelResponse(text=text, output=salvaged, **base)  # finish_reason "length" says it was cut
                error.message = f"{self.name} ran out of max_tokens while writing {request.output.name!r}"
                error.args = (error.message,)
                error.fix = "raise max_tokens"
                error.retryable = False
                error.usage = usage
                raise
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


def _usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details") or {}
    return Usage(
        input_tokens=raw.get("prompt_tokens", 0),
        output_tokens=raw.get("completion_tokens", 0),
        cached_input_tokens=details.get("cached_tokens", 0) or 0,
        requests=1,
    )


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
