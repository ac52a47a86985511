"""Subcommands (python run.py COMMAND ...): each module's main(argv) -> exit code; routed by ga/cli.py's COMMANDS."""
