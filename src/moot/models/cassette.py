"""Record real provider exchanges once, replay them offline forever.

A :class:`CassetteTransport` sits under the SDK as an httpx transport, so the provider class
under test is the real one: it builds the real request body and parses the real response
(streamed bodies included). A cassette is one JSON file per test with, for each exchange in
order, the request method, URL path, canonical JSON body, and the response status, a few
harmless headers, and the body.

Secrets never reach the file: request headers are not stored at all (``authorization``,
``x-api-key``, ``api-key`` live there), query parameters and body fields whose names look like
key material are replaced, and every value of a known key variable is scrubbed from the
whole file before it is written.

Modes: ``replay`` (default; an unrecorded or different request is an error), ``record``
(send to the real server and write the file), ``auto`` (replay if the file exists, else record).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

import httpx

from moot.errors import MootError

Mode = Literal["replay", "record", "auto"]

_KEEP_RESPONSE_HEADERS = ("content-type", "retry-after", "retry-after-ms")
_SECRET_NAME = re.compile(r"(^|[-_])(key|api[-_]?key|token|secret|password|authorization|auth)$", re.I)
_SECRET_ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MOOT_OPENAI_COMPATIBLE_API_KEY")
REDACTED = "<redacted>"


class CassetteError(MootError):
    """A request did not match the cassette (the code or the SDK changed since recording)."""

    fix = "re-record the cassette: python tests/record_cassettes.py (see docs/providers.md)"


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (REDACTED if _SECRET_NAME.search(str(k)) else _scrub(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def canonical_body(content: bytes) -> Any:
    """The request body as comparable data: parsed JSON with secrets scrubbed, else text."""
    if not content:
        return None
    try:
        return _scrub(json.loads(content))
    except ValueError:
        return content.decode("utf-8", errors="replace")


def _target(url: httpx.URL) -> str:
    """Path plus query, with key-like query parameters redacted."""
    params = [(k, REDACTED if _SECRET_NAME.search(k) else v) for k, v in url.params.multi_items()]
    query = str(httpx.QueryParams(params))
    return url.path + (f"?{query}" if query else "")


class CassetteTransport(httpx.AsyncBaseTransport):
    """An httpx transport that records to or replays from one cassette file."""

    def __init__(self, path: str | Path, mode: Mode = "replay", inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.path = Path(path)
        if mode == "auto":
            mode = "replay" if self.path.exists() else "record"
        if mode not in ("replay", "record"):
            raise ValueError(f"cassette mode must be replay, record or auto, not {mode!r}")
        self.mode: Literal["replay", "record"] = mode  # type: ignore[assignment]
        self.inner = inner
        self.position = 0
        self.interactions: list[dict[str, Any]] = []
        self._secrets: set[str] = set()
        if self.mode == "replay":
            if not self.path.exists():
                raise CassetteError(f"cassette {self.path} does not exist")
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.interactions = list(data.get("interactions", []))
        elif self.inner is None:
            self.inner = httpx.AsyncHTTPTransport()

    @property
    def all_played(self) -> bool:
        """Whether every recorded exchange was asked for (a test that sends fewer is suspect)."""
        return self.position == len(self.interactions)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = canonical_body(await request.aread())
        if self.mode == "replay":
            return self._replay(request, body)
        return await self._record(request, body)

    def _replay(self, request: httpx.Request, body: Any) -> httpx.Response:
        where = f"{request.method} {_target(request.url)}"
        if self.position >= len(self.interactions):
            raise CassetteError(
                f"unrecorded request #{self.position + 1} {where}: cassette {self.path.name} "
                f"has only {len(self.interactions)}"
            )
        recorded = self.interactions[self.position]
        want = recorded["request"]
        if (want["method"], want["path"]) != (request.method, _target(request.url)) or want["body"] != body:
            got = json.dumps(body, sort_keys=True)[:300]
            expected = json.dumps(want["body"], sort_keys=True)[:300]
            raise CassetteError(
                f"request #{self.position + 1} {where} does not match cassette {self.path.name}, "
                f"which recorded {want['method']} {want['path']}; body sent {got} vs recorded {expected}"
            )
        self.position += 1
        response = recorded["response"]
        return httpx.Response(
            response["status"],
            headers=response["headers"],
            # A stream, not content: clients then read it as if it came off the wire.
            stream=httpx.ByteStream(response["body"].encode("utf-8")),
            request=request,
        )

    async def _record(self, request: httpx.Request, body: Any) -> httpx.Response:
        for name in ("authorization", "x-api-key", "api-key"):
            value = request.headers.get(name)
            if value:
                self._secrets.add(value)
                self._secrets.add(value.removeprefix("Bearer ").strip())
        assert self.inner is not None
        response = await self.inner.handle_async_request(request)
        content = await response.aread()  # streams are buffered while recording; replay streams them
        await response.aclose()
        headers = {k: v for k, v in response.headers.items() if k.lower() in _KEEP_RESPONSE_HEADERS}
        self.interactions.append(
            {
                "request": {"method": request.method, "path": _target(request.url), "body": body},
                "response": {
                    "status": response.status_code,
                    "headers": headers,
                    "body": content.decode("utf-8", errors="replace"),
                },
            }
        )
        self.save()
        return httpx.Response(
            response.status_code, headers=headers, stream=httpx.ByteStream(content), request=request
        )

    def save(self) -> None:
        """Write the cassette, with every known secret value scrubbed from the whole text."""
        text = json.dumps({"version": 1, "interactions": self.interactions}, indent=2, ensure_ascii=False)
        secrets = set(self._secrets)
        secrets.update(os.environ.get(name, "") for name in _SECRET_ENVS)
        for secret in sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(text + "\n", encoding="utf-8")

    async def aclose(self) -> None:
        if self.inner is not None:
            await self.inner.aclose()


def cassette_client(path: str | Path, mode: Mode = "replay", **client_kwargs: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` over a cassette, ready to pass as ``http_client=`` to a provider."""
    return httpx.AsyncClient(transport=CassetteTransport(path, mode), **client_kwargs)
