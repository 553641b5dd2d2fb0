"""The `moot` command as a person uses it: in a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def moot(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "moot", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def test_help_lists_the_commands() -> None:
    result = moot("--help")
    assert result.returncode == 0
    for command in ("setup", "chat", "models", "runs"):
        assert command in result.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("chat", "hi", "--model", "gpt4"), "openai:MODEL"),
        (("chat", "hi", "--model", "openai:gpt-4o-mini"), "OPENAI_API_KEY"),
        (("chat", "hi", "--model", "anthropic:claude-haiku-4-5"), "ANTHROPIC_API_KEY"),
        (("chat", "hi", "--model", "local:/nowhere/model.gguf"), "/nowhere/model.gguf"),
    ],
)
def test_user_mistakes_give_one_plain_line_that_names_the_fix(args: tuple[str, ...], expected: str) -> None:
    result = moot(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and "fix:" in lines[0]
    assert expected in lines[0]
    assert "Traceback" not in result.stderr


def test_a_corrupt_weight_file_is_refused_and_names_moot_setup(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from moot.models.weights import get_variant

    cached = tmp_path / get_variant("qwen2.5-coder-0.5b").filename
    cached.write_bytes(b"GGUF" + b"\0" * 1024)  # a partial download: the right name, the wrong bytes
    result = moot("chat", "hi", env={"MOOT_MODELS_DIR": str(tmp_path)})
    assert result.returncode == 1  # a runtime failure (broken weights), not a usage mistake
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to load it" in lines[0]
    assert "moot setup" in lines[0] and "Traceback" not in result.stderr
    assert cached.stat().st_size == 1028  # refused, not silently replaced behind the user's back


@pytest.mark.embedded
def test_chat_answers_from_the_embedded_model_as_json() -> None:
    result = moot("chat", "What is 2+3? Answer with just the number.", "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert payload["text"].strip() == "5"
    assert payload["model"] == "local"
    assert payload["usage"]["requests"] == 1 and payload["usage"]["output_tokens"] >= 1
    assert payload["usage"]["cost_usd"] == 0
    assert payload["seconds"] > 0


def test_a_usage_mistake_shows_the_usage_not_a_traceback() -> None:
    result = moot("board", "worker", "/tmp/no-such-board")  # --agent is required
    assert result.returncode == 2
    assert "Missing option '--agent'" in result.stderr and "Traceback" not in result.stderr
    unknown = moot("nosuchcommand")
    assert unknown.returncode == 2 and "No such command" in unknown.stderr and "Traceback" not in unknown.stderr
