"""Can the model's odds tell a question the sources answer from one they only nearly answer?

Knowing what the sources do not say is a level of its own in every learning suite (and a few
questions of other levels): a question whose answer is absent, with a near miss beside it (the
price of another service, the other branch's hours). The plain draft answers the near miss. This
probe asks the embedded model, over the same sources the plain draft reads, one yes/no question
and reads its odds (the way the graph team reads its choices, ``moot.models.base.yes_margin``):

    Do these sources give the answer to this question? Answer yes or no.

Per level it learns the articles as the team does and recalls each question's evidence as single
mode does. Each row holds the question's ``expects_unknown`` and the yes-margin; ``--summary``
prints how well the margin separates the two kinds (the share of pairs ordered right, AUC) and,
for each threshold, how many unknowns a rule "margin below T: the sources do not say" would catch
and how many answerable questions it would lose.

    python scripts/probe_learning_answerable.py --levels L1,L8 --out /tmp/answerable.jsonl \
        examples/blind-2026-12-05-d examples/blind-2026-12-05-e

Lines already in ``--out`` are not asked again, so a stopped probe resumes.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from moot.models.base import ModelRequest, SystemMessage, UserMessage, odds_settings, yes_margin
from moot.models.registry import infer_model

sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_learning_prompt import append_row, each_question, plain_sources, probe_arguments, rows  # noqa: E402

ASK = ("You read sources and say whether they give the answer to a question. "
       "Answer with one word: yes or no.")


async def probe(suites: list[Path], levels: set[str], model_name: str, out: Path) -> None:
    model = infer_model(model_name)
    done = {(r["suite"], r["question_id"]) for r in rows(out)}
    async for suite, level, question, agent in each_question(suites, model, lambda name, q: (name, q.id) in done,
                                                             levels=levels):
        recalled, sources = plain_sources(agent, question.question)
        margin = None
        if recalled.relevant:
            request = ModelRequest(messages=(SystemMessage(content=ASK), UserMessage(
                content=f"Sources:\n\n{sources}\n\nQuestion: {question.question}\n\n"
                        "Do these sources give the answer to this question? Answer yes or no.")),
                settings=odds_settings(), agent="answerable")
            reply = await model.request(request)
            margin = yes_margin(reply.top_logprobs or {})
        append_row(out, {"suite": suite.name, "level": level.level, "question_id": question.id,
                         "unknown": bool(question.rubric.expects_unknown), "relevant": recalled.relevant,
                         "margin": margin})


def summary(out: Path) -> None:
    scored = [r for r in rows(out) if r["margin"] is not None]
    unknown = [r["margin"] for r in scored if r["unknown"]]
    known = [r["margin"] for r in scored if not r["unknown"]]
    pairs = [(u, k) for u in unknown for k in known]
    auc = sum(1.0 if u < k else 0.5 if u == k else 0.0 for u, k in pairs) / max(1, len(pairs))
    print(f"{len(unknown)} unknown, {len(known)} answerable; AUC (unknown below answerable) {auc:.2f}")
    for t in sorted({round(m, 1) for m in unknown + known} | {0.0}):
        caught = sum(1 for m in unknown if m < t)
        lost = sum(1 for m in known if m < t)
        if caught or lost:
            print(f"  margin < {t:6.1f}: catches {caught:3d} of {len(unknown)} unknown, flags {lost:3d} of {len(known)} answerable")


def main() -> None:
    parser = probe_arguments(__doc__)
    parser.add_argument("--levels", default="", help="only these levels, e.g. L1,L8")
    args = parser.parse_args()
    if args.summary:
        summary(args.out)
        return
    asyncio.run(probe(args.suites, {x.strip() for x in args.levels.split(",") if x.strip()}, args.model, args.out))
    summary(args.out)


if __name__ == "__main__":
    main()
