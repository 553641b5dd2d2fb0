"""Does a small model work out figures better by writing the arithmetic as a program that Python
runs than by writing the answer? The same evidence, two ways.

For each question of the suites given whose expected answer holds a number early on (a figure,
a count, an amount, a date), the level's articles are learned as the team learns them and the
question's evidence recalled and rendered as the plain draft sees it. Then:

* ``plain``: the plain draft's own prompt (``prompts/answer.md``), one call;
* ``program``: :data:`PROMPT` after the sources and the reply begun as a code block, one call: the model writes ``name = number`` lines for the
  figures it takes from the sources and lines that combine them; Python runs it
  (:func:`moot.runtime.calculator.safe_program`), refuses a program that writes a number the sources
  and question do not (:func:`unwritten`), and the answer is
  the value with its working.

Each answer is graded by the suite's rubric. Lines already in ``--out`` are not asked again.

    python scripts/probe_learning_program.py --out /tmp/program.jsonl examples/blind-2026-12-06-i
    python scripts/probe_learning_program.py --out /tmp/program.jsonl --summary
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_learning_prompt import append_row, each_question, plain_sources, probe_arguments, rows  # noqa: E402

from moot.eval.levels import Question  # noqa: E402
from moot.eval.rubric import grade_question  # noqa: E402
from moot.models.base import AssistantMessage, ModelRequest, ModelSettings, SystemMessage, UserMessage  # noqa: E402
from moot.models.registry import infer_model  # noqa: E402
from moot.runtime.calculator import CalculationError, ProgramResult, safe_program  # noqa: E402
from moot.teams.learning.specialists.common import fmt  # noqa: E402
from moot.text.numbers import find_quantities, parse_number  # noqa: E402

PROMPT = ("Work out the answer with a short Python program: first one line `name = number` for each number you take from the sources (the number only, no unit or currency sign), then lines that combine them with + - * /, and last `answer = ...`. If the sources do not give the numbers needed, write `answer = None`.")

OPENING = "```python\n"
"""The reply is begun as a code block: asked in words alone, the 0.5B model answered in words."""

CONSTANTS = frozenset({*range(0, 13), 24, 52, 60, 100, 365, 1000})
"""Numbers a program may write though no source does: small counts ("twice", "three weeks" are
written in words) and the fixed sizes of calendar and percentage units."""

_CODE = re.compile(r"```(?:python|py)?\s*\n(.*?)(?:```|\Z)", re.S)
_DIGITS = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class Worked:
    """What a program written by the model works out to, or why it was refused."""

    text: str = ""
    """The answer as the user reads it: the value and its working; empty when refused."""
    result: ProgramResult | None = None
    refused: str = ""


def program_text(reply: str) -> str:
    """The program in a model's reply: its first fenced block, else the reply itself."""
    found = _CODE.search(reply)
    code = (found.group(1) if found else reply).strip()
    # a coder model ends with print(answer) out of habit: a line that shows, not computes
    return "\n".join(line for line in code.splitlines() if not line.strip().startswith("print("))


def written_numbers(text: str) -> set[float]:
    """Every number a text writes, as written (``35p`` gives 35 and 0.35, ``1,944`` gives 1944)."""
    values = {round(q.value, 6) for q in find_quantities(text)}
    for match in _DIGITS.finditer(text):
        value = parse_number(match.group(0))
        if value is not None:
            values.add(round(value, 6))
    return values


def unwritten(result: ProgramResult, evidence: str) -> list[float | int]:
    """The numbers the program writes that neither the evidence writes nor :data:`CONSTANTS` holds."""
    written = written_numbers(evidence)
    return [n for n in result.literals if round(float(n), 6) not in written and n not in CONSTANTS]


def working(result: ProgramResult) -> str:
    """The program's steps as a reader follows them: ``adult = 143 × 12 = 1,716``."""
    shown = []
    for step in result.steps:
        expression = step.expression.replace("*", "×").replace("/", "÷")
        plain = re.fullmatch(r"-?[\d.]+", expression)
        shown.append(f"{step.name.replace('_', ' ')} = {fmt(step.value)}" if plain
                     else f"{step.name.replace('_', ' ')} = {expression} = {fmt(round(step.value, 2))}")
    return "; ".join(shown)


