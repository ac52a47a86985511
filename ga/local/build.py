"""Building llama.cpp's server from the source vendored in the llama-cpp-python sdist (cmake, a C++ compiler)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from collections import deque
from pathlib import Path

from ga.errors import ConfigError
from ga.local.progress import Steps

CMAKE_OPTIONS = ["-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=ON", "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
                 "-DLLAMA_BUILD_EXAMPLES=OFF", "-DBUILD_SHARED_LIBS=OFF"]
_PERCENT = re.compile(r"^\[\s*(\d+)%\]")


class BuildError(ConfigError):
    """The server could not be built; the message names what is missing or the compiler's last words."""


def ensure_toolchain(steps: Steps) -> None:
    """cmake and a C++ compiler: installed with apt-get when we are root on Debian/Ubuntu, else named."""
    missing = [tool for tool, names in (("cmake", ["cmake"]), ("g++", ["c++", "g++", "clang++"]))
               if not any(shutil.which(n) for n in names)]
    if not missing:
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        with steps.waiting(f"apt-get install {' '.join(missing)} (needed once, to build llama.cpp's server)"):
            for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *missing]):
                if subprocess.run(command, capture_output=True, check=False).returncode != 0:
                    break
            else:
                return
    raise BuildError(f"Building the local model's server needs {' and '.join(missing)}: install them "
                     f"(Debian/Ubuntu: sudo apt-get install {' '.join(missing)}), then run again.")


def apply_patch(patch: Path, root: Path) -> None:
    """Apply a unified diff whose hunks match exactly (a pinned source, so no fuzz is needed)."""
    sections = re.split(r"^--- a/", patch.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    for section in sections:
        target = root / section.split("\n", 1)[1].removeprefix("+++ b/").split("\n", 1)[0].strip()
        text = target.read_text(encoding="utf-8")
        for hunk in re.split(r"^@@[^\n]*@@\n", section, flags=re.MULTILINE)[1:]:
            lines = hunk.splitlines()
            old = "\n".join(line[1:] for line in lines if line[:1] in (" ", "-"))
            new = "\n".join(line[1:] for line in lines if line[:1] in (" ", "+"))
            if text.count(old) != 1:
                raise BuildError(f"{patch.name} does not apply to {target.name}: the source is not the pinned one.")
            text = text.replace(old, new)
        target.write_text(text, encoding="utf-8")


def unpack(tarball: Path, into: Path) -> Path:
    """Extract an sdist, refusing members that would land outside `into`, and return its top folder."""
    with tarfile.open(tarball) as tar:
        members = tar.getmembers()
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # Python before 3.10.12 / 3.11.4: check the paths ourselves
            if any(m.name.startswith("/") or ".." in Path(m.name).parts or m.issym() or m.islnk() for m in members):
                raise BuildError(f"{tarball.name} holds paths outside its folder; remove it and run again.")
            tar.extractall(into)
    return into / members[0].name.split("/")[0]


def build_server(tarball: Path, patch: Path, dest: Path, workdir: Path, steps: Steps) -> None:
    ensure_toolchain(steps)
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    source = unpack(tarball, workdir) / "vendor" / "llama.cpp"
    apply_patch(patch, source)
    build = source / "build"
    log = workdir.parent / "build.log"
    with steps.step("build server", 100, unit="%") as advance:
        _cmake(["cmake", "-S", str(source), "-B", str(build), *CMAKE_OPTIONS], log, lambda p: None)
        done = [0]

        def progress(percent: int) -> None:
            if percent > done[0]:
                advance(percent - done[0])
                done[0] = percent

        _cmake(["cmake", "--build", str(build), "--target", "llama-server", "-j", str(os.cpu_count() or 1)],
               log, progress)
    binary = build / "bin" / "llama-server"
    if not binary.is_file():
        raise BuildError(f"The build finished but made no {binary}; see {log}.")
    tmp = dest.with_suffix(".tmp")
    shutil.copy2(binary, tmp)
    tmp.chmod(0o755)
    os.replace(tmp, dest)
    shutil.rmtree(workdir, ignore_errors=True)


def _cmake(command: list[str], log: Path, progress) -> None:
    tail: deque[str] = deque(maxlen=15)
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(command)}\n")
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.DEVNULL, errors="replace")
        for line in proc.stdout:
            out.write(line)
            tail.append(line.rstrip())
            if m := _PERCENT.match(line):
                progress(int(m[1]))
        code = proc.wait()
    if code != 0:
        last = "\n  ".join(tail)
        raise BuildError(f"Building llama.cpp's server failed ({command[1]} exit {code}); the full log is {log}. "
                         f"Last lines:\n  {last}")
