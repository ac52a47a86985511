"""GA_HOME/config.toml: the model endpoint kept in a file, with named profiles, and where each setting comes from.

    base_url = "http://localhost:8080/v1"      # the top level: used when nothing else says
    model = "qwen2.5-coder"
    api_key_env = "LLAMA_KEY"                   # or api_key = "..." (the file must then be private: 0600)

    [profiles.openai]                           # chosen with --profile openai; fills in from the top level
    base_url = "https://api.openai.com/v1"
    model = "gpt-4.1"
    api_key_env = "OPENAI_API_KEY"

Precedence, highest first: flags (--model), the profile chosen with --profile (or the one a resumed run was started
with), the environment (OPENAI_BASE_URL, GA_MODEL, OPENAI_API_KEY), the endpoint a resumed run remembers, the
file's top level. A key goes with the endpoint it was configured for: a table's api_key / api_key_env is sent only
to that table's base_url (so `OPENAI_BASE_URL=… ga` never sends the file's key elsewhere); OPENAI_API_KEY serves
any endpoint the file gives no key for.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ga.errors import ConfigError
from ga.invocation import invocation

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

FILE = "config.toml"
KEYS = ("base_url", "model", "api_key", "api_key_env")
"""What a table may set."""
PROFILE = re.compile(r"[A-Za-z0-9_-]{1,64}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def path(home: Path) -> Path:
    return home / FILE


@dataclass(kw_only=True)
class Setting:
    value: str = ""
    source: str = "not set"
    """Where the value came from, as `ga config` shows it: "GA_MODEL", "config.toml", "profile openai"..."""


@dataclass(kw_only=True)
class Endpoint:
    """The model endpoint in effect, each part with its source."""

    base_url: Setting = field(default_factory=Setting)
    model: Setting = field(default_factory=Setting)
    api_key: Setting = field(default_factory=Setting)
    profile: str = ""
    missing_key: str = ""
    """Why the key configured for this endpoint could not be read (an api_key_env that is not set), else ""."""


def read(home: Path) -> dict:
    """The file's tables, checked: {"top": {...}, "profiles": {name: {...}}}; empty when there is no file."""
    file = path(home)
    try:
        with open(file, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            text = f.read().decode("utf-8")
    except FileNotFoundError:
        return {"top": {}, "profiles": {}}
    except NotADirectoryError:
        raise ConfigError(f"GA_HOME {home} is not a folder: point GA_HOME at a folder (ga makes a missing one)") \
            from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"Cannot read {file}: {e}") from None
    if mode & (stat.S_IWGRP | stat.S_IWOTH):  # whoever can write it decides where the key goes
        raise ConfigError(f"{file} can be changed by other users (mode {stat.S_IMODE(mode):04o}), who could point ga "
                          f"at their own server: chmod 600 {file}")
    tables = parse(text, file)
    if mode & (stat.S_IRGRP | stat.S_IROTH) and any(t.get("api_key") for t in _all(tables)):
        # refused, not warned about: a warning scrolls past on every run while the key stays readable
        raise ConfigError(f"{file} holds an api_key and other users can read it (mode {stat.S_IMODE(mode):04o}): "
                          f"chmod 600 {file} (config set writes it so), or use api_key_env instead")
    return tables


