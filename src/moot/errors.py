"""Errors a user can act on.

Every error that reaches a person carries a one-line message and a fix. The CLI prints
``error: <message> (fix: <fix>)`` and exits non-zero, without a traceback, for any
:class:`MootError`; anything else is a bug in moot and keeps its traceback.
"""

from __future__ import annotations

from typing import Any


class MootError(Exception):
    """Base class for errors caused by input, configuration or the environment."""

    fix: str = ""
    """What the user should do about it, in one line."""

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if fix is not None:
            self.fix = fix

    def one_line(self) -> str:
        """The message and the fix on one line, as the CLI prints them."""
        text = " ".join(self.message.split())
        return f"{text} (fix: {self.fix})" if self.fix else text


class ConfigError(MootError):
    """A setting is wrong: an unknown model string, a missing key, a bad path."""


class ModelError(MootError):
    """A model request failed."""

    retryable: bool = False
    """Whether repeating the same request may succeed (429, 5xx, timeouts, garbled output)."""
    usage: Any = None
    """What the failed request(s) cost, when known (a ``moot.models.Usage``): the model did the
    work even though the answer was unusable, so budgets and run records must count it."""


class ModelHTTPError(ModelError):
    """The provider answered with an HTTP error status."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        retry_after: float | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message, fix=fix)
        self.status = status
        self.retry_after = retry_after
        self.retryable = status == 429 or status == 408 or status >= 500


class ModelTimeoutError(ModelError):
    """The provider did not answer in time."""

    retryable = True


class ModelConnectionError(ModelError):
    """The endpoint could not be reached."""

    retryable = True
    fix = "check that the server is running and the URL is right"


class MalformedResponseError(ModelError):
    """The provider answered with something that is not a valid response (bad JSON, bad schema)."""

    retryable = True


class RequestBlockedError(ModelError):
    """A real model request was attempted while real requests are blocked (in tests)."""

    fix = "use moot.models.testing.ScriptedModel or FunctionModel, or allow_real_requests()"


class WeightsError(MootError):
    """The embedded model's weights are missing, partial or corrupt."""

    fix = "run `moot setup` to assemble and verify the embedded weights"
