"""Settings from the environment and the flags: a limit must be a number, never NaN or infinity."""

from __future__ import annotations

import pytest

from ga.config import load_settings
from ga.errors import ConfigError
from tests.ga.cli.test_cli import ga


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400"])
@pytest.mark.parametrize("name", ["GA_REQUEST_TIMEOUT", "GA_PRICE_IN"])
def test_a_float_setting_that_is_not_a_finite_number_is_refused(tmp_path, name, value):
    with pytest.raises(ConfigError, match=f"{name}='{value}' is not a valid float"):
        load_settings(env={name: value}, home=tmp_path)


@pytest.mark.parametrize(("flag", "value"), [("--max-time", "nan"), ("--max-time", "inf"), ("--max-turns", "-1")])
def test_a_limit_flag_that_is_not_a_number_of_zero_or_more_is_refused(tmp_path, flag, value):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    proc = ga(["hi", flag, value, "--json"], None, tmp_path / "home", workspace, OPENAI_BASE_URL="http://127.0.0.1:9/v1",
              OPENAI_API_KEY="x", GA_MODEL="m")
    assert proc.returncode == 2 and f"{flag} must be a number, 0 (no limit) or more" in proc.stderr
    assert not (tmp_path / "home/runs").exists() or not list((tmp_path / "home/runs").iterdir())
