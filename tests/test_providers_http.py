"""The real provider classes against a real HTTP server on loopback that speaks enough of
the OpenAI and Anthropic wire formats, with faults injected per request: rate limits, 5xx
storms, slow answers, garbage bodies, garbled tool calls, a closed port. Delays are observed
through RetryModel's injectable sleep, never by timing."""

from __future__ import annotations

import asyncio
import email.utils
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from moot.errors import (
    MalformedResponseError,
    ModelConnectionError,
    ModelHTTPError,
    ModelTimeoutError,
    RequestBlockedError,
)
from moot.models.base import (
    Model,
    ModelRequest,
    ModelSettings,
    StreamDone,
    TextDelta,
    ToolDefinition,
    UserMessage,
    WrapperModel,
)
from moot.models.concurrency import ConcurrencyLimitedModel, ProcessLimiter, reset_limiters
from moot.models.fallback import AllModelsFailedError, FallbackModel
from moot.models.registry import infer_model
from moot.models.retry import RetryModel, RetryPolicy

SECRET = "sk-test-SECRET-0123456789abcdef"
HELLO = ModelRequest(messages=(UserMessage(content="hello"),))


# --------------------------------------------------------------------------- the fake provider


@dataclass
class Fault:
    """What the server does for one request instead of answering normally."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay_s: float = 0.0


@dataclass
class FakeProvider:
    faults: deque[Fault] = field(default_factory=deque)
    always: Fault | None = None
    delay_s: float = 0.0
    tool_arguments: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[bytes, str]:
        anthropic = path.endswith("/messages")
        if body.get("stream"):
            return (_anthropic_sse() if anthropic else _openai_sse()), "text/event-stream"
        if anthropic:
            return json.dumps(_anthropic_message(self.tool_arguments)).encode(), "application/json"
        return json.dumps(_openai_completion(self.tool_arguments)).encode(), "application/json"


def _openai_completion(tool_arguments: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "pong"}
    finish = "stop"
    if tool_arguments is not None:
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": tool_arguments}}]}
        finish = "tool_calls"
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


def _anthropic_message(tool_arguments: str | None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "pong"}]
    stop = "end_turn"
    if tool_arguments is not None:
        try:
            arguments: Any = json.loads(tool_arguments)
        except ValueError:
            arguments = tool_arguments  # a garbled input arrives as a string
        content = [{"type": "tool_use", "id": "toolu_1", "name": "add", "input": arguments}]
        stop = "tool_use"
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 11, "output_tokens": 3}}


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


def _openai_sse() -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> dict[str, Any]:
        return {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}],
                "usage": usage}
    return _sse([(None, chunk({"role": "assistant", "content": "po"})), (None, chunk({"content": "ng"})),
                 (None, chunk({}, "stop")),
                 (None, chunk({}, usage={"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14})),
                 (None, "[DONE]")])


def _anthropic_sse() -> bytes:
    start = {"type": "message_start", "message": {**_anthropic_message(None), "content": [], "stop_reason": None,
                                                   "usage": {"input_tokens": 11, "output_tokens": 0}}}
    return _sse([
        ("message_start", start),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "po"}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ng"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta", "partial_json": '{"a": 1, '}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta", "partial_json": '"b": 2}'}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": {"output_tokens": 9}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def _handler(provider: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            with provider.lock:
                provider.requests.append({"path": self.path, "body": body, "headers": {k.lower(): v for k, v in self.headers.items()}})
                provider.in_flight += 1
                provider.peak = max(provider.peak, provider.in_flight)
                fault = provider.faults.popleft() if provider.faults else provider.always
            try:
                time.sleep(fault.delay_s if fault else provider.delay_s)
                if fault is not None and (fault.status != 200 or fault.body is not None):
                    status, headers = fault.status, fault.headers
                    payload = fault.body if fault.body is not None else json.dumps(
                        {"error": {"message": f"fault {fault.status}", "type": "error"}}).encode()
                    ctype = "application/json"
                else:
                    status, headers = 200, {}
                    payload, ctype = provider.answer(self.path, body)
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests)
            finally:
                with provider.lock:
                    provider.in_flight -= 1

    return Handler


@pytest.fixture
def server() -> Iterator[FakeProvider]:
    provider = FakeProvider()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    provider.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield provider
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _fresh_limiters() -> Iterator[None]:
    reset_limiters()
    yield
    reset_limiters()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def layer(model: Model, kind: type) -> Any:
    while not isinstance(model, kind):
        assert isinstance(model, WrapperModel), f"no {kind.__name__} in the stack"
        model = model.wrapped
    return model


def recorded_sleeps(model: Model) -> list[float]:
    """Swap RetryModel's sleep for one that records the delays and returns at once."""
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    layer(model, RetryModel).sleep = fake_sleep
    return sleeps


def compatible(server: FakeProvider) -> str:
    return f"openai-compatible:{server.url}/v1#m"


# --------------------------------------------------------------------------- retries


