"""The openai SDK's retries wait from half a second up; in-process these tests shorten its first wait (its backoff
and Retry-After handling stay the SDK's own: test_rate_limit_honours_retry_after still waits the server's second)."""

from __future__ import annotations

import openai._base_client
import pytest


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.01)
