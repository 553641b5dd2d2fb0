"""`moot eval …`: the evaluation command group; each suite registers its own subcommand."""

from __future__ import annotations

import typer

from moot.cli import eval_board_cmd, eval_deliberation_cmd, eval_graph_cmd, eval_progressive_cmd, eval_research_cmd

eval_app = typer.Typer(help="Evaluate teams: the progressive L1–L12 suite, the code research suite, the graph suite, the deliberation suite, the task board suite.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    eval_progressive_cmd.register(eval_app)
    eval_research_cmd.register(eval_app)
    eval_graph_cmd.register(eval_app)
    eval_deliberation_cmd.register(eval_app)
    eval_board_cmd.register(eval_app)
    app.add_typer(eval_app, name="eval")
