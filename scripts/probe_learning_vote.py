"""Does voting over sampled answers beat the plain draft's one greedy answer? The same evidence.

Self-consistency is the usual remedy for a small model that reads right some of the time: ask
the same question several times at a temperature and keep the answer most samples agree on. Per
level this probe learns the articles as the team does, recalls each question's evidence and
renders it as the plain draft sees it, then asks with the plain draft's prompt once greedily
(temperature 0) and ``--samples`` times at ``--temperature`` (seeds 1, 2, …). The vote's key is
what an answer states that can be compared (its figures and dates, read by ``moot.text``; a
"the sources do not say" answer is its own key); an answer with no such figure joins the key
whose answers share most words with it. The answer kept is the first sample of the largest key.
Each answer is graded by the suite's rubric; printed: greedy, vote, and whether any sample was
right (what a perfect chooser would reach).

    python scripts/probe_learning_vote.py --out /tmp/vote.jsonl examples/blind-2026-12-06-i
    python scripts/probe_learning_vote.py --out /tmp/vote.jsonl --summary
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_learning_prompt import append_row, each_question, plain_sources, probe_arguments, rows  # noqa: E402

from moot.eval.rubric import grade_question, says_unknown  # noqa: E402
from moot.models.base import ModelRequest, ModelSettings, SystemMessage, UserMessage  # noqa: E402
from moot.models.registry import infer_model  # noqa: E402
from moot.text.numbers import find_quantities  # noqa: E402
from moot.text.words import words  # noqa: E402

PLAIN = (Path(__file__).resolve().parents[1] / "src/moot/teams/learning/prompts/answer.md").read_text(encoding="utf-8").strip()


def key(answer: str) -> str:
    """What an answer states that another can be compared with: its figures, or that it does not know."""
    if says_unknown(answer):
        return "unknown"
    figures = sorted({f"{q.value:g} {q.unit}".strip() for q in find_quantities(answer)})
    return "; ".join(figures)


def vote(samples: list[str]) -> tuple[str, int]:
    """The first sample of the key most samples share, and how many share it."""
    keys = [key(s) for s in samples]
    counts = Counter(k for k in keys if k)
    plain = [i for i, k in enumerate(keys) if not k]
    for i in plain:  # no figure: joined to the key of the sample it shares most words with
        own = set(words(samples[i]))
        best = max((j for j in range(len(samples)) if j != i), default=None,
                   key=lambda j: len(own & set(words(samples[j]))) / max(1, len(own | set(words(samples[j])))))
        counts[keys[best] if best is not None and keys[best] else f"#{i}"] += 1
    top, n = counts.most_common(1)[0]
    chosen = next((s for s, k in zip(samples, keys) if k == top), samples[int(top[1:])] if top.startswith("#") else samples[0])
    return chosen, n


async def probe(suites: list[Path], model_name: str, out: Path, samples: int, temperature: float) -> None:
    model = infer_model(model_name)
    done = {(r["suite"], r["question_id"]) for r in rows(out)}
    async for suite, level, question, agent in each_question(suites, model, lambda name, q: (name, q.id) in done):
        _, sources = plain_sources(agent, question.question)
        messages = (SystemMessage(content=PLAIN), UserMessage(content=f"Sources:\n\n{sources}\n\nQuestion: {question.question}"))
        answers = []
        for n in range(samples + 1):
            settings = ModelSettings(max_tokens=300, temperature=0.0 if n == 0 else temperature, seed=n)
            reply = await model.request(ModelRequest(messages=messages, settings=settings, agent="single"))
            answers.append(reply.text.strip())
        greedy, sampled = answers[0], answers[1:]
        chosen, agreeing = vote(sampled)
        with_greedy, _ = vote(answers)
        append_row(out, {"suite": suite.name, "level": level.level, "question_id": question.id,
                         "greedy": grade_question(greedy, question).passed,
                         "vote": grade_question(chosen, question).passed,
                         "vote_with_greedy": grade_question(with_greedy, question).passed,
                         "any": any(grade_question(s, question).passed for s in answers),
                         "agreeing": agreeing, "answers": answers})


def summary(out: Path) -> None:
    written = rows(out)
    print(f"{len(written)} questions")
    for k in ("greedy", "vote", "vote_with_greedy", "any"):
        print(f"  {k}: {sum(r[k] for r in written)}")
    print(f"  only greedy: {sum(r['greedy'] and not r['vote'] for r in written)}"
          f"  only vote: {sum(r['vote'] and not r['greedy'] for r in written)}")


def main() -> None:
    parser = probe_arguments(__doc__)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--temperature", type=float, default=0.7)
    args = parser.parse_args()
    if args.summary:
        summary(args.out)
        return
    if not args.suites:
        sys.exit("give at least one suite folder")
    asyncio.run(probe(args.suites, args.model, args.out, args.samples, args.temperature))


if __name__ == "__main__":
    main()
