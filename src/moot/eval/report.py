"""The report: per-level medians and spread, costs, deltas, error analysis, and a chart.

Everything is computed from :class:`EvalResults`, so ``moot eval report RESULTS.json``
rebuilds exactly what the run printed.
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from moot.eval.analysis import STAGES
from moot.eval.judge import agreement
from moot.eval.results import EvalResults, LevelResult, QuestionRecord

MODE_ORDER = ("single", "multi", "context", "teaching")


class ModeSummary(BaseModel):
    """One level in one mode, across runs."""

    mode: str
    answers: int
    pass_rate: float
    """Median over runs of the share of questions passed."""
    pass_min: float
    pass_max: float
    score: float
    """Median over runs of the mean rubric score."""
    score_min: float
    score_max: float
    tokens_per_question: float
    calls_per_question: float
    seconds_per_question: float


class LevelSummary(BaseModel):
    level: str
    name: str
    modes: dict[str, ModeSummary]
    delta: float | None
    """Multi minus single median pass rate (None unless both ran)."""
    learn_seconds: float
    learn_tokens: int
    learn_calls: int
    teaching: str | None = None


def _median(values: list[float]) -> float:
    return round(float(statistics.median(values)), 4) if values else 0.0


def summarise_mode(records: list[QuestionRecord], mode: str) -> ModeSummary | None:
    mine = [r for r in records if r.mode == mode]
    if not mine:
        return None
    by_run: dict[int, list[QuestionRecord]] = {}
    for r in mine:
        by_run.setdefault(r.run, []).append(r)
    rates = [sum(r.passed for r in rs) / len(rs) for rs in by_run.values()]
    scores = [sum(r.score for r in rs) / len(rs) for rs in by_run.values()]
    n = len(mine)
    return ModeSummary(
        mode=mode, answers=n, pass_rate=_median(rates), pass_min=round(min(rates), 4), pass_max=round(max(rates), 4),
        score=_median(scores), score_min=round(min(scores), 4), score_max=round(max(scores), 4),
        tokens_per_question=round(sum(r.input_tokens + r.output_tokens for r in mine) / n, 1),
        calls_per_question=round(sum(r.model_calls for r in mine) / n, 2),
        seconds_per_question=round(sum(r.seconds for r in mine) / n, 2),
    )  # fmt: skip


def summarise_level(level: LevelResult) -> LevelSummary:
    modes = {m: s for m in MODE_ORDER if (s := summarise_mode(level.records, m)) is not None}
    delta = round(modes["multi"].pass_rate - modes["single"].pass_rate, 4) if "multi" in modes and "single" in modes else None
    return LevelSummary(level=level.level, name=level.name, modes=modes, delta=delta,
                        learn_seconds=level.learn.seconds, learn_tokens=level.learn.input_tokens + level.learn.output_tokens,
                        learn_calls=level.learn.model_calls, teaching=level.teaching)  # fmt: skip


def unlearned(results: EvalResults) -> list[str]:
    """Each level's article that failed to learn, with why (``L1: a.md: …``): the team answered
    that level without it, so its scores there are not about reading."""
    return [f"{level.level}: {level.learn.error}" for level in results.levels
            if level.learn is not None and level.learn.error]


def stage_counts(results: EvalResults) -> dict[str, dict[str, int]]:
    """Failed answers per stage, per mode (and ``all``)."""
    counts: dict[str, Counter[str]] = {"all": Counter()}
    for level in results.levels:
        for r in level.records:
            if not r.passed:
                stage = r.stage or "unknown"
                counts["all"][stage] += 1
                counts.setdefault(r.mode, Counter())[stage] += 1
    return {mode: {s: c[s] for s in STAGES if c[s]} for mode, c in counts.items()}


def judge_agreement(results: EvalResults) -> float | None:
    return agreement([(r.passed, bool(r.judge["passed"])) for lv in results.levels for r in lv.records
                      if r.judge is not None])  # fmt: skip


def summary_json(results: EvalResults) -> dict:
    """The headline numbers as one JSON-able object (for --json and benchmarks)."""
    levels = [summarise_level(lv) for lv in results.levels]
    overall = {}
    for mode in results.modes + ["teaching"]:
        recs = [r for lv in results.levels for r in lv.records if r.mode == mode]
        if recs:
            overall[mode] = {"pass_rate": round(sum(r.passed for r in recs) / len(recs), 4),
                             "score": round(sum(r.score for r in recs) / len(recs), 4), "answers": len(recs)}  # fmt: skip
    return {"model": results.model, "agent": results.agent, "modes": results.modes, "runs": results.runs,
            "seconds": results.seconds, "overall": overall, "levels": [lv.model_dump() for lv in levels],
            "stages": stage_counts(results), "judge_agreement": judge_agreement(results)}  # fmt: skip


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def _cell(s: ModeSummary | None, runs: int) -> tuple[str, str]:
    if s is None:
        return "–", "–"
    spread = f" ({_pct(s.pass_min)}–{_pct(s.pass_max)})" if runs > 1 else ""
    return f"{_pct(s.pass_rate)}{spread}", f"{s.score:.2f}"


def render_markdown(results: EvalResults, *, chart: str | None = "progressive.png") -> str:
    """The report as Markdown; ``chart`` is the PNG's file name next to it (None: no image)."""
    levels = [summarise_level(lv) for lv in results.levels]
    out = [f"# Progressive evaluation — {results.agent or 'agent'} on `{results.model or '?'}`", ""]
    temp = "the agent's own (temperature 0)" if results.temperature is None else f"temperature {results.temperature}"
    out += [f"- modes: {', '.join(results.modes)}; runs: {results.runs} (seeds {', '.join(map(str, results.seeds))}; sampling: {temp})",
            f"- started {results.started_at}; took {results.seconds / 60:.1f} min; machine: {results.machine.get('cpus')} CPUs, "
            f"load at start {', '.join(f'{x:.2f}' for x in (results.machine.get('load_at_start') or []))}",
            f"- budget per question: {results.budget or 'set by the agent'}",
            f"- grading: rubric (deterministic){f'; LLM judge `{results.judge_model}`, {results.judge_votes} votes' if results.judge_model else ''}"]  # fmt: skip
    out += [f"- {n}" for n in results.notes]
    out += ["", "## Per level", "",
            "Pass rate = median over runs of the share of questions passed (min–max over runs in brackets); "
            "score = median of the mean rubric score; tokens, model calls and seconds are means per answered question "
            "(single / multi). Learning is counted once per level (its seconds and model calls are the last column).", ""]  # fmt: skip
    with_context = "context" in results.modes
    if with_context:  # the one-call baseline (all the level's articles in one prompt) beside the team
        out.append("| level | single pass | single score | multi pass | multi score | context pass | context score | Δ multi−single | Δ multi−context | tokens/q (single / multi / context) | calls/q | s/q | learning (s, calls) |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    else:
        out.append("| level | single pass | single score | multi pass | multi score | Δ multi−single | tokens/q (single / multi) | calls/q | s/q | learning (s, calls) |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
    for s in levels:
        single, multi, context = s.modes.get("single"), s.modes.get("multi"), s.modes.get("context")
        shown = (single, multi, context) if with_context else (single, multi)
        sp, ss = _cell(single, results.runs)
        mp, ms = _cell(multi, results.runs)
        tok = " / ".join(f"{m.tokens_per_question:.0f}" if m else "–" for m in shown)
        calls = " / ".join(f"{m.calls_per_question:.1f}" if m else "–" for m in shown)
        secs = " / ".join(f"{m.seconds_per_question:.1f}" if m else "–" for m in shown)
        delta = "–" if s.delta is None else f"{s.delta * 100:+.0f} pts"
        cut = next((not getattr(lv, "complete", True) for lv in results.levels if lv.level == s.level), False)
        if with_context:
            cp, cs = _cell(context, results.runs)
            dc = "–" if multi is None or context is None else f"{(multi.pass_rate - context.pass_rate) * 100:+.0f} pts"
            out.append(f"| {s.level} {s.name}{' (interrupted)' if cut else ''} | {sp} | {ss} | {mp} | {ms} | {cp} | {cs} | {delta} | {dc} | {tok} | {calls} | {secs} | {s.learn_seconds:.0f}, {s.learn_calls} |")
        else:
            out.append(f"| {s.level} {s.name}{' (interrupted)' if cut else ''} | {sp} | {ss} | {mp} | {ms} | {delta} | {tok} | {calls} | {secs} | {s.learn_seconds:.0f}, {s.learn_calls} |")
    overall = summary_json(results)["overall"]
    if with_context and overall:
        out += ["", "Overall pass rate (all answers of all runs): " + "; ".join(
            f"{m} {_pct(v['pass_rate'])} of {v['answers']}" for m, v in overall.items())]
    if results.role_models:
        out += ["", "Models per role: " + "; ".join(f"{role} `{name}`" for role, name in results.role_models.items())]
    stopped = [r for lv in results.levels for r in lv.records if (r.trace or {}).get("run_status") == "stopped"]
    if stopped:
        modes_hit = Counter(r.mode for r in stopped)
        lucky = sum(r.passed for r in stopped)
        out += ["", f"{len(stopped)} answers were cut short by the per-question budget ("
                + ", ".join(f"{m} {n}" for m, n in modes_hit.items()) + "); a reply that is only a partial result fails"
                + (f"; {lucky} of them passed: the answer was complete before the stop." if lucky else ".")]
    teaching = [s for s in levels if s.teaching]
    if teaching:
        out += ["", "## Teaching (L7: the student answers after being taught, from an empty memory)", ""]
        for s in teaching:
            t = s.modes.get("teaching")
            if s.teaching == "not supported":
                out.append(f"- {s.level}: not supported by this agent (not scored as zero)")
            elif t is not None:
                out.append(f"- {s.level}: student pass rate {_pct(t.pass_rate)} (runs {_pct(t.pass_min)}–{_pct(t.pass_max)}), "
                           f"score {t.score:.2f}, {t.calls_per_question:.1f} calls and {t.seconds_per_question:.0f} s per quiz question")  # fmt: skip
    if missing := unlearned(results):
        out += ["", "## Articles not learned", "",
                "The team answered these levels without these articles (the one call with the articles had them):", ""]
        out += [f"- {line}" for line in missing]
    counts = stage_counts(results)
    out += ["", "## Error analysis (failed answers by the stage that failed)", ""]
    if not counts["all"]:
        out.append("No failed answers.")
    else:
        modes = [m for m in MODE_ORDER if m in counts or m in results.modes]
        out.append("| stage | " + " | ".join(modes) + " | all |")
        out.append("|---|" + "---|" * (len(modes) + 1))
        for stage in STAGES:
            if counts["all"].get(stage):
                out.append(f"| {stage} | " + " | ".join(str(counts.get(m, {}).get(stage, 0)) for m in modes) + f" | {counts['all'][stage]} |")
        out += ["", "<details><summary>Every failed answer</summary>", ""]
        for lv in results.levels:
            for r in lv.records:
                if not r.passed:
                    answer = " ".join(r.answer.split())[:160].replace("|", "\\|")
                    out.append(f"- {r.question_id} {r.mode} run {r.run}: **{r.stage or 'unknown'}** — {r.stage_reason or ''} "
                               f"(answer: “{answer}”{f'; moot runs show {r.run_id[:8]}' if r.run_id else ''})")  # fmt: skip
        out += ["", "</details>"]
    agree = judge_agreement(results)
    if agree is not None:
        n = sum(1 for lv in results.levels for r in lv.records if r.judge is not None)
        out += ["", "## Judge", "", f"The LLM judge and the rubric agree on pass/fail for {_pct(agree)} of {n} answers."]
    if chart:
        out += ["", "## Chart", "", f"![pass rate per level]({chart})"]
    return "\n".join(out) + "\n"


def render_chart(results: EvalResults, path: str | Path) -> Path:
    """A grouped bar chart of the median pass rate per level and mode, with the run spread."""
    import matplotlib

    matplotlib.use("Agg")  # no display: the chart is a file
    import matplotlib.pyplot as plt

    levels = [summarise_level(lv) for lv in results.levels]
    modes = [m for m in MODE_ORDER if any(m in s.modes for s in levels)]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(levels) + 2), 3.8), dpi=110)
    width = 0.8 / max(1, len(modes))
    colours = {"single": "#8da0cb", "multi": "#fc8d62", "context": "#a6a6a6", "teaching": "#66c2a5"}
    for i, mode in enumerate(modes):
        xs, ys, lo, hi = [], [], [], []
        for x, s in enumerate(levels):
            m = s.modes.get(mode)
            if m is None:
                continue
            xs.append(x - 0.4 + width * (i + 0.5))
            ys.append(m.pass_rate * 100)
            lo.append((m.pass_rate - m.pass_min) * 100)
            hi.append((m.pass_max - m.pass_rate) * 100)
        ax.bar(xs, ys, width, label=mode, color=colours.get(mode),
               yerr=[lo, hi] if results.runs > 1 else None, capsize=2)  # fmt: skip
    ax.set_xticks(range(len(levels)), [s.level for s in levels])
    ax.set_ylim(0, 100)
    ax.set_ylabel("pass rate (%)")
    ax.set_title(f"Progressive suite — {results.model or 'agent'}, {results.runs} run(s)", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(path)
    return path


def write_report(results: EvalResults, directory: str | Path, *, name: str = "progressive") -> tuple[Path, Path]:
    """Write ``<name>.md`` and ``<name>.png`` into ``directory``; returns both paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    png = render_chart(results, directory / f"{name}.png")
    md = directory / f"{name}.md"
    tmp = md.with_name(f".{md.name}.tmp")
    tmp.write_text(render_markdown(results, chart=png.name), encoding="utf-8")
    tmp.replace(md)
    return md, png


__all__ = ["LevelSummary", "ModeSummary", "render_chart", "render_markdown", "stage_counts", "summarise_level",
           "summarise_mode", "summary_json", "write_report"]