def answer_from_program(reply: str, evidence: str, *, unit: str = "") -> Worked:
    """Run the program in ``reply`` and check its numbers against ``evidence``."""
    try:
        result = safe_program(program_text(reply))
    except CalculationError as exc:
        return Worked(refused=f"not run: {exc}")
    if not result.steps:
        return Worked(refused="not run: no figure taken from the sources")
    missing = unwritten(result, evidence)
    if missing:
        return Worked(result=result, refused=f"unwritten: {', '.join(fmt(n) for n in missing)} in no source")
    value = fmt(round(float(result.value), 2))
    return Worked(text=f"{value}{unit} ({working(result)}).", result=result)

PLAIN = (Path(__file__).resolve().parents[1] / "src/moot/teams/learning/prompts/answer.md").read_text(encoding="utf-8").strip()


def _asks_a_figure(expected: str) -> bool:
    return bool(re.search(r"\d", expected[:25]))


async def probe(suites: list[Path], model_name: str, out: Path) -> None:
    model = infer_model(model_name)
    done = {(r["suite"], r["question_id"], r["way"]) for r in rows(out)}
    ways = ("plain", "program")

    def asked(name: str, q: Question) -> bool:
        return not _asks_a_figure(q.expected) or all((name, q.id, way) in done for way in ways)

    async for suite, level, question, agent in each_question(suites, model, asked):
        _, sources = plain_sources(agent, question.question)
        for way in (w for w in ways if (suite.name, question.id, w) not in done):
            prompt = f"Sources:\n\n{sources}\n\nQuestion: {question.question}"
            if way == "plain":
                messages = (SystemMessage(content=PLAIN), UserMessage(content=prompt))
            else:  # the instruction after the sources, and the reply begun as code
                messages = (SystemMessage(content="You write short Python programs."),
                            UserMessage(content=f"{prompt}\n\n{PROMPT}"), AssistantMessage(content=OPENING))
            reply = await model.request(ModelRequest(messages=messages, settings=ModelSettings(max_tokens=300), agent=way))
            raw, refused = (reply.text.strip() if way == "plain" else OPENING + reply.text), ""
            if way == "plain":
                text = raw
            else:
                unit = "%" if re.search(r"per ?cent|%", question.question, re.I) else ""
                worked = answer_from_program(raw, f"{sources}\n{question.question}", unit=unit)
                text, refused = (worked.text, "") if worked.text else ("", worked.refused)
            append_row(out, {"suite": suite.name, "level": level.level, "question_id": question.id, "way": way,
                             "passed": grade_question(text, question).passed, "answer": text, "raw": raw,
                             "refused": refused, "input_tokens": reply.usage.input_tokens,
                             "output_tokens": reply.usage.output_tokens})


def summary(out: Path) -> None:
    by: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for r in rows(out):
        by[(r["suite"], r["question_id"])][r["way"]] = r
    both = {k: v for k, v in by.items() if len(v) == 2}
    print(f"{len(both)} questions asked both ways")
    for way in ("plain", "program"):
        print(f"  {way}: passed {sum(v[way]['passed'] for v in both.values())}")
    print(f"  program gave a value: {sum(1 for v in both.values() if v['program']['answer'])};"
          f" refused: {Counter(v['program']['refused'].split(':')[0] for v in both.values() if v['program']['refused'])}")
    only = Counter("plain" if v["plain"]["passed"] else "program" for v in both.values() if v["plain"]["passed"] != v["program"]["passed"])
    print(f"  only plain: {only['plain']}  only program: {only['program']}")
    levels = Counter((v["plain"]["level"], w) for v in both.values() for w in ("plain", "program") if v[w]["passed"])
    print("  by level:", {lv: (levels[(lv, 'plain')], levels[(lv, 'program')]) for lv in sorted({k[0] for k in levels})})


def main() -> None:
    args = probe_arguments(__doc__).parse_args()
    if args.summary:
        summary(args.out)
        return
    if not args.suites:
        sys.exit("give at least one suite folder")
    asyncio.run(probe(args.suites, args.model, args.out))


if __name__ == "__main__":
    main()
