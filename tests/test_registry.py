"""Model strings resolve to the right provider, URL and wrapper stack; mistakes give one
line that names the fix."""

from __future__ import annotations

import sys
import types

import pytest

from moot.errors import ConfigError
from moot.models.anthropic import AnthropicModel
from moot.models.base import Model, WrapperModel
from moot.models.concurrency import ConcurrencyLimitedModel, reset_limiters
from moot.models.openai import OpenAIModel
from moot.models.pricing import PricedModel, price_for
from moot.models.registry import infer_model, list_configured
from moot.models.retry import RetryModel
from moot.models.testing import ScriptedModel

KEY_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OLLAMA_HOST",
            "MOOT_OPENAI_COMPATIBLE_API_KEY", "MOOT_MODEL", "MOOT_PRICES", "MOOT_MAX_CONCURRENCY")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    reset_limiters()


@pytest.fixture
def fake_local(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stand in for moot.models.local so no weights are loaded; records what was asked."""
    asked: list[str] = []
    module = types.ModuleType("moot.models.local")

    def load_local(spec: str) -> Model:
        asked.append(spec)
        return ScriptedModel(name=spec)

    module.load_local = load_local  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "moot.models.local", module)
    return asked


def test_openai_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    model = infer_model("openai:gpt-4o-mini", wrap=False)
    assert isinstance(model, OpenAIModel)
    assert (model.name, model.model, model.base_url) == ("openai:gpt-4o-mini", "gpt-4o-mini", "https://api.openai.com/v1")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1/")
    assert infer_model("openai:gpt-4o", wrap=False).base_url == "https://proxy.example/v1"  # type: ignore[attr-defined]


def test_anthropic_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-abc")
    model = infer_model("anthropic:claude-sonnet-4-5", wrap=False)
    assert isinstance(model, AnthropicModel)
    assert model.model == "claude-sonnet-4-5" and model.base_url == "https://api.anthropic.com"


@pytest.mark.parametrize(
    ("host", "expected"),
    [(None, "http://localhost:11434/v1"), ("gpu-box:11434", "http://gpu-box:11434/v1"),
     ("https://ollama.lan/", "https://ollama.lan/v1")],
)
def test_ollama_needs_no_key_and_honours_ollama_host(monkeypatch: pytest.MonkeyPatch, host: str | None, expected: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-leak-to-ollama")
    if host:
        monkeypatch.setenv("OLLAMA_HOST", host)
    model = infer_model("ollama:llama3.2", wrap=False)
    assert isinstance(model, OpenAIModel)
    assert (model.base_url, model.model, model.provider) == (expected, "llama3.2", "ollama")
    assert model.describe()["key_env"] is None
    assert model._api_key == ""  # the OpenAI key is never sent to another server


def test_openai_compatible_string(monkeypatch: pytest.MonkeyPatch) -> None:
    model = infer_model("openai-compatible:http://10.0.0.5:8000/v1#Qwen/Qwen2.5-7B", wrap=False)
    assert isinstance(model, OpenAIModel)
    assert (model.base_url, model.model) == ("http://10.0.0.5:8000/v1", "Qwen/Qwen2.5-7B")
    assert model.describe()["key_env"] is None
    monkeypatch.setenv("MOOT_OPENAI_COMPATIBLE_API_KEY", "secret")
    model = infer_model("openai-compatible:https://openrouter.ai/api/v1#meta/llama", wrap=False)
    assert model.describe()["key_env"] == "MOOT_OPENAI_COMPATIBLE_API_KEY"


@pytest.mark.parametrize("spec", ["local", "local-1.5b", "local:/models/x.gguf"])
def test_local_strings_go_to_load_local(fake_local: list[str], spec: str) -> None:
    model = infer_model(spec, wrap=False)
    assert fake_local == [spec] and model.name == spec


def test_default_comes_from_moot_model_else_local(fake_local: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert infer_model(None, wrap=False).name == "local"
    monkeypatch.setenv("MOOT_MODEL", "ollama:qwen2.5")
    assert infer_model(wrap=False).name == "ollama:qwen2.5"


def test_a_model_instance_passes_through_unchanged() -> None:
    model = ScriptedModel()
    assert infer_model(model) is model


def test_wrapped_stack_order_and_pricing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    model = infer_model("openai:gpt-4o-mini-2024-07-18")
    chain = []
    current: Model = model
    while isinstance(current, WrapperModel):
        chain.append(type(current))
        current = current.wrapped
    assert chain == [PricedModel, RetryModel, ConcurrencyLimitedModel] and isinstance(current, OpenAIModel)
    assert model.name == "openai:gpt-4o-mini-2024-07-18"
    assert model.describe()["price_usd_per_mtok"] == {"input": 0.15, "output": 0.60}  # not gpt-4o's price


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [("gpt-4o", "expected PROVIDER:MODEL"), ("openai:", "expected PROVIDER:MODEL"),
     ("mistral:large", "no provider named 'mistral'"),
     ("openai-compatible:http://host:8000/v1", "expected openai-compatible:URL#MODEL"),
     ("openai-compatible:host:8000/v1#m", "is not an http:// or https:// URL"), ("", "empty")],
)
def test_bad_strings_give_one_line_listing_the_valid_forms(spec: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as caught:
        infer_model(spec)
    line = caught.value.one_line()
    assert fragment in line and "\n" not in line
    assert "openai:MODEL" in line and "ollama:MODEL" in line and "openai-compatible:http://HOST:PORT/v1#MODEL" in line


@pytest.mark.parametrize(("spec", "env"), [("openai:gpt-4o", "OPENAI_API_KEY"), ("anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY")])
def test_a_missing_key_names_the_variable_to_set(spec: str, env: str) -> None:
    with pytest.raises(ConfigError) as caught:
        infer_model(spec)
    line = caught.value.one_line()
    assert f"{env} is not set" in line and f"export {env}=" in line and "\n" not in line


def test_list_configured_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert list_configured() == ["local"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OLLAMA_HOST", "localhost:11434")
    monkeypatch.setenv("MOOT_MODEL", "openai-compatible:http://h:1/v1#m")
    assert list_configured() == ["local", "anthropic:claude-haiku-4-5", "ollama:llama3.2", "openai-compatible:http://h:1/v1#m"]


def test_prices_can_be_overridden_by_file(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    assert price_for("openai:unknown-model") is None
    assert price_for("ollama:llama3.2").input == 0  # type: ignore[union-attr]
    assert price_for("anthropic:claude-sonnet-4-5-20250929").output == 15.0  # type: ignore[union-attr]
    path = tmp_path / "prices.json"
    path.write_text('{"openai:unknown-model": {"input": 1.5, "output": 3}}')
    monkeypatch.setenv("MOOT_PRICES", str(path))
    assert price_for("openai:unknown-model").output == 3.0  # type: ignore[union-attr]
    path.write_text("not json")
    with pytest.raises(ConfigError, match="cannot read prices"):
        price_for("openai:gpt-4o")


def test_bad_concurrency_setting_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_MAX_CONCURRENCY", "lots")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abc")
    with pytest.raises(ConfigError, match="MOOT_MAX_CONCURRENCY"):
        infer_model("openai:gpt-4o")
    monkeypatch.setenv("MOOT_MAX_CONCURRENCY", "openai=2,anthropic=1")
    reset_limiters()
    stacked = infer_model("openai:gpt-4o")
    assert stacked.describe()["concurrency_limit"] == 2
