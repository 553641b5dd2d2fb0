"""A real OpenAI-compatible chat-completions server on loopback, for CLI tests in a subprocess.

The model string it yields is one a user could type (``openai-compatible:URL#m``), so a test
drives the whole path — CLI, registry, provider, team — while ``answer`` decides each reply.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextmanager
def openai_compatible_server(answer: Callable[[dict[str, Any]], str],
                             odds: Callable[[dict[str, Any]], dict[str, float]] | None = None) -> Iterator[str]:
    """Serve ``POST …/chat/completions`` with ``answer(request_body)`` as the reply text; yields the model string.
    With ``odds``, a request that asks for ``logprobs`` gets ``odds(request_body)`` (token → log-probability)
    as its first token's ``top_logprobs``, as OpenAI's API sends them."""

    def logprobs(body: dict[str, Any], text: str) -> dict[str, Any] | None:
        if odds is None or not body.get("logprobs"):
            return None
        top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in odds(body).items()][: body.get("top_logprobs", 0)]
        return {"content": [{"token": text, "logprob": top[0]["logprob"] if top else 0.0, "bytes": None, "top_logprobs": top}]}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            text = answer(body)
            if body.get("stream"):
                self._stream(text, logprobs(body, text))
                return
            payload = json.dumps({
                "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                             "logprobs": logprobs(body, text)}],
                "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52},
            }).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _stream(self, text: str, first_logprobs: dict[str, Any] | None = None) -> None:
            """The reply as server-sent events, in two pieces, then the usage (``stream_options``)."""
            half = len(text) // 2
            chunks = [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}
                      for piece in (text[:half], text[half:]) if piece]
            if chunks and first_logprobs is not None:
                chunks[0]["logprobs"] = first_logprobs
            events = [{"choices": [c]} for c in chunks]
            events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            events.append({"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}})
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for event in events:
                event.update({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m"})
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"openai-compatible:http://127.0.0.1:{httpd.server_address[1]}/v1#m"
    finally:
        httpd.shutdown()
        httpd.server_close()