def parse(text: str, file: Path) -> dict:
    """The tables of a config file's text, checked (ConfigError naming the file otherwise)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{file} is not valid TOML: {e}") from None
    profiles = data.pop("profiles", {})
    if not isinstance(profiles, dict) or not all(isinstance(t, dict) for t in profiles.values()):
        raise ConfigError(f"{file}: profiles are tables, e.g. [profiles.local] with base_url = \"...\" under it")
    return {"top": _table(data, file, ""), "profiles": {n: _table(t, file, n) for n, t in profiles.items()}}


def _table(table: dict, file: Path, profile: str) -> dict:
    where = f"[profiles.{profile}]" if profile else "the top level"
    if profile and not PROFILE.fullmatch(profile):
        raise ConfigError(f"{file}: profile name {profile!r}: use letters, digits, '_' and '-'")
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"{file}: unknown setting {key!r} in {where}; known: {', '.join(KEYS)}, and "
                              "[profiles.NAME] tables")
        if not isinstance(value, str):
            raise ConfigError(f"{file}: {key} in {where} must be a string, e.g. {key} = \"...\"")
    if table.get("api_key") and table.get("api_key_env"):
        raise ConfigError(f"{file}: {where} gives both api_key and api_key_env; keep one")
    if table.get("api_key_env") and not ENV_NAME.fullmatch(table["api_key_env"]):
        raise ConfigError(f"{file}: api_key_env in {where} names an environment variable, e.g. OPENAI_API_KEY")
    return table


def _all(tables: dict) -> list[dict]:
    return [tables["top"], *tables["profiles"].values()]


def resolve(home: Path, env: Mapping[str, str], *, profile: str = "", remembered_url: str = "") -> Endpoint:
    """The endpoint in effect for this invocation (see the module's precedence); `remembered_url`: the base URL a
    resumed run started with."""
    tables = read(home)
    if profile and profile not in tables["profiles"]:
        known = ", ".join(tables["profiles"]) or "none yet"
        raise ConfigError(f"No profile {profile!r} in {path(home)} (profiles: {known}). Add one with: "
                          f"{invocation()} config set base_url URL --profile {profile}")
    top, own = tables["top"], tables["profiles"].get(profile, {})
    layers = [(own, f"profile {profile}"),
              ({"base_url": env.get("OPENAI_BASE_URL", ""), "model": env.get("GA_MODEL", "")}, "env"),
              ({"base_url": remembered_url}, "the run"), (top, FILE)]
    found = Endpoint(profile=profile)
    for name in ("base_url", "model"):
        for table, source in layers:
            if table.get(name):
                where = {"env": "OPENAI_BASE_URL" if name == "base_url" else "GA_MODEL"}.get(source, source)
                setattr(found, name, Setting(value=table[name], source=where))
                break
    _key(found, own, top, env)
    return found


def _key(found: Endpoint, own: dict, top: dict, env: Mapping[str, str]) -> None:
    """The first key that goes with the endpoint in effect: the profile's own, OPENAI_API_KEY when the endpoint came
    from the environment, the top level's, then OPENAI_API_KEY. A table's key goes only to the table's base_url (a
    profile without one inherits the top level's); a table without any base_url gives its key to any endpoint."""
    url = found.base_url.value.rstrip("/")
    env_key = {"api_key": env.get("OPENAI_API_KEY", "")}
    candidates = [(own, own.get("base_url") or top.get("base_url", ""), f"profile {found.profile}"),
                  (env_key if found.base_url.source == "OPENAI_BASE_URL" else {}, "", "OPENAI_API_KEY"),
                  (top, top.get("base_url", ""), FILE), (env_key, "", "OPENAI_API_KEY")]
    for table, paired, source in candidates:
        if not (table.get("api_key") or table.get("api_key_env")) or (paired and paired.rstrip("/") != url):
            continue
        if table.get("api_key"):
            named = source if table is env_key else f"api_key ({source})"
            found.api_key = Setting(value=table["api_key"], source=named)
            return
        name = table["api_key_env"]
        found.api_key = Setting(value=env.get(name, ""), source=f"${name} (api_key_env, {source})")
        if not env.get(name):
            found.missing_key = (f"The key for {url or 'the endpoint'} is read from ${name} (api_key_env in "
                                 f"{source}), which is not set in this shell.")
        return


def masked(key: str) -> str:
    """A key as `ga config` shows it: enough to tell two apart, never enough to use."""
    if not key:
        return ""
    return f"{key[:3]}…{key[-4:]}" if len(key) >= 16 else "…" * 3
