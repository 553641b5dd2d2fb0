"""The model layer: one small async interface, one module per provider, composable wrappers.

Pick a model by one string (see :func:`infer_model`)::

    from moot.models import infer_model, ModelRequest, UserMessage
    model = infer_model("local")            # or "openai:gpt-4o-mini", "anthropic:claude-…"
    response = await model.request(ModelRequest(messages=(UserMessage(content="Hi"),)))
"""

from __future__ import annotations

from moot.models.base import (
    ANSWER_ODDS,
    UNLISTED_LOGPROB,
    AssistantMessage,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OutputSchema,
    StreamDone,
    StreamEvent,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    Usage,
    UserMessage,
    WrapperModel,
    messages_from,
    odds_settings,
    yes_margin,
)
from moot.models.concurrency import ConcurrencyLimitedModel
from moot.models.fallback import AllModelsFailedError, FallbackModel
from moot.models.pricing import Price, PricedModel
from moot.models.registry import infer_model, list_configured
from moot.models.retry import RetryModel, RetryPolicy

__all__ = [
    "ANSWER_ODDS",
    "UNLISTED_LOGPROB",
    "odds_settings",
    "yes_margin",
    "AllModelsFailedError",
    "AssistantMessage",
    "ConcurrencyLimitedModel",
    "FallbackModel",
    "Price",
    "PricedModel",
    "RetryModel",
    "RetryPolicy",
    "infer_model",
    "list_configured",
    "Message",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OutputSchema",
    "StreamDone",
    "StreamEvent",
    "SystemMessage",
    "TextDelta",
    "ToolCall",
    "ToolDefinition",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "WrapperModel",
    "messages_from",
]
