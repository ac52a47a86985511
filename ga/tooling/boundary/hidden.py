"""Places hidden from the model: credential stores in HOME, ga's own home (GA_HOME) and the local model server's key.

One list for both sides, whatever the workspace holds (it may be HOME itself): the sandbox masks these places
(tools/guard/sandbox.py) and the file tools refuse to read or write them (protected.py). The user shows a
credential store by naming it, or something inside it (--allow-path ~/.aws, GA_SANDBOX_READ=~/.ssh/known_hosts); a
folder that merely holds one (--allow-path ~) shows none. GA_HOME is never shown whole, naming or not: the sandbox
shows its SOPs (read-only); the file tools read its SOPs, its memory and the run's own folder, and write memory only
after start_long_term_update (`open`)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

HIDDEN_IN_HOME = (
    ".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker", ".dockercfg", ".config/gcloud", ".config/gh",
    ".config/hub", ".config/op", ".config/rclone", ".config/containers/auth.json", ".password-store", ".netrc",
    ".git-credentials", ".pgpass", ".my.cnf", ".pypirc", ".npmrc", ".yarnrc", ".yarnrc.yml", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml", ".m2/settings-security.xml",
    ".gradle/gradle.properties", ".composer/auth.json", ".config/composer/auth.json", ".terraform.d", ".vault-token",
    ".s3cfg", ".boto", ".mc", ".local/share/keyrings", ".mozilla", ".thunderbird", ".config/google-chrome",
    ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge", ".cache/ga")
"""Credential stores, browser profiles (cookies, saved passwords) and ga's own cache (the local model server's key):
hidden wherever visible. Files inside a toolchain's folder (~/.m2, ~/.gradle) are hidden one by one: it still works."""
HISTORIES_IN_HOME = (".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".history", ".python_history",
                     ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history", ".rediscli_history",
                     ".lesshst", ".viminfo", ".local/share/fish/fish_history",
                     ".ipython/profile_default/history.sqlite")
"""Shell and REPL histories, hidden like the credential stores: commands typed there carry passwords and tokens."""
KEEPER = ("ga", "local", "server")
"""The local model server's folder in the user's cache folder ($XDG_CACHE_HOME, when not ~/.cache): its API key,
pid and log (ga/local/server_folder.py)."""
WALK_LIMIT = 200_000
"""Entries of the hidden places looked at to tell whether a file with several names is one of theirs."""


def _kind(place: Path, home: Path) -> str:
    if place.parts[-len(KEEPER):] == KEEPER or place == home / ".cache/ga":
        return "ga's cache, where the local model server keeps its key"
    history = place.is_relative_to(home) and place.relative_to(home).as_posix() in HISTORIES_IN_HOME
    return "a shell or REPL history" if history else "a credential store"


def cache_home(home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """$XDG_CACHE_HOME, or ~/.cache (where ga/local/provision.py keeps the local model)."""
    cache = (os.environ if environ is None else environ).get("XDG_CACHE_HOME", "")
    return Path(cache).expanduser() if cache else home / ".cache"


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


@dataclass(frozen=True, kw_only=True)
class Hidden:
    """The hidden places as one side sees them."""

    home: Path
    ga_home: Path
    named: tuple[Path, ...] = ()
    """Paths the user named (--allow-path, GA_SANDBOX_READ): a credential store they name, or name something inside,
    is shown (to the file tools: only what lies in the named path)."""
    open: tuple[Path, ...] = ()
    """What inside GA_HOME stays reachable for this side."""
    environ: Mapping[str, str] | None = None

    def everywhere(self) -> list[Path]:
        """Every hidden place, named or not, GA_HOME last."""
        stores = [self.home / name for name in (*HIDDEN_IN_HOME, *HISTORIES_IN_HOME)]
        return [*stores, cache_home(self.home, self.environ).joinpath(*KEEPER), self.ga_home]

    def places(self) -> list[Path]:
        """The hidden places the user did not name: what the sandbox masks where it would be visible."""
        return [p for p in self.everywhere() if p == self.ga_home or not any(_inside(n, p) for n in self.named)]

    def why(self, path: Path) -> str:
        """Why `path` (absolute, symlinks resolved) is hidden, or "" when it is not."""
        for place, found in self._holders(path):
            if place == self.ga_home:
                if any(_inside(path, p) for p in self.open):
                    continue
                return (f"inside ga's own home {place} (its settings and keys, the command policy, other runs; only "
                        "its SOPs and memory are for the model)")
            if any(_inside(n, found) and _inside(path, n) for n in self.named):
                continue
            return f"{_kind(place, self.home)} ({place}), hidden from the model"
        return ""

    def _holders(self, path: Path) -> Iterator[tuple[Path, Path]]:
        """(hidden place, the spelling of it that holds `path`): by name, as given or under the real HOME (which may
        be a symlink, /home -> /var/home), then by identity (a place that is itself a link to elsewhere). On strings."""
        text, cache = str(path), str(cache_home(self.home, self.environ))
        rooted = [(str(self.home), f"/{name}") for name in (*HIDDEN_IN_HOME, *HISTORIES_IN_HOME)]
        rooted += [(cache, "/" + "/".join(KEEPER)), (str(self.ga_home), "")]
        real = {root: os.path.realpath(root) for root in {root for root, _ in rooted}}
        for root, rest in rooted:
            for spelling in {root + rest, real[root] + rest}:
                if text == spelling or text.startswith(spelling + "/"):
                    yield Path(root + rest), Path(spelling)
        ids = {}
        for root, rest in rooted:
            with contextlib.suppress(OSError):
                st = os.stat(root + rest)
                ids.setdefault((st.st_dev, st.st_ino), Path(root + rest))
        for folder in (text, *map(str, path.parents)):
            with contextlib.suppress(OSError):
                st = os.stat(folder)
                if (place := ids.get((st.st_dev, st.st_ino))) is not None:
                    yield place, Path(folder)

    def linked(self, st: os.stat_result) -> Path | None:
        """The hidden file that `st` (a file with several names) is another name of, or None. Only files with
        several names are compared: a hidden file has as many names as the one given. Walked at each call (a link
        made a moment ago counts); past WALK_LIMIT entries it cannot tell, and answers GA_HOME (where the most are)."""
        stack, walked = [p for p in self.everywhere() if os.path.lexists(p)], 0
        while stack:
            path = stack.pop()
            walked += 1
            if walked > WALK_LIMIT:
                return self.ga_home
            try:
                found = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(found.st_mode) and not any(_inside(path, p) for p in self.open):
                try:
                    stack += [Path(e.path) for e in os.scandir(path)]
                except OSError:
                    continue
            elif found.st_nlink > 1 and (found.st_dev, found.st_ino) == (st.st_dev, st.st_ino) and self.why(path):
                return path
        return None
