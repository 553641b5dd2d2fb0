"""Teams: ready-to-run multi-agent systems built on :mod:`moot.runtime` and :mod:`moot.memory`.

One package per architecture (``learning``, …). Teams sit above the runtime and the
capabilities they use, and a team never imports another team, so each can change on its own.
"""
