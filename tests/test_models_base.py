"""The model interface and the public test models."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, TypeAdapter

from moot.errors import MalformedResponseError, RequestBlockedError
from moot.models import (
    AssistantMessage,
    ModelRequest,
    OutputSchema,
    StreamDone,
    TextDelta,
    ToolResultMessage,
    Usage,
    UserMessage,
    messages_from,
)
from moot.models.base import parse_json_output
from moot.models.testing import (
    FunctionModel,
    ScriptedModel,
    allow_real_requests,
    check_allowed,
    real_requests_blocked,
    tool_call,
)


class Answer(BaseModel):
    value: int
    unit: str


ANSWER_SCHEMA = OutputSchema(name="answer", json_schema=TypeAdapter(Answer).json_schema())


def ask(text: str, **kwargs) -> ModelRequest:  # type: ignore[no-untyped-def]
    return ModelRequest(messages=messages_from(text), **kwargs)


async def test_scripted_model_answers_in_order_and_records_requests() -> None:
    model = ScriptedModel(["first", tool_call("add", a=1, b=2), {"value": 3, "unit": "m"}])
    first = await model.request(ask("one"))
    second = await model.request(ask("two"))
    third = await model.request(ask("three", output=ANSWER_SCHEMA))
    assert first.text == "first"
    assert second.tool_calls[0].name == "add" and second.tool_calls[0].arguments == {"a": 1, "b": 2}
    assert second.finish_reason == "tool_calls"
    assert Answer.model_validate(third.output) == Answer(value=3, unit="m")
    assert [r.messages[-1].content for r in model.requests] == ["one", "two", "three"]
    # usage is counted like a real model's, so budgets can be tested with it
    assert first.usage.requests == 1 and first.usage.input_tokens > 0 and first.usage.output_tokens > 0


async def test_scripted_model_raises_queued_exceptions_and_reports_an_empty_script() -> None:
    model = ScriptedModel([MalformedResponseError("garbled")])
    with pytest.raises(MalformedResponseError):
        await model.request(ask("x"))
    with pytest.raises(AssertionError, match="script is empty"):
        await model.request(ask("y"))


async def test_function_model_sees_the_conversation() -> None:
    async def shout(request: ModelRequest) -> str:
        return request.messages[-1].content.upper()  # type: ignore[union-attr]

    model = FunctionModel(shout)
    response = await model.request(ask("hello"))
    assert response.text == "HELLO"
    assert response.model == "function"


async def test_stream_yields_deltas_then_the_whole_response() -> None:
    model = ScriptedModel(["three little words"])
    events = [event async for event in model.stream(ask("x"))]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 3 and "".join(deltas) == "three little words"
    assert isinstance(events[-1], StreamDone) and events[-1].response.text == "three little words"


def test_structured_output_is_validated_against_the_schema() -> None:
    assert parse_json_output('```json\n{"value": 4, "unit": "kg"}\n```', ANSWER_SCHEMA) == {"value": 4, "unit": "kg"}
    with pytest.raises(MalformedResponseError, match="not valid JSON"):
        parse_json_output("four kilograms", ANSWER_SCHEMA)
    with pytest.raises(MalformedResponseError, match="unit"):
        parse_json_output('{"value": 4}', ANSWER_SCHEMA)


def test_usage_adds_up_and_prompt_size_is_estimated_before_sending() -> None:
    total = Usage(input_tokens=10, output_tokens=5, requests=1, cost_usd=0.5) + Usage(
        input_tokens=1, output_tokens=2, requests=1, cost_usd=0.25
    )
    assert total == Usage(input_tokens=11, output_tokens=7, requests=2, cost_usd=0.75)
    small = ask("hi")
    large = ModelRequest(
        messages=(
            UserMessage(content="word " * 1000),
            AssistantMessage(tool_calls=(tool_call("lookup", q="x"),)),
            ToolResultMessage(tool_call_id="call_1", name="lookup", content="result " * 100),
        )
    )
    assert large.estimated_input_tokens() > 1000 > small.estimated_input_tokens()


def test_the_block_switch_refuses_real_requests_in_tests() -> None:
    # conftest blocks real requests for the whole suite
    assert real_requests_blocked()
    with pytest.raises(RequestBlockedError) as info:
        check_allowed("openai:gpt-4o-mini")
    assert "ScriptedModel" in info.value.one_line()
    with allow_real_requests():
        check_allowed("local")
    assert real_requests_blocked()


def test_after_tool_results_the_small_model_is_asked_to_answer_the_question_in_words() -> None:
    from moot.models.base import AssistantMessage, SystemMessage, ToolCall, ToolResultMessage, UserMessage
    from moot.models.toolchoice import AFTER_TOOL_RESULTS, render_messages

    asked = [SystemMessage(content="Answer."), UserMessage(content="How many tonnes are left? 120 - 95")]
    assert AFTER_TOOL_RESULTS not in str(render_messages(asked))
    with_result = [
        *asked,
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="calculate", arguments={"expression": "120-95"}),)),
        ToolResultMessage(tool_call_id="c1", name="calculate", content="25"),
    ]
    last = render_messages(with_result)[-1]
    assert last["role"] == "user"
    assert last["content"] == f"Tool calculate result: 25\n{AFTER_TOOL_RESULTS}"


def test_nested_output_models_keep_their_definitions_at_the_root_of_the_tool_choice_schema() -> None:
    from pydantic import BaseModel as _Model

    from moot.models.base import OutputSchema, ToolDefinition
    from moot.models.toolchoice import choice_schema

    class Finding(_Model):
        path: str
        line: int

    class Report(_Model):
        findings: list[Finding]

    output = OutputSchema(name="Report", json_schema=Report.model_json_schema())
    lookup = ToolDefinition(name="lookup", description="", parameters={"type": "object", "properties": {}})
    schema = choice_schema([lookup], output)
    # The reference inside anyOf → final_answer must resolve from the root, where the engine looks.
    ref = schema["anyOf"][-1]["properties"]["final_answer"]["properties"]["findings"]["items"]["$ref"]
    assert ref == "#/$defs/Finding" and "Finding" in schema["$defs"]
    assert "$defs" not in schema["anyOf"][-1]["properties"]["final_answer"]
    # The caller's schema is not modified.
    assert "$defs" in output.json_schema


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"final_answer": "The pool holds ten connec', "The pool holds ten connec"),
        ('{"final_answer": "Line one\\nline \\"two', 'Line one\nline "two'),
        ('{"final_answer": "cut in an escape \\u00', "cut in an escape"),
        ('{"final_answer": "cut after a backslash \\', "cut after a backslash"),
        ('{"name": "read_file", "arguments": {"path": "a.py"', None),  # a tool call: nothing to keep
        ('{"final_answer": "', None),  # no words yet
    ],
)
def test_an_answer_cut_by_max_tokens_keeps_its_words(text: str, expected: str | None) -> None:
    from moot.models.toolchoice import salvage_cut_answer

    assert salvage_cut_answer(text) == expected


async def test_retries_count_what_the_failed_attempts_cost() -> None:
    from moot.models.retry import RetryModel, RetryPolicy

    attempts: list[int] = []

    def flaky(request: ModelRequest) -> str:
        attempts.append(1)
        if len(attempts) < 3:
            error = MalformedResponseError("garbled", fix="retry")
            error.retryable = True
            error.usage = Usage(requests=1, input_tokens=100, output_tokens=50)
            raise error
        return "fine"

    async def no_wait(_: float) -> None:
        return None

    model = RetryModel(FunctionModel(flaky), policy=RetryPolicy(max_attempts=5), sleep=no_wait)
    response = await model.request(ask("hi"))
    assert response.text == "fine"
    # Two failed attempts (100 + 50 tokens each) plus the one that worked.
    assert response.usage.requests == 3
    assert response.usage.input_tokens >= 200 and response.usage.output_tokens >= 100

    attempts.clear()
    giving_up = RetryModel(FunctionModel(flaky), policy=RetryPolicy(max_attempts=2), sleep=no_wait)
    with pytest.raises(MalformedResponseError) as caught:
        await giving_up.request(ask("hi"))
    assert caught.value.usage.requests == 2 and caught.value.usage.output_tokens == 100


def test_a_model_per_role_beside_one_default() -> None:
    import pytest

    from moot.errors import ConfigError
    from moot.models.registry import model_for, resolve_models
    from moot.models.testing import ScriptedModel

    default, planner = ScriptedModel(name="default"), ScriptedModel(name="planner-model")
    base, per_role = resolve_models(default, {"planner": planner}, roles=["planner", "writer"], team="demo")
    assert base is default
    assert model_for("planner", base, per_role) is planner and model_for("writer", base, per_role) is default
    with pytest.raises(ConfigError, match="the demo team has no role 'judge'") as info:
        resolve_models(default, {"judge": planner}, roles=["planner", "writer"], team="demo")
    assert "planner, writer" in str(info.value.fix)


class _Fact(BaseModel):
    statement: str
    value: str


class _Facts(BaseModel):
    facts: list[_Fact]


FACTS_SCHEMA = OutputSchema(name="Facts", json_schema=_Facts.model_json_schema())
LOOPING = ('{"facts": [{"statement": "The tower is 31 m from the edge", "value": "31 m"}, '
           '{"statement": "The survey was in February", "value": "February"}, '
           '{"statement": "The cliff lost ground and ground and ground and ground and gro')


def test_a_list_cut_by_max_tokens_keeps_its_complete_items() -> None:
    from moot.models.base import salvage_cut_json

    value = salvage_cut_json(LOOPING, FACTS_SCHEMA)
    assert value == {"facts": [{"statement": "The tower is 31 m from the edge", "value": "31 m"},
                               {"statement": "The survey was in February", "value": "February"}]}
    # Brackets and commas inside strings do not count; an item cut before its last field is dropped.
    tricky = '{"facts": [{"statement": "a [b], {c}", "value": "x"}, {"statement": "d", "val'
    assert salvage_cut_json(tricky, FACTS_SCHEMA) == {"facts": [{"statement": "a [b], {c}", "value": "x"}]}


@pytest.mark.parametrize("text", [
    '{"facts": [{"statement": "cut in the first item',  # no item complete
    '{"answ',  # nothing at all
    '{"facts": [{"statement": "no value field"}, {"statement": "x"',  # the only complete item is invalid
])
def test_nothing_complete_or_valid_is_not_salvaged(text: str) -> None:
    from moot.models.base import salvage_cut_json

    assert salvage_cut_json(text, FACTS_SCHEMA) is None


def test_the_local_model_keeps_a_cut_list_and_does_not_retry_a_cut_it_cannot_mend() -> None:
    from pathlib import Path

    from moot.models.base import Usage, UserMessage
    from moot.models.local import LocalModel

    model = LocalModel(name="local", path=Path("unused.gguf"))  # no engine: only the reply is parsed
    request = ModelRequest(messages=(UserMessage(content="facts"),), output=FACTS_SCHEMA)
    reply = model._response(request, LOOPING, Usage(output_tokens=1200), "length")
    assert reply.finish_reason == "length" and len(reply.output["facts"]) == 2
    with pytest.raises(MalformedResponseError) as info:
        model._response(request, '{"facts": [{"statement": "loops and loops and lo', Usage(output_tokens=1200), "length")
    assert not info.value.retryable and "ran out of max_tokens while writing 'Facts'" in info.value.one_line()
    assert "raise max_tokens" in info.value.one_line()
    # Malformed output that was not cut is still the retryable error it was.
    with pytest.raises(MalformedResponseError) as info:
        model._response(request, '{"facts": oops}', Usage(), "stop")
    assert info.value.retryable
