"""`python -m moot` runs the CLI."""

from moot.cli.app import main

main()
