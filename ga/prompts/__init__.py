"""Prompt templates are data: `$name` placeholders, and an undefined one is an error, never blank text."""

from __future__ import annotations

from pathlib import Path
from string import Template

_HERE = Path(__file__).parent


def render(name: str, **values: object) -> str:
    template = Template((_HERE / name).read_text(encoding="utf-8"))
    try:
        return template.substitute(values).strip()
    except KeyError as e:
        raise KeyError(f"prompt {name} uses ${e.args[0]}, which was not given") from None
    except ValueError as e:
        raise ValueError(f"prompt {name} is malformed: {e}") from None
