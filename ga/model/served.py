"""What the configured endpoint serves: GET /v1/models, for `models` (the loop reads it for the window only)."""

from __future__ import annotations

import openai

from ga.config import Settings
from ga.errors import ModelError
from ga.model.client import OpenAIModel

LIST_TIMEOUT = 10.0
"""Seconds the listing may take: a command that prints what is there must not hang on a dead server."""


def served_models(settings: Settings) -> tuple[list[str], int | None]:
    """The model ids the endpoint lists, and the configured model's context window when the server says it.

    One try, no retries; ModelError with a short reason when the endpoint cannot say."""
    model = OpenAIModel(settings)
    client = model.client.with_options(timeout=LIST_TIMEOUT, max_retries=0)
    try:
        listed = client.models.list().data
    except openai.APIStatusError as e:
        raise ModelError(f"it answered HTTP {e.status_code} to GET /models") from None
    except openai.APIConnectionError as e:
        cause = e.__cause__ or e
        raise ModelError(f"it cannot be reached ({type(cause).__name__}: {cause})") from None
    except (openai.APIError, ValueError, AttributeError, TypeError) as e:  # a 200 that is not a model list
        raise ModelError(f"its answer to GET /models is not a model list ({type(e).__name__})") from None
    ids = sorted(str(m.id) for m in listed if getattr(m, "id", None))
    window = model.context_window() if settings.model in ids or len(ids) == 1 else None
    return ids, window
