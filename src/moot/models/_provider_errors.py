"""Turning provider SDK exceptions into moot errors a user can act on.

Both official SDKs (``openai`` and ``anthropic``) share one exception shape (they are
generated from the same template), so one mapping serves both. Keys never appear in the
messages: anything that looks like the key is redacted before an error is built, because a
provider may echo part of a bad key back in its 401 body.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Iterable
from typing import Any

from moot.errors import (
    MalformedResponseError,
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelTimeoutError,
    MootError,
)

_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-*]{6,}|sk-ant-[A-Za-z0-9_\-*]{6,})")
_REASONS = {
    400: "bad request",
    401: "unauthorized",
    403: "forbidden",
    404: "not found",
    408: "request timeout",
    413: "request too large",
    422: "unprocessable request",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "unavailable",
    504: "gateway timeout",
    529: "overloaded",
}


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Remove the given secrets and anything shaped like an API key from ``text``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEYLIKE.sub("***", text)


def parse_retry_after(headers: Any, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _body_message(response: Any) -> str:
    """The provider's own short explanation from an error body, if it has one."""
    try:
        text = response.text
    except Exception:  # noqa: BLE001 - a body we cannot read is not worth a second error
        return ""
    try:
        body = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:200]
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = error.get("message") or error.get("type") or ""
            return " ".join(str(message).split())[:200]
        if isinstance(error, str):
            return error[:200]
    return ""


def _moot_cause(exc: BaseException) -> MootError | None:
    """A moot error raised below the SDK (by a cassette transport, say) and wrapped by it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, MootError):
            return current
        current = current.__cause__ or current.__context__
    return None


def map_sdk_error(
    exc: BaseException,
    *,
    sdk: Any,
    model_name: str,
    base_url: str,
    key_env: str | None,
    secrets: Iterable[str | None] = (),
) -> BaseException:
    """The moot error for an exception raised by an SDK call (``sdk`` is the SDK module).

    Returns the exception to raise; anything unknown is returned unchanged so that a bug keeps
    its traceback.
    """
    secrets = tuple(secrets)
    inner = _moot_cause(exc)
    if inner is not None and not isinstance(exc, MootError):
        return inner
    if isinstance(exc, MootError):
        return exc
    if isinstance(exc, sdk.APITimeoutError):
        return ModelTimeoutError(
            f"{model_name} did not answer in time ({base_url})",
            fix="raise the timeout (ModelSettings.timeout_s) or try again later",
        )
    if isinstance(exc, sdk.APIConnectionError):
        return ModelConnectionError(
            f"cannot connect to {base_url} for {model_name}",
            fix=f"start the server at {base_url} or fix the URL",
        )
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        reason = _REASONS.get(status, "error")
        detail = redact(_body_message(exc.response), secrets)
        message = f"{model_name} answered HTTP {status} ({reason})" + (f": {detail}" if detail else "")
        fix: str | None = None
        if status in (401, 403):
            fix = f"set {key_env} to a valid API key" if key_env else "check the server's API key setting"
        elif status == 404:
            fix = f"check the model name and base URL ({base_url})"
        elif status == 429:
            fix = "wait, lower MOOT_MAX_CONCURRENCY, or raise your provider rate limit"
        elif status >= 500:
            fix = "the provider has trouble; try again later or configure a fallback model"
        return ModelHTTPError(
            message, status=status, retry_after=parse_retry_after(exc.response.headers), fix=fix
        )
    if isinstance(exc, (sdk.APIResponseValidationError, ValueError)):
        return MalformedResponseError(
            f"{model_name} answered with a body that is not a valid response: "
            f"{redact(str(exc), secrets)[:200]}"
        )
    if isinstance(exc, sdk.APIError):
        return ModelError(f"{model_name} request failed: {redact(str(exc), secrets)[:200]}")
    return exc
