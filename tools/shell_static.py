"""What a literal shell pipeline prints, computed without running it: `echo X | base64 -d | rev`.

The command policy uses it to read scripts hidden in base64, reversed strings or `printf` escapes,
and to see what `xargs` receives.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import os


def xargs_argv(argv: list[str], stdin: str) -> list[str]:
    """The command `xargs [options] cmd args` runs when it reads `stdin`."""
    args = argv[1:]
    placeholder = None
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option in ("-I", "-i"):
            placeholder = args.pop(0) if option == "-I" and args else "{}"
        elif option.startswith("-I"):
            placeholder = option[2:]
        elif option in ("-n", "-P", "-L", "-d", "-E", "-s", "-a") and args:
            args.pop(0)
    items = stdin.split()
    if placeholder:
        return [a.replace(placeholder, " ".join(items)) for a in args] or ["echo"]
    return (args or ["echo"]) + items


def literal_output(argv: list[str], stdin: str | None) -> str | None:
    """What this stage prints given `stdin` (None: the stage is the start), or None when not literal."""
    if not argv:
        return None
    name, args = os.path.basename(argv[0]), argv[1:]
    if name == "echo" and stdin is None:
        escapes = any(a.startswith("-") and "e" in a for a in args)
        text = " ".join(a for a in args if not (a.startswith("-") and set(a[1:]) <= set("neE"))) + "\n"
        return _unescape(text) if escapes else text
    if name == "printf" and stdin is None and args:
        return _unescape(args[0].replace("%s", " ".join(args[1:])) if len(args) > 1 else args[0])
    if name == "cat" and not args:
        return stdin
    if stdin is None:
        return None
    if name in ("base64", "base32") and {"-d", "--decode", "-D"} & set(args):
        try:
            decode = base64.b64decode if name == "base64" else base64.b32decode
            return decode("".join(stdin.split())).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return None
    if name == "rev":
        return "\n".join(line[::-1] for line in stdin.splitlines())
    if name == "xxd" and "-r" in args and "-p" in args:
        try:
            return bytes.fromhex("".join(stdin.split())).decode("utf-8", "replace")
        except ValueError:
            return None
    return None


def _unescape(text: str) -> str:
    try:
        return codecs.decode(text, "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text
