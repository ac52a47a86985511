"""python -m tests.scripted SCRIPT.json [--port N]: serve a script of replies as a Chat Completions server."""

from __future__ import annotations

from tests.scripted.script import main

if __name__ == "__main__":
    main()
