"""llama.cpp's ``llama-server``, built once per machine from the sources inside llama-cpp-python's PyPI sdist.

The paper tier talks to any OpenAI-compatible endpoint; llama.cpp's ``llama-server`` is the one a researcher with
a laptop most often has, and it is the one whose answers (a real chat template, real stop handling, ``-np N``
parallel slots) the test suite checks the client and parsers against (tests/test_llama_server.py). PyPI is the
only registry reachable here, so the sources come from the ``llama-cpp-python`` sdist, which vendors llama.cpp:

    pip download --no-binary :all: --no-deps llama-cpp-python==0.3.36   # sha256 pinned below, checked
    cmake -S vendor/llama.cpp -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_OPENSSL=OFF ...   # CPU only, no HTTPS
    cmake --build build --target llama-server -j2                         # ~11 CPU-minutes on two cores

`build()` does exactly that into a machine-wide cache folder keyed by the sdist's version and sha256, the CPU
architecture and the CMake flags (``~/.cache/nli-companion/llama-server/0.3.36-832db0699007-x86_64-<flags8>/``
``bin/llama-server``; ``NLI_LLAMA_SERVER_CACHE`` moves the root), under a file lock so two processes never build
at once, and writes ``build.json`` beside the binary with the binary's own sha256: `find_binary()` returns a
cached binary only when that hash still matches (a half-copied or altered file is rebuilt, never run).
``NLI_LLAMA_SERVER`` names a binary you built yourself.

Command line (``scripts/build-llama-server.sh`` runs the first)::

    python -m nli_lib.llm.llamacpp build [--jobs 2]   # build if missing; prints the binary's path
    python -m nli_lib.llm.llamacpp path               # prints the path, exit 1 when not built
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

VERSION = "0.3.36"
"""llama-cpp-python sdist whose vendored llama.cpp is built."""
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
"""sha256 of llama_cpp_python-0.3.36.tar.gz as PyPI serves it (pip checks it too, by --require-hashes)."""
CMAKE_FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF",
               "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_UI=OFF",
               "-DLLAMA_USE_PREBUILT_UI=OFF", "-DGGML_CUDA=OFF", "-DGGML_METAL=OFF", "-DGGML_NATIVE=ON")
"""CPU only, no HTTPS/curl (nothing is fetched at run time), a static binary tuned to this machine's CPU."""
BUILD_SCRIPT = str(Path("scripts") / "build-llama-server.sh")  # relative to the checkout


def cache_root() -> Path:
    """Machine-wide folder holding one build per sdist (``NLI_LLAMA_SERVER_CACHE`` overrides)."""
    env = os.environ.get("NLI_LLAMA_SERVER_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nli-companion" / "llama-server"


def build_dir(root: Path | None = None) -> Path:
    """``<root>/<version>-<sha12>-<arch>-<flags8>``: a new sdist, hash, CPU architecture or CMake flag set is a
    new build."""
    flags = hashlib.sha256(" ".join(CMAKE_FLAGS).encode()).hexdigest()[:8]
    return (root or cache_root()) / f"{VERSION}-{SDIST_SHA256[:12]}-{platform.machine()}-{flags}"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def find_binary(root: Path | None = None) -> Path | None:
    """The llama-server to run: ``NLI_LLAMA_SERVER`` if set (must exist), else the cached build whose sha256
    matches its build.json, else None."""
    env = os.environ.get("NLI_LLAMA_SERVER")
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"NLI_LLAMA_SERVER={env}: no such file")
        return path
    folder = build_dir(root)
    binary, record = folder / "bin" / "llama-server", folder / "build.json"
    if not (binary.is_file() and record.is_file()):
        return None
    try:
        expected = json.loads(record.read_text())["binary_sha256"]
    except (ValueError, KeyError):
        return None
    return binary if _sha256(binary) == expected else None


def _run(cmd: list, log, cwd: Path | None = None) -> None:
    print("$", " ".join(map(str, cmd)), file=log, flush=True)
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RuntimeError(f"llama-server build step failed (exit {done.returncode}): {' '.join(map(str, cmd))}; "
                           f"see {getattr(log, 'name', 'the log')}")


