"""`moot eval board`: the task board (breakdown, search and file workers) against one call with every
file in the prompt, on seeded goals over generated notes with gold figures.

The eval layer knows nothing of teams; this command wires the board in as a
:class:`moot.eval.board.GoalSystem`. ``--postgres URL`` runs the board's goals on PostgreSQL
instead of a folder (a scratch database: the goals' tasks stay in it).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any, Optional

import typer

from moot.cli._output import print_json, stdout, write_json_file
from moot.cli._progress import announce, progress_line
from moot.errors import MootError, UsageError

SYSTEMS = ("board", "one-call")


def register(eval_app: typer.Typer) -> None:
    eval_app.command("board")(board_eval)


class BoardSystem:
    """The board team as a :class:`moot.eval.board.GoalSystem`: a goal, three workers, one model."""

    name = "board"

    def __init__(self, model: Any, *, postgres: str | None, timeout_s: float) -> None:
        self.model, self.postgres, self.timeout_s = model, postgres, timeout_s
        self._board: Any = None

    def _open(self, folder: Path) -> Any:
        from moot.teams.board import open_board

        if self.postgres is None:
            board = open_board(str(folder))
            board.init()
            return board
        if self._board is None:
            self._board = open_board(self.postgres)
            self._board.init()
        return self._board

    async def solve(self, goal: Any, folder: Path) -> Any:
        from moot.eval.board import Prediction
        from moot.teams.board.session import solve_goal

        board = self._open(folder)
        before = self.model.usage
        outcome = await solve_goal(board, goal.goal, model=self.model, workspace=folder, timeout_s=self.timeout_s)
        used = self.model.since(before)
        text = outcome.answer if outcome.finished else (outcome.error or "")
        claimed = outcome.goal.claimed_at
        return Prediction(text=text, finished=outcome.finished, calls=used.requests, usage=used, seconds=outcome.seconds,
                          note=f"goal {outcome.goal.id}: {outcome.goal.status.value}, {outcome.model_calls} calls charged",
                          claim_s=None if claimed is None else claimed - outcome.goal.created_at)

    def close(self) -> None:
        if self._board is not None:
            self._board.close()


def board_eval(
    goals: int = typer.Option(24, "--goals", help="How many seeded goals (kinds round-robin: summary, pair, change, "
                              "contrast, missing)."),
    seed: int = typer.Option(1, "--seed", help="The generator's seed."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Model string (default: $MOOT_MODEL, else the embedded model)."),
    systems: str = typer.Option("board,one-call", "--systems", help="Which to run: board, one-call, or both (comma-separated)."),
    postgres: Optional[str] = typer.Option(None, "--postgres", help="Run the board on this PostgreSQL database "
                                           "(postgresql://…, a scratch database) instead of a folder per goal."),
    timeout: float = typer.Option(900.0, "--timeout", help="Seconds a board goal may take before it counts as unfinished."),
    json_out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write every goal's row here (JSON, rewritten after each goal)."),
    as_json: bool = typer.Option(False, "--json", help='Print one JSON object on stdout: {"model", "seed", "backend", "summary", "results"}.'),
) -> None:
    """Score the task board and a one-call baseline on seeded goals with gold figures."""
    announce("eval board")
    from moot.eval.board import Metered, OneCallBaseline, make_goals, score, summarise, write_files
    from moot.models.registry import infer_model

    chosen = [s.strip() for s in systems.split(",") if s.strip()]
    if not chosen or set(chosen) - set(SYSTEMS):
        raise UsageError(f"unknown system(s) in {systems!r}", fix="use --systems board,one-call")
    if goals < 1:
        raise UsageError("--goals must be at least 1", fix="use --goals 20 or more for a result worth reading")
    if postgres is not None and not postgres.startswith(("postgresql://", "postgres://")):
        raise UsageError(f"--postgres takes a postgresql:// URL, not {postgres!r}", fix="pass --postgres postgresql://USER@HOST/DB")
    if timeout <= 0:
        raise UsageError("--timeout must be positive", fix="use --timeout 900")
    metered = Metered(infer_model(model))
    runners: dict[str, Any] = {"board": BoardSystem(metered, postgres=postgres, timeout_s=timeout),
                               "one-call": OneCallBaseline(metered)}
    backend = "postgresql" if postgres else "folder"
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in chosen}
    model_name = getattr(metered, "name", str(model))

    def report() -> dict[str, Any]:
        summary = {name: summarise(r) for name, r in rows.items()}
        return {"model": model_name, "seed": seed, "backend": backend, "goals": goals, "summary": summary, "rows": rows}

    try:
        with tempfile.TemporaryDirectory(prefix="moot-eval-board-") as tmp:
            for goal in make_goals(goals, seed):
                for name in chosen:
                    folder = write_files(goal, Path(tmp) / name / goal.id)
                    try:
                        pred = asyncio.run(runners[name].solve(goal, folder))
                    except MootError as exc:
                        from moot.eval.board import Prediction

                        pred = Prediction(text=exc.one_line(), finished=False, note="error")
                    row = score(goal, pred) | {"system": name, "goal_text": goal.goal, "gold": goal.gold}
                    rows[name].append(row)
                    progress_line("eval board", f"{name:>8} {goal.id}: {'right' if row['right'] else 'wrong'} · figures "
                                  f"{row['figures']} · {'unfinished · ' if row['unfinished'] else ''}{row['calls']} calls, {row['seconds']}s")
                if json_out is not None:
                    write_json_file(json_out, report())
    finally:
        runners["board"].close()
    final = report()
    if json_out is not None:
        write_json_file(json_out, final)
    if as_json:
        print_json({k: final[k] for k in ("model", "seed", "backend", "goals", "summary")} | {"results": str(json_out) if json_out else None})
        return
    _table(final["summary"], backend)
    if json_out is not None:
        stdout.print(f"results: {json_out}")


def _table(summary: dict[str, dict[str, Any]], backend: str) -> None:
    from rich.table import Table

    keys = ["goals", "right", "right_pct", "figure_recall", "unfinished", "missing_named", "restated", "unclaimed",
            "slowest_claim_s", "by_kind", "calls", "calls_per_goal", "tokens", "seconds", "seconds_per_goal"]
    table = Table(title=f"board eval ({backend})", show_edge=False)
    table.add_column("measure")
    for name in summary:
        table.add_column(name)
    for k in keys:
        table.add_row(k, *(str(summary[n].get(k)) for n in summary))
    stdout.print(table)
