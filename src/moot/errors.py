"""Errors a user can act on.

Every error that reaches a person carries a one-line message and a fix. The CLI prints
``error: <message> (fix: <fix>)`` and exits with the error's :attr:`MootError.exit_code`,
without a traceback, for any :class:`MootError`; anything else is a bug in moot and keeps its
traceback.

Exit codes, the same on every command (a script can rely on them):

- ``0`` (:data:`EXIT_OK`): the command did what was asked;
- ``1`` (:data:`EXIT_FAILURE`): it ran but failed: a model that could not be reached or
  answered badly, weights that are missing, an answer the team could not complete, a budget
  that stopped it, a failed ``moot models`` check;
- ``2`` (:data:`EXIT_USAGE`): a usage mistake: an unknown option or value, a file that does
  not exist, a setting that is wrong. Repeating the same command cannot succeed.
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


class MootError(Exception):
    """Base class for errors caused by input, configuration or the environment."""

    fix: str = ""
    """What the user should do about it, in one line."""
    exit_code: int = EXIT_USAGE
    """The CLI's exit status for this error: 2 for a usage mistake (the default: wrong input or
    settings), 1 for a failure while running (model and weight errors, :class:`RunFailed`)."""

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if fix is not None:
            self.fix = fix

    def one_line(self) -> str:
        """The message and the fix on one line, as the CLI prints them."""
        text = " ".join(self.message.split())
        return f"{text} (fix: {self.fix})" if self.fix else text


class UsageError(MootError):
    """The command was called wrongly: an unknown value, a missing argument, a bad combination."""


class ConfigError(MootError):
    """A setting is wrong: an unknown model string, a missing key, a bad path."""


class RunFailed(MootError):
    """The work ran and failed (or stopped short of a result); the CLI exits 1."""

    exit_code = EXIT_FAILURE


class ModelError(MootError):
    """A model request failed."""

    exit_code = EXIT_FAILURE

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

    exit_code = EXIT_FAILURE

    fix = "run `moot setup` to assemble and verify the embedded weights"
