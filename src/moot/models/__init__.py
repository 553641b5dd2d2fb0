"""The model layer: one small async interface, one module per provider, composable wrappers.

Pick a model by one string (see :func:`infer_model`)::

    from moot.models import infer_model, ModelRequest, UserMessage
    model = infer_model("local")            # or "openai:gpt-4o-mini", "anthropic:claude-…"
    response = await model.request(ModelRequest(messages=(UserMessage(content="Hi"),)))
"""

from __future__ import annotations

from moot.models.base import (
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
)

__all__ = [
    "AssistantMessage",
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
