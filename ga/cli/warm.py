"""The model client's SDK, imported on a background thread from the first line of main().

`import openai` is most of ga's start-up (0.9 s of a 1.3 s `ga "Hello"` on a 2-core machine). Begun at once, it
goes on while the main thread parses the flags, reads the config, makes and locks the run folder, probes the
sandbox, lists the SOPs and starts a --local server: the waits among those (disk syncs, child processes, the
server's start) are the SDK's, and the HTTP client's TLS context loads the CA store outside the GIL. The main thread
joins it before its own first import of the SDK (ready()), so the two never import the same modules at once.
"""

from __future__ import annotations

import importlib
import sys
import threading

MODULES = ("openai",)
_thread: threading.Thread | None = None
_made: dict[str, object] = {}


def start() -> None:
    """Begin importing the SDK in the background (once; not when it is imported already)."""
    global _thread
    if _thread is None and not all(m in sys.modules for m in MODULES):
        _thread = threading.Thread(target=_import, name="ga-import-sdk", daemon=True)
        _thread.start()


def ready() -> None:
    """Wait for the background import; the caller's own import then finds the modules loaded (or fails as usual,
    with the real error, if the background import failed)."""
    if _thread is not None:
        _thread.join()


def http_client() -> object | None:
    """The SDK's HTTP client built in the background (None if it was not): its transport's import and its TLS
    context (the CA store, read with the GIL released) cost the main thread nothing. Taken once."""
    ready()
    return _made.pop("http", None)


def _import() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except BaseException:  # the main thread's own import says what is wrong
            return
    try:
        _made["http"] = sys.modules["openai"].DefaultHttpxClient()
    except Exception:  # the model client builds its own
        pass
