"""Exceptions that carry the message to show (to the model or to the user)."""

from __future__ import annotations


class ToolError(Exception):
    """A tool call failed; the message is what the model reads: what happened, what to do next."""


class PermissionDenied(ToolError):
    """A call refused by the permission check; the message names the rule that decided."""

    def __init__(self, message: str, *, shown: str = ""):
        super().__init__(message)
        self.shown = shown
        """The refusal for the human, when the message is only for the model (e.g. "rejected by you: ...")."""


class ConfigError(Exception):
    """Bad flags or environment: printed as one short message, exit code 2."""


class AgentStop(Exception):
    """Ends the loop with a status and exit code (by default failed, 1); the message is shown to the user."""

    status = "failed"
    exit_code = 1


class ContextOverflow(AgentStop):
    """The server refused a request as longer than the model's context: the loop compacts and retries once."""

    def __init__(self, message: str, *, window: int | None = None, sent: int | None = None):
        super().__init__(message)
        self.window = window
        """The model's context in the server's tokens, when the error says."""
        self.sent = sent
        """The request's size in the server's tokens, when the error says."""


class Paused(AgentStop):
    """The run waits for a human (autonomous mode): resume with --resume RUN_ID --answer."""

    status = "paused"
    exit_code = 3


class LimitReached(AgentStop):
    """A turn, token or time limit was reached."""

    status = "limit"
    exit_code = 4


class Interrupted(AgentStop):
    """Ctrl-C: the run is saved and can be resumed."""

    status = "interrupted"
    exit_code = 130


class ModelError(AgentStop):
    """The model request failed for good; the message says what the server said and what to check."""


class ServerUnreachable(ModelError):
    """No connection could be made to the server before any reply: nothing happened, so no run is kept."""


class NotAnAPI(ServerUnreachable):
    """Something answered at the base URL, but not an OpenAI-compatible API (a web page, a 404 without JSON): as
    with no server at all, one try, and a run that had not started is not kept."""
