"""ga config [show] | set KEY [VALUE] | unset KEY | path: the model endpoint kept in GA_HOME/config.toml
(ga/config_file.py). `show` says where each setting in effect comes from, the key masked; `set` keeps the file's
comments, writes it 0600, and takes api_key unseen (typed, or a line on stdin), out of the shell's history."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path

from ga import config_file
from ga.config import home_dir
from ga.errors import ConfigError
from ga.invocation import invocation
from ga.runs.disk import atomic_write, private_folder

ACTIONS = ("show", "set", "unset", "path")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} config", description="The model endpoint kept in "
                                "GA_HOME/config.toml: base_url, model, api_key or api_key_env, and [profiles.NAME] "
                                "tables chosen with --profile NAME. Environment variables and flags override it.")
    sub = p.add_subparsers(dest="action", metavar="{show,set,unset,path}", help="what to do (show when left out)")
    show = sub.add_parser("show", help="the settings in effect and where each comes from (the default)")
    show.add_argument("--profile", metavar="NAME", help="as a run with --profile NAME would have them")
    show.add_argument("--json", action="store_true", help="one JSON object on stdout")
    put = sub.add_parser("set", help="write a setting (the file is created 0600)")
    put.add_argument("key", choices=config_file.KEYS, help="the setting")
    put.add_argument("value", nargs="?", help="the value; for api_key, leave it out to type it unseen")
    put.add_argument("--profile", metavar="NAME", help="in [profiles.NAME] instead of the top level")
    drop = sub.add_parser("unset", help="remove a setting")
    drop.add_argument("key", choices=config_file.KEYS, help="the setting")
    drop.add_argument("--profile", metavar="NAME", help="from [profiles.NAME]")
    sub.add_parser("path", help="print the file's path")
    return p


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in (*ACTIONS, "-h", "--help"):
        argv = ["show", *argv]
    args = parser().parse_args(argv)
    home = home_dir()
    if args.action == "path":
        print(config_file.path(home))
        return 0
    if args.action == "show":
        return show(home, args.profile or "", as_json=args.json)
    return change(home, args.key, _value(args) if args.action == "set" else None, args.profile or "")


def show(home: Path, profile: str, *, as_json: bool) -> int:
    file = config_file.path(home)
    profiles = list(config_file.read(home)["profiles"])
    found = config_file.resolve(home, os.environ, profile=profile)
    rows = {"base_url": found.base_url, "model": found.model, "api_key": found.api_key}
    if as_json:
        settings = {n: {"value": config_file.masked(s.value) if n == "api_key" else s.value, "source": s.source}
                    for n, s in rows.items()}
        print(json.dumps({"file": str(file), "exists": file.exists(), "profiles": profiles,
                          "profile": profile or None, "settings": settings, "problem": found.missing_key or None}))
        return 0
    state = f"profiles: {', '.join(profiles)}" if profiles else "no profiles"
    print(f"{file} ({state})" if file.exists() else f"{file}: none yet ({invocation()} config set KEY VALUE makes it)")
    print(f"{'profile':<9} {profile or '-'}")
    for name, setting in rows.items():
        value = config_file.masked(setting.value) if name == "api_key" else setting.value
        print(f"{name:<9} {value or '-':<40} {setting.source}")
    if found.missing_key:
        print(f"! {found.missing_key}")
    return 0


def _value(args: argparse.Namespace) -> str:
    if args.value is not None and args.key == "api_key":  # refused: it is in the shell's history already
        raise ConfigError(f"config set api_key takes the key unseen, not on the command line, where the shell's "
                          "history keeps it (remove that line from it, and consider the key seen). Run "
                          f"`{invocation()} config set api_key` and type it at the prompt, or pipe it in: `printf %s "
                          f"\"$KEY\" | {invocation()} config set api_key`; or name a variable that holds it: "
                          "config set api_key_env NAME.")
    if args.value is not None:
        value = args.value
    elif args.key != "api_key":
        raise ConfigError(f"config set {args.key} needs a value")
    elif sys.stdin.isatty():
        try:
            value = getpass.getpass("api_key (not shown): ")
        except EOFError:  # Ctrl-D: the user changed their mind
            print("\nnothing changed", file=sys.stderr)
            raise SystemExit(1) from None
    else:
        value = sys.stdin.readline().rstrip("\n")
    value = value.strip()
    if not value:
        raise ConfigError(f"{args.key} cannot be empty: to remove it, use config unset {args.key}")
    if args.key == "base_url" and not value.startswith(("http://", "https://")):
        raise ConfigError(f"base_url {value!r} is not an http(s) URL, e.g. http://localhost:8080/v1")
    if args.key == "api_key_env" and not config_file.ENV_NAME.fullmatch(value):
        raise ConfigError(f"api_key_env names an environment variable (e.g. OPENROUTER_API_KEY), not {value!r}")
    return value


def change(home: Path, key: str, value: str | None, profile: str) -> int:
    """Set (value) or remove (None) `key` in the top level or [profiles.NAME]; the file stays valid and 0600."""
    import tomlkit  # only here: reading the file needs only the standard library

    if profile and not config_file.PROFILE.fullmatch(profile):
        raise ConfigError(f"profile name {profile!r}: use letters, digits, '_' and '-'")
    file = config_file.path(home)
    found = config_file.load_text(home)  # refused: a link, another user's file
    try:
        document = tomlkit.parse(found[0]) if found else tomlkit.document()
    except tomlkit.exceptions.TOMLKitError as e:
        raise ConfigError(f"Cannot change {file}: {e}") from None
    table, where = document, f"[profiles.{profile}]" if profile else "the top level"
    if profile and value is not None:
        table = document.setdefault("profiles", tomlkit.table(is_super_table=True)).setdefault(profile, tomlkit.table())
    elif profile:
        table = (document.get("profiles") or {}).get(profile)
    note = ""
    if value is None and (table is None or key not in table):
        print(f"{key} is not set in {where} of {file}.")
        return 0
    if value is None:
        del table[key]
        if profile and not table:
            del document["profiles"][profile]
    else:
        other = {"api_key": "api_key_env", "api_key_env": "api_key"}.get(key)
        if other and other in table:  # a table keeps one way to the key
            del table[other]
            note = f" ({other} removed: a table gives one or the other)"
        table[key] = value
    note += _pair_key(document, table, key, set_key=value is not None)
    text = tomlkit.dumps(document)
    config_file.parse(text, file)  # what is written reads back as valid, or nothing is written
    private_folder(home)
    atomic_write(file, text)  # a temp file made 0600, renamed over the old one
    shown = config_file.masked(value or "") if key == "api_key" else value
    print(f"{'Set' if value is not None else 'Removed'} {key}{f' = {shown}' if value else ''} in {where} of "
          f"{file}{note}.")
    return 0


def _pair_key(document, table, key: str, *, set_key: bool) -> str:  # tomlkit's containers
    """A key is kept with the base URL it is for, so it is never sent elsewhere: one is written with a key set in a
    table that has none; a change of a table's base URL under its key is said."""
    if set_key and key in ("api_key", "api_key_env") and not table.get("base_url"):
        top = document.get("base_url") if table is not document else None
        url = top or os.environ.get("OPENAI_BASE_URL") or config_file.OPENAI_URL
        table["base_url"] = url
        return f"; base_url = {url} written with it: the key is sent only there (change: config set base_url URL)"
    if key == "base_url" and (table.get("api_key") or table.get("api_key_env")):
        top = {} if table is document else {"base_url": document.get("base_url")}
        return f"; the key in this table now goes to {config_file.paired_url(table, top)}"
    return ""