def _download_sdist(work: Path, log) -> Path:
    """pip download of the pinned sdist, hash-checked by pip and again here."""
    req = work / "requirements.txt"
    req.write_text(f"llama-cpp-python=={VERSION} --hash=sha256:{SDIST_SHA256}\n")
    _run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "--require-hashes",
          "-r", req, "-d", work / "sdist"], log)
    sdist = work / "sdist" / f"llama_cpp_python-{VERSION}.tar.gz"
    got = _sha256(sdist)
    if got != SDIST_SHA256:
        raise RuntimeError(f"{sdist.name}: sha256 {got}, expected {SDIST_SHA256}")
    return sdist


def _extract_llama_cpp(sdist: Path, work: Path) -> Path:
    """Only ``vendor/llama.cpp`` from the sdist, with tarfile's data filter (no links out, no devices)."""
    prefix = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
        tar.extractall(work / "src", members=members, filter="data")
    return work / "src" / prefix


def build(jobs: int = 2, root: Path | None = None, log_path: Path | None = None) -> Path:
    """Build llama-server once per machine and return its path (the cached one when it is there)."""
    folder = build_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second builder waits, then finds the binary
        found = find_binary(root) if not os.environ.get("NLI_LLAMA_SERVER") else None
        if found:
            return found
        log_path = log_path or folder / "build.log"
        start = time.time()
        with open(log_path, "w") as log, tempfile.TemporaryDirectory(prefix="llama-build-") as tmp:
            work = Path(tmp)
            src = _extract_llama_cpp(_download_sdist(work, log), work)
            _run(["cmake", "-S", src, "-B", work / "build", *CMAKE_FLAGS], log)
            _run(["cmake", "--build", work / "build", "--target", "llama-server", "-j", str(jobs)], log)
            built = work / "build" / "bin" / "llama-server"
            (folder / "bin").mkdir(exist_ok=True)
            partial = folder / "bin" / ".llama-server.partial"
            shutil.copy2(built, partial)
            os.replace(partial, folder / "bin" / "llama-server")
        binary = folder / "bin" / "llama-server"
        record = {"llama_cpp_python": VERSION, "sdist_sha256": SDIST_SHA256, "cmake_flags": list(CMAKE_FLAGS),
                  "jobs": jobs, "wall_seconds": round(time.time() - start, 1), "machine": platform.machine(),
                  "binary_sha256": _sha256(binary)}
        (folder / "build.json").write_text(json.dumps(record, indent=1) + "\n")
        return binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def serve(binary: Path, gguf: Path, *, parallel: int = 4, ctx_size: int = 8192, alias: str | None = None,
          threads: int = 2, repack: bool = False, timeout_s: float = 120.0, log_path: Path | None = None):
    """Run ``llama-server -m GGUF -np PARALLEL`` on a free local port and yield its ``/v1`` base URL.

    ``ctx_size`` is shared by the slots (each gets ctx_size / parallel tokens); ``alias`` is the model name the
    server answers to (without it, llama-server names the model by its file path). ``repack=False`` passes
    ``--no-repack``: on a CPU with AMX, a native build puts the weights in ggml's AMX buffers, and where the
    kernel or container does not grant AMX tile state the server dies with SIGSEGV in
    ``ggml_backend_amx_mul_mat`` while warming up (seen on this project's build machines); plain CPU buffers
    work everywhere. Stops the server on exit."""
    port = free_port()
    cmd = [str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "-np", str(parallel),
           "-c", str(ctx_size), "-t", str(threads), "--no-webui", *([] if repack else ["--no-repack"])]
    if alias:
        cmd += ["--alias", alias]
    log = open(log_path, "w") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout_s
        while not _healthy(root):
            if proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {proc.returncode} before it was ready: {' '.join(cmd)}"
                                   + (f"; see {log_path}" if log_path else ""))
            if time.time() > deadline:
                raise TimeoutError(f"llama-server not ready after {timeout_s:.0f} s: {' '.join(cmd)}")
            time.sleep(0.2)
        yield root + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log is not subprocess.DEVNULL:
            log.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nli_lib.llm.llamacpp", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build llama-server if this machine has none; print its path")
    b.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")
    sub.add_parser("path", help="print the built llama-server's path; exit 1 when there is none")
    args = ap.parse_args(argv)
    if args.cmd == "build":
        print(build(jobs=args.jobs))
        return 0
    found = find_binary()
    if found is None:
        print(f"no llama-server built for llama-cpp-python {VERSION} under {cache_root()}: run {BUILD_SCRIPT}",
              file=sys.stderr)
        return 1
    print(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
