"""ga completion [bash|zsh]: a shell completion script (`eval "$(ga completion bash)"` in ~/.bashrc; zsh: ~/.zshrc).
Its words come from ga's parsers when it is printed; run ids and SOP names from GA_HOME's folders at TAB."""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys

from ga.invocation import invocation

SCRIPT = r"""# ga's shell completion ({prog} completion {shell})
_ga_complete() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} first=${{COMP_WORDS[1]}}
  local home=${{GA_HOME:-$HOME/.ga}} words
  case "$first:$prev" in
    runs:show|runs:rm|*:tail|*:answer|*:stop|*:--resume|*:-r)
      words=$(ls "$home/runs" 2>/dev/null) ;;
    memory:show|memory:rm)
      words=$(ls "$home/sop" 2>/dev/null) ;;
    *:--workdir|*:--allow-path|*:--out)
      COMPREPLY=($(compgen -d -- "$cur")); return ;;
    *:--mode)
      words="default plan confirm" ;;
    *)
      if [ "$COMP_CWORD" -eq 1 ]; then
        words={top}
      else
        case "$first" in
{cases}
          *) words={flags} ;;
        esac
      fi ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -o default -F _ga_complete ga
"""
ZSH = "autoload -U +X bashcompinit && bashcompinit\n"  # zsh reads the same script through its bash emulation


def options(parser: argparse.ArgumentParser) -> list[str]:
    """A parser's long flags and its sub-commands' names."""
    found: list[str] = []
    for action in parser._actions:  # argparse has no public listing of its flags
        if isinstance(action, argparse._SubParsersAction) or (not action.option_strings and action.choices):
            found += list(action.choices)
        elif action.help != argparse.SUPPRESS:
            found += [o for o in action.option_strings if o.startswith("--") and o != "--help"]
    return found


def command_words(module_name: str) -> list[str]:
    """What may follow a command: from its module's parser (parser() or build_parser()), when it has one."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:  # an optional part that is not installed here: no words, plain file completion
        return []
    build = getattr(module, "parser", None) or getattr(module, "build_parser", None)
    words = options(build()) if callable(build) else []
    return [*getattr(module, "TOOLS", ()), *getattr(module, "ACTIONS_BESIDE", ()), *words]


def script(shell: str) -> str:
    from ga.cli.arguments import COMMANDS, build_parser

    flags = options(build_parser())
    cases = "\n".join(f"          {name}) words={shlex.quote(' '.join(command_words(module)))} ;;"
                      for name, module in COMMANDS.items() if name != "completion")
    top = [*COMMANDS, "run", "help", "version", *flags]
    text = SCRIPT.format(prog=invocation(), shell=shell, top=shlex.quote(" ".join(top)),
                         flags=shlex.quote(" ".join(flags)), cases=cases)
    return (ZSH + text) if shell == "zsh" else text


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog=f"{invocation()} completion", description="Print a shell completion script: "
                                'add `eval "$(ga completion bash)"` to ~/.bashrc (zsh: to ~/.zshrc, with zsh).')
    p.add_argument("shell", nargs="?", choices=("bash", "zsh"), default="bash", help="the shell (default bash)")
    args = p.parse_args(argv)
    sys.stdout.write(script(args.shell))
    return 0
