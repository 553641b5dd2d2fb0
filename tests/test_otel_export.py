"""MOOT_OTEL=1 sends every command's spans over OTLP (issue #35): a real collector on loopback
(an HTTP server decoding the OTLP protobuf, as Phoenix, Jaeger and the OpenTelemetry Collector
do) receives them, nested, with the GenAI semantic-convention attributes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from learning_support import label_body  # noqa: E402
from openai_stub import openai_compatible_server  # noqa: E402
from test_research_support import fake_openai_server, make_repo  # noqa: E402

MOOT = [sys.executable, "-m", "moot"]


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


@contextmanager
def otlp_collector() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yields the endpoint for OTEL_EXPORTER_OTLP_ENDPOINT and the spans received, decoded."""
    spans: list[dict[str, Any]] = []
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            paths.append(self.path)
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        spans.append({
                            "name": span.name, "id": span.span_id.hex(), "parent": span.parent_span_id.hex(),
                            "trace": span.trace_id.hex(), "status": span.status.code,
                            "attributes": {a.key: _value(a.value) for a in span.attributes}, "resource": resource,
                            "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                        })
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", spans
        assert all(p == "/v1/traces" for p in paths), paths
    finally:
        server.shutdown()
        server.server_close()


def moot(*args: str, home: Path, endpoint: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOOT_", "OTEL_"))}
    env.update({"MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), "MOOT_CONFIG": "",
                "MOOT_OTEL": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, **(extra or {})})
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env, timeout=120)


def test_research_sends_nested_genai_spans_to_an_otlp_collector(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with otlp_collector() as (endpoint, spans), fake_openai_server() as model:
        out = moot("research", "How does a request flow end-to-end?", "--repo", str(repo), "--mode", "multi",
                   "--model", model, "--json", home=tmp_path / "home", endpoint=endpoint)
        assert out.returncode == 0, out.stderr
    assert spans, "the collector received no span"
    assert {s["resource"].get("service.name") for s in spans} == {"moot"}
    assert len({s["trace"] for s in spans}) == 1  # one run, one trace
    by_id = {s["id"]: s for s in spans}
    chats = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    agents = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "invoke_agent"]
    assert chats and agents
    error = 2  # STATUS_CODE_ERROR
    for chat in chats:
        a = chat["attributes"]
        assert a["gen_ai.provider.name"] == "openai-compatible" and a["gen_ai.request.model"] == "m"
        assert chat["name"] == "chat m" and chat["end"] >= chat["start"]
        assert by_id[chat["parent"]]["attributes"]["gen_ai.operation.name"] == "invoke_agent"
        if chat["status"] != error:  # an answer it used: the tokens the server reported
            assert a["gen_ai.usage.input_tokens"] == 40 and a["gen_ai.usage.output_tokens"] == 12
    assert sum(c["status"] != error for c in chats) >= 4
    names = {a["attributes"]["gen_ai.agent.name"] for a in agents}
    assert names >= {"planner", "synthesizer", "verifier"} and any(n.startswith("researcher") for n in names), names
    roots = [s for s in spans if not s["parent"]]
    assert len(roots) == 1 and roots[0]["name"].startswith("moot.run")


def test_learn_sends_spans_too_and_service_name_follows_the_standard_variable(tmp_path: Path) -> None:
    article = tmp_path / "a.md"
    article.write_text("# Pier\n\nThe Ashby Pier has 40 berths.\n")
    with otlp_collector() as (endpoint, spans), openai_compatible_server(lambda body: label_body(body) or "ok") as model:
        out = moot("learn", str(article), "--kb", "k", "--model", model, home=tmp_path / "home", endpoint=endpoint,
                   extra={"OTEL_SERVICE_NAME": "my-notes"})
        assert out.returncode == 0, out.stderr
    assert spans and {s["resource"]["service.name"] for s in spans} == {"my-notes"}
    assert any(s["attributes"].get("gen_ai.operation.name") == "chat" for s in spans)


def test_chat_is_a_recorded_run_with_its_spans(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with otlp_collector() as (endpoint, spans), openai_compatible_server(lambda body: "Five, as asked.") as model:
        out = moot("chat", "What is 2+3?", "--model", model, home=home, endpoint=endpoint)  # streamed
        assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Five, as asked."
    chats = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert len(chats) == 1 and chats[0]["attributes"]["gen_ai.usage.output_tokens"] == 12
    roots = [s for s in spans if not s["parent"]]
    assert len(roots) == 1 and roots[0]["name"].startswith("moot.run")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MOOT_", "OTEL_"))}
    env.update({"MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), "MOOT_CONFIG": ""})
    listed = subprocess.run([*MOOT, "runs", "--json"], capture_output=True, text=True, env=env, timeout=60)
    runs = json.loads(listed.stdout)
    runs = runs["runs"] if isinstance(runs, dict) else runs
    assert len(runs) == 1 and runs[0]["name"] == "chat: What is 2+3?" and runs[0]["status"] == "completed"


def test_an_unreachable_collector_does_not_fail_the_command(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    repo = make_repo(tmp_path / "repo")
    with fake_openai_server() as model:
        out = moot("research", "Where is parse_request defined?", "--repo", str(repo), "--model", model, "--json",
                   home=tmp_path / "home", endpoint=f"http://127.0.0.1:{port}", extra={"OTEL_EXPORTER_OTLP_TIMEOUT": "2"})
    assert out.returncode == 0, out.stderr
    assert '"answer"' in out.stdout and "Traceback" not in out.stderr
    said = [line for line in out.stderr.splitlines() if "OpenTelemetry" in line]
    assert len(said) == 1 and f"127.0.0.1:{port}" in said[0] and "unset MOOT_OTEL" in said[0], out.stderr
