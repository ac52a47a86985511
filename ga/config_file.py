"""GA_HOME/config.toml: the model endpoint kept in a file, with named profiles, and where each setting comes from.
Its format and the precedence of flags, profile, environment and file: docs/configuration.md.

A key goes with the endpoint it was configured for: a table's api_key / api_key_env is sent only to that table's
base_url (a profile without one: the top level's; a table with none at all: OpenAI's, as a key alone means to the
openai SDK), so `OPENAI_BASE_URL=… ga` never sends the file's key elsewhere; `config set api_key` writes the base_url
it is for. OPENAI_API_KEY serves any endpoint the file gives no key for. A server on this machine (localhost,
127.0.0.0/8, ::1) needs no key. The file is read only when it is a regular file of the user's own, not a symbolic
link, and no one else may write it (nor read it, when it holds a key): whoever can change it decides where the key
goes."""

from __future__ import annotations

import ipaddress
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

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
OPENAI_URL = "https://api.openai.com/v1"
"""The endpoint a key alone is for (the openai SDK's default base URL)."""
DEFAULT_MODEL = "gpt-4.1-mini"
"""The model asked of OpenAI's endpoint when none is named: capable with tools, and cheap."""
NO_KEY = "none needed (a server on this machine)"


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
    found = load_text(home)
    if found is None:
        return {"top": {}, "profiles": {}}
    text, mode = found
    if mode & (stat.S_IWGRP | stat.S_IWOTH):  # whoever can write it decides where the key goes
        raise ConfigError(f"{file} can be changed by other users (mode {stat.S_IMODE(mode):04o}), who could point ga "
                          f"at their own server: chmod 600 {file}")
    tables = parse(text, file)
    if mode & (stat.S_IRGRP | stat.S_IROTH) and any(t.get("api_key") for t in (tables["top"],
                                                                               *tables["profiles"].values())):
        # refused, not warned about: a warning scrolls past on every run while the key stays readable
        raise ConfigError(f"{file} holds an api_key and other users can read it (mode {stat.S_IMODE(mode):04o}): "
                          f"chmod 600 {file} (config set writes it so), or use api_key_env instead")
    return tables


def load_text(home: Path) -> tuple[str, int] | None:
    """The file's text and mode, or None when there is none; a ConfigError when it is not a regular file of the
    user's own reached directly (a symbolic link, another user's file, a FIFO that would hang every run)."""
    file = path(home)
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise ConfigError(f"GA_HOME {home} is not a folder: point GA_HOME at a folder (ga makes a missing one)") \
            from None
    except OSError as e:
        if os.path.islink(file):
            raise ConfigError(f"{file} is a symbolic link (to {os.readlink(file)}): ga reads its endpoint and key "
                              f"only from a file of its own there, never through a link. Replace the link with a "
                              f"copy of the file (or move the file there).") from None
        raise ConfigError(f"Cannot read {file}: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{file} is not a regular file: remove it, then {invocation()} config set KEY VALUE")
        if st.st_uid != os.getuid():
            raise ConfigError(f"{file} belongs to another user (uid {st.st_uid}), who decides where ga's key would "
                              f"go: remove it, or set GA_HOME to a folder of your own.")
        os.set_blocking(f.fileno(), True)
        try:
            return f.read().decode("utf-8"), st.st_mode
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"Cannot read {file}: {e}") from None


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
    if not found.base_url.value:  # a key alone means OpenAI's endpoint, as it does to the openai SDK
        if not (env.get("OPENAI_API_KEY") or any(t.get("api_key") or t.get("api_key_env") for t in (own, top))):
            return found  # nothing configured at all
        found.base_url = Setting(value=OPENAI_URL, source="OpenAI's (a key without a base URL)")
    _key(found, own, top, env)
    if not found.model.value and found.base_url.value.rstrip("/") == OPENAI_URL:
        found.model = Setting(value=DEFAULT_MODEL, source="OpenAI's default in ga")
    return found


def is_local(url: str) -> bool:
    """A server on this machine (localhost, 127.0.0.0/8, ::1), which needs no key: llama.cpp, Ollama, vLLM."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def paired_url(table: dict, top: dict) -> str:
    """The base URL a table's key is for: its own base_url, else (a profile) the top level's, else OpenAI's."""
    return (table.get("base_url") or top.get("base_url") or OPENAI_URL).rstrip("/")


def _key(found: Endpoint, own: dict, top: dict, env: Mapping[str, str]) -> None:
    """The first key that goes with the endpoint in effect: the profile's own, OPENAI_API_KEY when the endpoint came
    from the environment, the top level's, then OPENAI_API_KEY. A table's key goes only to the URL it is paired with
    (paired_url); none found: a server on this machine needs none, any other endpoint's missing key is said."""
    url = found.base_url.value.rstrip("/")
    env_key = {"api_key": env.get("OPENAI_API_KEY", "")}
    candidates = [(own, paired_url(own, top), f"profile {found.profile}"),
                  (env_key if found.base_url.source == "OPENAI_BASE_URL" else {}, "", "OPENAI_API_KEY"),
                  (top, paired_url(top, {}), FILE), (env_key, "", "OPENAI_API_KEY")]
    for table, paired, source in candidates:
        if not (table.get("api_key") or table.get("api_key_env")) or (paired and paired != url):
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
    if is_local(url):
        found.api_key = Setting(source=NO_KEY)
        return
    found.missing_key = _no_key(found, [(t, s) for t, _, s in candidates if t is not env_key and t is not None], top)


def _no_key(found: Endpoint, tables: list[tuple[dict, str]], top: dict) -> str:
    """Whose key is missing, and how to give it (a `config set api_key` that would pair the key with this URL)."""
    url, source, profile = found.base_url.value, found.base_url.source, found.profile
    whose = {"OPENAI_BASE_URL": "from OPENAI_BASE_URL in this shell", "the run": "the endpoint this run started with",
             FILE: f"base_url in {FILE}"}.get(source, f"the endpoint of {source}" if source.startswith("profile ")
                                              else source)
    elsewhere = [f"{where}'s key is kept for {paired_url(t, top)}" for t, where in tables
                 if t.get("api_key") or t.get("api_key_env")]
    note = f" ({'; '.join(elsewhere)}, and is sent only there)" if elsewhere else ""
    if source.startswith("profile ") or source == FILE:  # the table that names the URL takes the key
        keep = f"{invocation()} config set api_key{f' --profile {profile}' if profile else ''} (it asks for the key)"
    elif source == "OPENAI_BASE_URL" and not (top.get("base_url") or top.get("api_key") or top.get("api_key_env")):
        keep = f"{invocation()} config set api_key (it asks for the key, and keeps it for this URL)"
    else:  # the top level keeps another endpoint: a profile keeps this one with its key
        keep = (f"a profile: {invocation()} config set base_url {url} --profile NAME, then config set api_key "
                "--profile NAME, and run with --profile NAME")
    return f"No API key for {url} ({whose}){note}. Set OPENAI_API_KEY in this shell, or keep one for it with {keep}."


def masked(key: str) -> str:
    """A key as `ga config` shows it: enough to tell two apart, never enough to use."""
    if not key:
        return ""
    return f"{key[:3]}…{key[-4:]}" if len(key) >= 16 else "…" * 3