async def test_retry_recovers_after_a_storm_and_waits_at_least_retry_after(server: FakeProvider, allow_real: None) -> None:
    server.faults.extend([Fault(429, {"retry-after": "7"}), Fault(500), Fault(503), Fault(429, {"retry-after-ms": "2500"})])
    model = infer_model(compatible(server))
    sleeps = recorded_sleeps(model)
    response = await model.request(HELLO)
    assert response.text == "pong"
    assert len(server.requests) == 5
    assert len(sleeps) == 4
    assert sleeps[0] >= 7.0 and sleeps[3] >= 2.5


async def test_retry_after_as_an_http_date_is_honoured(server: FakeProvider, allow_real: None) -> None:
    when = email.utils.formatdate(time.time() + 40, usegmt=True)
    server.faults.append(Fault(429, {"retry-after": when}))
    model = infer_model(compatible(server))
    sleeps = recorded_sleeps(model)
    assert (await model.request(HELLO)).text == "pong"
    assert sleeps and 35 <= sleeps[0] <= 41


async def test_a_permanent_storm_ends_in_one_clear_error(server: FakeProvider, allow_real: None) -> None:
    server.always = Fault(503)
    model = infer_model(compatible(server))
    sleeps = recorded_sleeps(model)
    with pytest.raises(ModelHTTPError) as caught:
        await model.request(HELLO)
    attempts = RetryPolicy().max_attempts
    assert len(server.requests) == attempts and len(sleeps) == attempts - 1
    line = caught.value.one_line()
    assert "HTTP 503" in line and f"gave up after {attempts} attempts" in line and "\n" not in line
    # full jitter: each wait is within its exponential step, and the steps grow
    assert all(0 <= s <= RetryPolicy().initial_delay_s * 2**i for i, s in enumerate(sleeps))


async def test_a_retry_after_beyond_the_cap_gives_up_instead_of_retrying_early(server: FakeProvider, allow_real: None) -> None:
    server.always = Fault(429, {"retry-after": "3600"})
    model = infer_model(compatible(server))
    sleeps = recorded_sleeps(model)
    with pytest.raises(ModelHTTPError, match="asked to wait 3600s"):
        await model.request(HELLO)
    assert sleeps == [] and len(server.requests) == 1


async def test_client_errors_are_not_retried(server: FakeProvider, allow_real: None) -> None:
    server.always = Fault(400)
    model = infer_model(compatible(server))
    sleeps = recorded_sleeps(model)
    with pytest.raises(ModelHTTPError, match="HTTP 400"):
        await model.request(HELLO)
    assert len(server.requests) == 1 and sleeps == []


async def test_a_stream_is_retried_when_it_failed_before_any_text(server: FakeProvider, allow_real: None) -> None:
    server.faults.append(Fault(502))
    model = infer_model(compatible(server))
    sleeps = recorded_sleeps(model)
    events = [event async for event in model.stream(HELLO)]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["po", "ng"]
    done = events[-1]
    assert isinstance(done, StreamDone) and done.response.usage.output_tokens == 3
    assert len(sleeps) == 1 and len(server.requests) == 2
    assert server.requests[-1]["body"]["stream_options"] == {"include_usage": True}


# --------------------------------------------------------------------------- error mapping


async def test_a_slow_server_trips_the_timeout(server: FakeProvider, allow_real: None) -> None:
    server.always = Fault(delay_s=3.0)
    model = infer_model(compatible(server), wrap=False)
    with pytest.raises(ModelTimeoutError) as caught:
        await model.request(HELLO.model_copy(update={"settings": ModelSettings(timeout_s=0.3)}))
    assert caught.value.retryable and server.url in caught.value.message


async def test_a_body_that_is_not_json_is_a_malformed_response(server: FakeProvider, allow_real: None) -> None:
    server.always = Fault(200, body=b'{"choices": [ this is not json')
    model = infer_model(compatible(server), wrap=False)
    with pytest.raises(MalformedResponseError) as caught:
        await model.request(HELLO)
    assert caught.value.retryable


async def test_garbled_tool_call_arguments_are_a_malformed_response(server: FakeProvider, allow_real: None) -> None:
    server.tool_arguments = '{"a": 1, "b": '
    model = infer_model(compatible(server), wrap=False)
    with pytest.raises(MalformedResponseError, match="tool 'add' with arguments that are not valid JSON"):
        await model.request(HELLO)


async def test_valid_tool_calls_are_parsed(server: FakeProvider, allow_real: None) -> None:
    server.tool_arguments = '{"a": 1, "b": 2}'
    tool = ToolDefinition(name="add", parameters={"type": "object", "properties": {"a": {}, "b": {}}})
    model = infer_model(compatible(server), wrap=False)
    response = await model.request(HELLO.model_copy(update={"tools": (tool,)}))
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("call_1", "add", {"a": 1, "b": 2})]
    assert response.finish_reason == "tool_calls"
    assert server.requests[0]["body"]["tools"][0]["function"]["name"] == "add"


async def test_connection_refused_names_the_url_and_the_fix(allow_real: None) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    model = infer_model(f"openai-compatible:{url}#m", wrap=False)
    with pytest.raises(ModelConnectionError) as caught:
        await model.request(HELLO)
    line = caught.value.one_line()
    assert url in line and "start the server" in line


