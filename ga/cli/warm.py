"""The model client's SDK, imported on a background thread from the first line of main(): `import openai` is most of
ga's start-up, and overlaps the flags, the config, the run folder, the sandbox probe and a --local server's start.
The main thread joins it (ready()) before its own first import of the SDK.
"""

from __future__ import annotations

import importlib
import sys
import threading

_thread: threading.Thread | None = None
_made: dict[str, object] = {}


def start() -> None:
    """Begin importing the SDK in the background (once; not when it is imported already)."""
    global _thread
    if _thread is None and "openai" not in sys.modules:
        _thread = threading.Thread(target=_import, name="ga-import-sdk", daemon=True)
        _thread.start()


def ready() -> None:
    """Wait for the background import (a failed one: the caller's own import says what is wrong)."""
    if _thread is not None:
        _thread.join()


def http_client() -> object | None:
    """The SDK's HTTP client built in the background, its TLS context loaded (None if it was not). Taken once."""
    ready()
    return _made.pop("http", None)


def _import() -> None:
    try:
        _made["http"] = importlib.import_module("openai").DefaultHttpxClient()
    except BaseException:  # the main thread's own import, or the model client, says what is wrong
        pass
