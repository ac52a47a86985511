"""What the configured endpoint serves: GET /v1/models, for `models` (the loop reads it for the window only)."""

from __future__ import annotations

import openai

from ga.config import Settings
from ga.errors import ModelError
from ga.model.client import OpenAIModel


def served_models(settings: Settings) -> tuple[list[str], int | None]:
    """The model ids the endpoint lists, and the configured model's context window when the server says it (one
    try; ModelError with a short reason when the endpoint cannot say)."""
    model = OpenAIModel(settings)
    try:
        listed = model.model_list()
    except openai.APIStatusError as e:
        raise ModelError(f"it answered HTTP {e.status_code} to GET /models") from None
    except openai.APIConnectionError as e:
        cause = e.__cause__ or e
        raise ModelError(f"it cannot be reached ({type(cause).__name__}: {cause})") from None
    except (openai.APIError, ValueError) as e:  # a 200 that is not a model list
        raise ModelError(f"its answer to GET /models is not a model list ({type(e).__name__})") from None
    ids = sorted(str(m["id"]) for m in listed if m.get("id"))
    window = model.context_window(listed) if settings.model in ids or len(ids) == 1 else None
    return ids, window