async def test_the_key_never_appears_in_errors(server: FakeProvider, allow_real: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {SECRET}."}}).encode()
    server.always = Fault(401, body=echo)
    model = infer_model("openai:gpt-4o-mini")
    with pytest.raises(ModelHTTPError) as caught:
        await model.request(HELLO)
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"  # it was sent…
    line = caught.value.one_line()
    assert SECRET not in line and SECRET not in repr(caught.value)  # …but never shown
    assert "HTTP 401" in line and "set OPENAI_API_KEY to a valid API key" in line
    assert len(server.requests) == 1  # a 401 is not retried


async def test_requests_are_blocked_in_tests_unless_allowed(server: FakeProvider) -> None:
    model = infer_model(compatible(server))
    with pytest.raises(RequestBlockedError):
        await model.request(HELLO)
    assert server.requests == []


# --------------------------------------------------------------------------- anthropic


async def test_anthropic_answers_and_maps_tool_use(server: FakeProvider, allow_real: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    model = infer_model("anthropic:claude-haiku-4-5")
    response = await model.request(HELLO)
    assert response.text == "pong" and response.usage.input_tokens == 11
    assert response.usage.cost_usd == pytest.approx((11 * 1.0 + 3 * 5.0) / 1e6)
    assert server.requests[0]["path"] == "/v1/messages"
    assert SECRET in server.requests[0]["headers"]["authorization"]  # SDK 2.x sends it as a bearer token
    server.tool_arguments = '{"a": 4, "b": 5}'
    response = await model.request(HELLO)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("add", {"a": 4, "b": 5})]
    server.tool_arguments = "{garbled"
    with pytest.raises(MalformedResponseError, match="tool 'add'"):
        await infer_model("anthropic:claude-haiku-4-5", wrap=False).request(HELLO)


async def test_anthropic_stream_and_rate_limit(server: FakeProvider, allow_real: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.faults.append(Fault(429, {"retry-after": "4"}))
    model = infer_model("anthropic:claude-haiku-4-5")
    sleeps = recorded_sleeps(model)
    events = [event async for event in model.stream(HELLO)]
    assert sleeps and sleeps[0] >= 4
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "pong"
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert [(c.id, c.arguments) for c in done.response.tool_calls] == [("toolu_9", {"a": 1, "b": 2})]
    assert done.response.finish_reason == "tool_calls" and done.response.usage.output_tokens == 9


# --------------------------------------------------------------------------- concurrency and fallback


async def test_twenty_parallel_requests_never_exceed_the_process_limit(
    server: FakeProvider, allow_real: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_MAX_CONCURRENCY", "3")
    server.delay_s = 0.1
    # Two separately built models for the same server share one process-wide limit.
    first, second = infer_model(compatible(server)), infer_model(compatible(server))
    results = await asyncio.gather(*[(first if i % 2 else second).request(HELLO) for i in range(20)])
    assert [r.text for r in results] == ["pong"] * 20
    assert len(server.requests) == 20
    assert server.peak == 3
    assert layer(first, ConcurrencyLimitedModel).limiter.in_use == 0


def test_the_limit_holds_across_event_loops_in_threads() -> None:
    limiter = ProcessLimiter("threads", 2)
    active = 0
    peak = 0
    lock = threading.Lock()

    async def work() -> None:
        nonlocal active, peak
        async with limiter:
            with lock:
                active += 1
                peak = max(peak, active)
            await asyncio.sleep(0.01)
            with lock:
                active -= 1

    async def many() -> None:
        await asyncio.gather(*[work() for _ in range(10)])

    threads = [threading.Thread(target=asyncio.run, args=(many(),)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak == 2 and limiter.in_use == 0 and limiter.peak == 2


async def test_fallback_answers_from_the_second_model(server: FakeProvider, allow_real: None) -> None:
    down = infer_model(f"openai-compatible:http://127.0.0.1:{closed_port()}/v1#down")
    recorded_sleeps(down)
    model = FallbackModel(down, infer_model(compatible(server)))
    response = await model.request(HELLO)
    assert response.text == "pong" and response.model == compatible(server)


async def test_fallback_lists_every_failure_in_one_line(server: FakeProvider, allow_real: None) -> None:
    server.always = Fault(500)
    down = infer_model(f"openai-compatible:http://127.0.0.1:{closed_port()}/v1#down", wrap=False)
    broken = infer_model(compatible(server), wrap=False)
    with pytest.raises(AllModelsFailedError) as caught:
        await FallbackModel(down, broken).request(HELLO)
    line = caught.value.one_line()
    assert line.startswith("all 2 models failed")
    assert "cannot connect" in line and "HTTP 500" in line and "\n" not in line


async def test_fallback_does_not_hide_a_blocked_request(server: FakeProvider) -> None:
    model = FallbackModel(infer_model(compatible(server)), infer_model(compatible(server)))
    with pytest.raises(RequestBlockedError):
        await model.request(HELLO)
