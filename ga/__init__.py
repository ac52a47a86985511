"""ga: a minimal general-purpose LLM agent built on nine atomic tools."""

__version__ = "0.1.0"
