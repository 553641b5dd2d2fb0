"""What a request cost, in US dollars, from a per-model price table.

Prices are USD per million tokens, taken from the public price pages
(https://openai.com/api/pricing, https://www.anthropic.com/pricing) as known on
**2025-11-01**. Providers change prices; check them before relying on a number, and override
any entry with a JSON file named by ``MOOT_PRICES`` or the ``prices`` argument::

    {"openai:gpt-4o-mini": {"input": 0.15, "output": 0.60},
     "my-finetune": {"input": 1.0, "output": 2.0}}

Local engines, Ollama and other self-hosted OpenAI-compatible servers cost nothing per
token. A remote model missing from the table costs 0 and is reported by :func:`price_for`
as unknown, so a budget never silently treats a priced model as free without a trace.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moot.errors import ConfigError, ModelError
from moot.models.base import ModelRequest, ModelResponse, StreamDone, StreamEvent, Usage, WrapperModel

PRICES_DATE = "2025-11-01"


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    def cost(self, usage: Usage) -> float:
        return (usage.input_tokens * self.input + usage.output_tokens * self.output) / 1_000_000


PRICES: dict[str, Price] = {
    # OpenAI (openai.com/api/pricing, standard tier)
    "openai:gpt-5": Price(1.25, 10.00),
    "openai:gpt-5-mini": Price(0.25, 2.00),
    "openai:gpt-5-nano": Price(0.05, 0.40),
    "openai:gpt-4.1": Price(2.00, 8.00),
    "openai:gpt-4.1-mini": Price(0.40, 1.60),
    "openai:gpt-4.1-nano": Price(0.10, 0.40),
    "openai:gpt-4o": Price(2.50, 10.00),
    "openai:gpt-4o-mini": Price(0.15, 0.60),
    "openai:o3": Price(2.00, 8.00),
    "openai:o3-mini": Price(1.10, 4.40),
    "openai:o4-mini": Price(1.10, 4.40),
    # Anthropic (anthropic.com/pricing, base input / output)
    "anthropic:claude-opus-4-5": Price(5.00, 25.00),
    "anthropic:claude-opus-4-1": Price(15.00, 75.00),
    "anthropic:claude-opus-4": Price(15.00, 75.00),
    "anthropic:claude-sonnet-4-5": Price(3.00, 15.00),
    "anthropic:claude-sonnet-4": Price(3.00, 15.00),
    "anthropic:claude-3-7-sonnet": Price(3.00, 15.00),
    "anthropic:claude-3-5-sonnet": Price(3.00, 15.00),
    "anthropic:claude-haiku-4-5": Price(1.00, 5.00),
    "anthropic:claude-3-5-haiku": Price(0.80, 4.00),
    "anthropic:claude-3-haiku": Price(0.25, 1.25),
}

FREE = Price(0.0, 0.0)
_FREE_PROVIDERS = ("local", "ollama", "openai-compatible", "scripted", "function")


def load_price_file(path: str | Path) -> dict[str, Price]:
    """Read a price override file: ``{"model": {"input": USD, "output": USD}}`` per million."""
    try:
        raw = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
        return {str(k): Price(float(v["input"]), float(v["output"])) for k, v in raw.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"cannot read prices from {path}: {exc}",
            fix='MOOT_PRICES must name a JSON file like {"openai:gpt-4o": {"input": 2.5, "output": 10}}',
        ) from None


def price_table(prices: Mapping[str, Price] | None = None) -> dict[str, Price]:
    """The built-in table, updated by ``MOOT_PRICES`` and then by ``prices``."""
    table = dict(PRICES)
    env = os.environ.get("MOOT_PRICES", "").strip()
    if env:
        table.update(load_price_file(env))
    if prices:
        table.update(prices)
    return table


def price_for(model_name: str, prices: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model_name`` (a model string), or ``None`` when it is unknown.

    Dated snapshots match their family (``claude-sonnet-4-5-20250929`` is priced as
    ``claude-sonnet-4-5``); the longest matching prefix wins so ``gpt-4o-mini`` is not priced
    as ``gpt-4o``. An entry without a provider prefix matches any provider.
    """
    table = price_table(prices)
    provider, _, bare = model_name.partition(":") if ":" in model_name else ("", "", model_name)
    if provider in _FREE_PROVIDERS or model_name.startswith("local"):
        return table.get(model_name, FREE)
    for candidate in (model_name, bare):
        if candidate in table:
            return table[candidate]
    best: tuple[int, Price] | None = None
    for key, price in table.items():
        key_provider, _, key_bare = key.partition(":") if ":" in key else ("", "", key)
        if key_provider and key_provider != provider:
            continue
        if bare.startswith(key_bare) and (best is None or len(key_bare) > best[0]):
            best = (len(key_bare), price)
    return best[1] if best else None


def model_price(model: object) -> Price | None:
    """The price a model is billed at, read from its :class:`PricedModel` wrapper before any
    call (``None`` when nothing in its wrapper stack knows a price). Budgets use it to hold
    dollars for a request before it is sent."""
    seen = 0
    while model is not None and seen < 32:  # wrappers nest a handful deep; a cycle is a bug
        if isinstance(model, PricedModel):
            return model.price
        alternatives = getattr(model, "models", None)  # a fallback chain is priced as its primary
        model = alternatives[0] if isinstance(alternatives, tuple) and alternatives else getattr(model, "wrapped", None)
        seen += 1
    return None


@dataclass
class PricedModel(WrapperModel):
    """Fills ``usage.cost_usd`` on every response of the wrapped model."""

    prices: Mapping[str, Price] | None = None
    price: Price | None = field(default=None, init=False)
    """The price in force, or ``None`` when the model is not in the table (cost stays 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.price = price_for(self.name, self.prices)

    def _priced(self, response: ModelResponse) -> ModelResponse:
        if self.price is None:
            return response
        usage = response.usage.model_copy(update={"cost_usd": self.price.cost(response.usage)})
        return response.model_copy(update={"usage": usage})

    def _priced_error(self, error: ModelError) -> ModelError:
        """A failed request was billed too (a malformed answer, attempts a retry made)."""
        if self.price is not None and isinstance(error.usage, Usage):
            error.usage = error.usage.model_copy(update={"cost_usd": self.price.cost(error.usage)})
        return error

    async def request(self, request: ModelRequest) -> ModelResponse:
        try:
            response = await self.wrapped.request(request)
        except ModelError as error:
            raise self._priced_error(error)
        return self._priced(response)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        try:
            async for event in self.wrapped.stream(request):
                yield StreamDone(self._priced(event.response)) if isinstance(event, StreamDone) else event
        except ModelError as error:
            raise self._priced_error(error)

    def describe(self) -> dict[str, Any]:
        facts = self.wrapped.describe()
        if self.price is not None:
            facts["price_usd_per_mtok"] = {"input": self.price.input, "output": self.price.output}
        else:
            facts["price_usd_per_mtok"] = "unknown (set MOOT_PRICES)"
        return facts
