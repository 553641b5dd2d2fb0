"""Does the plain draft's system prompt decide what it gets right? The same evidence, two prompts.

On the blind learning suites the one-call baseline (``prompts/context.md``, the level's articles in
the prompt) passed 123 questions of 504 where the plain draft (``prompts/answer.md``, the recalled
sources) passed 103; the two saw nearly the same text (their input tokens differ by a few dozen).
This probe holds the evidence fixed: per level it learns the articles as the team does, recalls
each question's evidence as single mode does, renders it as the plain draft does, and asks once
per prompt file given with ``--prompt NAME=PATH``. Each answer is graded by the suite's rubric.

``--prompt NAME=PATH@ranked:N`` gives that prompt only the N passages that rank best against the
question (in the sources' order, grouped as the plain draft groups a selection) instead of the
sources whole: does a small model answer better from less text?

    python scripts/probe_learning_prompt.py --model local --out /tmp/prompts.jsonl \
        --prompt answer=src/moot/teams/learning/prompts/answer.md --prompt other=/tmp/other.md \
        examples/blind-2026-12-05-d

Lines already in ``--out`` (suite, level, question, prompt) are not asked again, so a stopped
probe resumes. ``--summary`` prints the counts of an output file and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from moot.eval.levels import Level, Question, load_suite
from moot.eval.rubric import grade_question
from moot.models.base import Model, ModelRequest, ModelSettings, SystemMessage, UserMessage
from moot.models.registry import infer_model
from moot.teams.learning.ask.recall import Recall, recall
from moot.teams.learning.eval_adapter import LearningTeamAgent


def rows(out: Path) -> list[dict[str, Any]]:
    """The rows a probe has written to ``out`` (none before its first)."""
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]


def append_row(out: Path, row: dict[str, Any]) -> None:
    """One row more in ``out``, written at once, so a stopped probe resumes after it."""
    with out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def plain_sources(agent: LearningTeamAgent, question: str) -> tuple[Recall, str]:
    """The question's evidence, recalled as single mode recalls it and rendered as the plain draft sees it."""
    recalled = recall(agent.kb, question)
    return recalled, recalled.render_documents() if recalled.documents else recalled.render()


async def each_question(suites: list[Path], model: Model, asked: Callable[[str, Question], bool], *,
                        levels: Iterable[str] = ()) -> AsyncIterator[tuple[Path, Level, Question, LearningTeamAgent]]:
    """Every question of the suites still to ask (``asked(suite name, question)`` is false), with a
    team that has learned its level's articles: each level is learned once, and not at all when
    none of its questions is left."""
    only = set(levels)
    for suite in suites:
        for level in load_suite(suite):
            todo = [q for q in level.questions if not asked(suite.name, q)]
            if not todo or (only and level.level not in only):
                continue
            async with learned(level, model) as agent:
                for question in todo:
                    yield suite, level, question, agent


def probe_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The arguments every learning probe takes: suite folders, ``--model``, ``--out``, ``--summary``."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("suites", nargs="*", type=Path)
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--summary", action="store_true")
    return parser


@asynccontextmanager
async def learned(level: Level, model: Model) -> AsyncIterator[LearningTeamAgent]:
    """A learning team that has learned one level's articles as the team does, in a folder of
    its own that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="moot-probe-") as folder:
        agent = LearningTeamAgent(Path(folder), model=model)
        try:
            for article in level.articles:
                await agent.learn(level.article_path(article).read_text(encoding="utf-8"),
                                  source=article.source, published=article.published)
            yield agent
        finally:
            agent.kb.close()


async def probe(suites: list[Path], prompts: dict[str, tuple[str, int]], model_name: str, out: Path) -> None:
    model = infer_model(model_name)
    done = {(r["suite"], r["question_id"], r["prompt"]) for r in rows(out)}
    async for suite, level, question, agent in each_question(
            suites, model, lambda name, q: all((name, q.id, p) in done for p in prompts)):
        for name in (p for p in prompts if (suite.name, question.id, p) not in done):
            recalled, whole = plain_sources(agent, question.question)
            if not recalled.relevant:
                text, tokens = f"I don't know: {recalled.why}", 0
            else:
                ranked = prompts[name][1]
                if ranked and recalled.passages:
                    best = {p.id for p in sorted(recalled.passages, key=lambda p: -p.score)[:ranked]}
                    chosen = [p for p in recalled.passages if p.id in best]
                    sources = recalled.model_copy(update={"passages": chosen, "documents": []}).render()
                else:
                    sources = whole
                request = ModelRequest(messages=(SystemMessage(content=prompts[name][0]),
                                                 UserMessage(content=f"Sources:\n\n{sources}\n\nQuestion: {question.question}")),
                                       settings=ModelSettings(max_tokens=300), agent="single")
                reply = await model.request(request)
                text, tokens = reply.text.strip(), reply.usage.input_tokens
            grade = grade_question(text, question)
            append_row(out, {"suite": suite.name, "level": level.level, "question_id": question.id, "prompt": name,
                             "passed": grade.passed, "whole": recalled.whole, "input_tokens": tokens, "answer": text})


def summary(out: Path) -> None:
    written = rows(out)
    by: dict[tuple[str, str, str], dict[str, bool]] = defaultdict(dict)
    for r in written:
        by[(r["suite"], r["level"], r["question_id"])][r["prompt"]] = r["passed"]
    names = sorted({r["prompt"] for r in written})
    complete = {k: v for k, v in by.items() if len(v) == len(names)}
    print(f"{len(complete)} questions asked with every prompt ({', '.join(names)})")
    for name in names:
        print(f"  {name}: passed {sum(v[name] for v in complete.values())}")
    for a in names:
        for b in names:
            if a < b:
                only = Counter(("a" if v[a] else "b") for v in complete.values() if v[a] != v[b])
                print(f"  only {a}: {only['a']}  only {b}: {only['b']}")


def main() -> None:
    parser = probe_arguments(__doc__)
    parser.add_argument("--prompt", action="append", default=[], help="NAME=PATH of a system prompt")
    args = parser.parse_args()
    if args.summary:
        summary(args.out)
        return
    prompts = {}
    for item in args.prompt:
        name, _, spec = item.partition("=")
        path, _, ranked = spec.partition("@ranked:")
        if not path:
            sys.exit(f"--prompt {item!r}: give NAME=PATH or NAME=PATH@ranked:N")
        prompts[name] = (Path(path).read_text(encoding="utf-8").strip(), int(ranked or 0))
    if not prompts or not args.suites:
        sys.exit("give at least one --prompt NAME=PATH and one suite folder")
    asyncio.run(probe(args.suites, prompts, args.model, args.out))


if __name__ == "__main__":
    main()
