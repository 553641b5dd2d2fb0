"""The graph reasoning team: five agents grow a noisy graph scaffold. See docs/graph-reasoning.md."""
