"""Where jobs run: a local process pool (the default), or a Dask distributed cluster (--executor dask://HOST:PORT,
or tls://HOST:PORT with certificates).

Both hand back concurrent.futures-style futures; the runner waits on them as they complete. Dask workers need ga
importable and the suite and output folder at the same paths as here (a shared file system): a job reads its
task from disk and writes its trial folder there; only the result rows travel back.

The bench trusts its scheduler: Dask sends pickles both ways, so whoever answers at the address runs code in the
bench and on the workers. A dask:// (tcp://) link is neither encrypted nor authenticated; tls:// with a CA, a
certificate and a key (the scheduler and workers started with the same --tls-* options) is both.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import as_completed as futures_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from ga.errors import ConfigError


class Executor(Protocol):
    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Start fn(*args) somewhere; returns a future with .result()."""
        ...

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        """The futures in the order they finish."""
        ...

    def close(self) -> None:
        """Stop: pending jobs are cancelled."""
        ...

    def lost(self, error: BaseException) -> bool:
        """True when a job failed because its worker died (not because of the job): the runner resubmits it once."""
        ...

    def interrupt(self) -> None:
        """Ctrl-C: stop the running jobs the way a trial is stopped (its agent killed, its folder left to rerun)."""
        ...


_harness: list[int] = []
"""In a local worker: the harness's pid, the worker's parent when it started."""


def _start_worker() -> None:
    """A worker's SIGINT is the harness telling it to stop its trial (interrupt()): heard even when the harness was
    started in the background by a shell, which leaves SIGINT ignored for it and so for its workers."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _harness.append(os.getppid())


def leave_if_orphaned() -> None:
    """Between two trials of a local worker whose harness was killed outright (SIGKILL, the OOM killer): the
    worker ends, so the trials it had queued do not start, orphaned, against the model server (nothing is being
    written then: the last trial's result.json is complete). Elsewhere (a Dask worker, the harness): nothing."""
    if _harness and os.getppid() != _harness[0]:
        os._exit(0)


class LocalExecutor:
    """A pool of worker processes (spawned, so a worker starts clean whatever the harness holds)."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        try:
            return self.pool.submit(fn, *args)
        except BrokenProcessPool:  # a worker died (killed, out of memory): the pool is unusable, start another
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new_pool()
            return self.pool.submit(fn, *args)

    def lost(self, error: BaseException) -> bool:
        return isinstance(error, BrokenProcessPool)

    def interrupt(self) -> None:
        # SIGINT, not SIGTERM: the worker's KeyboardInterrupt kills its agent's process group on the way out. The
        # pool has no public way to reach its processes; a terminal's Ctrl-C reaches them by itself, a kill does not.
        for process in list(getattr(self.pool, "_processes", {}).values()):
            with contextlib.suppress(OSError):
                os.kill(process.pid, signal.SIGINT)
        self.pool.shutdown(wait=True, cancel_futures=True)

    def as_completed(self, futures: Iterable[Future]) -> Iterator[Future]:
        return futures_completed(list(futures))

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Jobs on a Dask distributed cluster: a scheduler address, or a Client the caller made (e.g. on a LocalCluster).
    Each job is pure=False (a trial is never a cached result) and retried by nobody: a failure is a failed row."""

    def __init__(self, address: str | None = None, client: Any = None, timeout: float = 10, security: Any = None):
        try:
            from distributed import Client
        except ImportError:
            raise ConfigError(f'--executor dask:// needs Dask: {sys.executable} -m pip install "dask[distributed]" '
                              "(or -r requirements-bench.txt)") from None
        self._own = client is None
        try:
            self.client = client or Client(address, timeout=timeout, security=security)
        except OSError as e:
            raise ConfigError(f"No Dask scheduler at {address}: {e}. Start one with `dask scheduler` and workers "
                              "with `dask worker HOST:PORT`.") from None

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.client.submit(fn, *args, pure=False)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed

        return iter(as_completed(list(futures)))

    def close(self) -> None:
        if self._own:
            self.client.close()

    def lost(self, error: BaseException) -> bool:
        return False  # Dask already reschedules the jobs of a lost worker (KilledWorker after its retries)

    def interrupt(self) -> None:
        self.close()  # the scheduler cancels the jobs of a client that leaves


def make_executor(spec: str, workers: int, tls: tuple[str, str, str] | None = None) -> Executor:
    """`local` (default), `dask://HOST:PORT` (also tcp://HOST:PORT), or `tls://HOST:PORT` with `tls`: the CA file,
    the client certificate and its key (PEM), else Dask's own distributed.comm.tls settings."""
    if tls and not spec.startswith("tls://"):
        raise ConfigError("--tls-ca-file, --tls-cert and --tls-key go with --executor tls://HOST:PORT")
    if spec in ("", "local"):
        return LocalExecutor(workers)
    if spec.startswith("dask://"):
        return DaskExecutor("tcp://" + spec.removeprefix("dask://"))
    if spec.startswith("tcp://"):
        return DaskExecutor(spec)
    if spec.startswith("tls://"):
        return DaskExecutor(spec, security=_security(tls))
    raise ConfigError(f"--executor {spec!r}: use local, dask://HOST:PORT or tls://HOST:PORT")


def _security(files: tuple[str, str, str] | None) -> Any:
    try:
        from distributed.security import Security
    except ImportError:
        raise ConfigError(f'--executor tls:// needs Dask: {sys.executable} -m pip install '
                          '"dask[distributed]"') from None
    if files is None:
        security = Security(require_encryption=True)  # from Dask's config (DASK_DISTRIBUTED__COMM__TLS__...)
        if not (security.tls_ca_file and security.tls_client_cert):
            raise ConfigError("--executor tls:// needs --tls-ca-file, --tls-cert and --tls-key (PEM files: the CA "
                              "that signed the scheduler's certificate, this client's certificate and its key)")
        return security
    for path in files:
        if not os.path.isfile(path):
            raise ConfigError(f"TLS file {path} is not there")
    ca, cert, key = files
    return Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key, require_encryption=True)
