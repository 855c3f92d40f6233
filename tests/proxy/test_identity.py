"""The upstream's identity from its own endpoints and the GGUF it names; a changed
``system_fingerprint`` across responses is flagged where it changed."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

import gguf  # llama.cpp's own GGUF writer (a dev dependency)
import numpy as np

from helpers.proxy import chat_body, post, rig_for
from pairbench.proxy import fingerprints, model_identity
from pairbench.testing.chat_double import start_chat_double


def _tiny_gguf(path: Path) -> Path:
    writer = gguf.GGUFWriter(str(path), "gemma3")
    writer.add_context_length(32768)
    writer.add_file_type(15)  # Q4_K_M
    writer.add_tensor("t", np.zeros((2, 2), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_llama_server_says_what_it_is_and_the_gguf_is_hashed(tmp_path: Path) -> None:
    weights = _tiny_gguf(tmp_path / "tiny.gguf")
    script = {"llama_cpp": True, "model_path": str(weights), "system_fingerprint": "b4242"}
    with start_chat_double(script) as double:
        found = model_identity(double.url)
    assert found.health == "ok" and found.build_info == "b4242"
    assert (found.total_slots, found.n_ctx, found.slots) == (1, 4096, 1)
    assert found.models == ["double"] and found.model_path == str(weights)
    assert found.chat_template_caps is not None and found.chat_template_caps["supports_tools"]
    assert found.sampling_defaults is not None and found.sampling_defaults["top_k"] == 40
    assert found.gguf is not None
    assert found.gguf.sha256 == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert (found.gguf.architecture, found.gguf.file_type, found.gguf.context_length) == (
        "gemma3",
        15,
        32768,
    )
    assert found.gguf.header["general.architecture"] == "gemma3"
    assert "gguf" not in found.missing and "build_info" not in found.missing


def test_a_server_that_is_not_llama_cpp_is_recorded_as_missing_not_an_error() -> None:
    with start_chat_double() as double:  # Chat Completions and /v1/models only
        found = model_identity(double.url)
    assert found.models == ["double"]
    assert found.build_info is None and found.total_slots is None and found.gguf is None
    assert "answered 404" in found.missing["build_info"]
    assert "answered 404" in found.missing["health"] and "answered 404" in found.missing["slots"]
    assert found.missing["gguf"] == "the server names no model_path"


def test_a_model_path_that_is_not_here_is_missing_with_the_reason(tmp_path: Path) -> None:
    not_here = tmp_path / "elsewhere.gguf"
    with start_chat_double({"llama_cpp": True, "model_path": str(not_here)}) as double:
        found = model_identity(double.url)
    assert found.gguf is None and "is not a readable file" in found.missing["gguf"]
    (tmp_path / "bad.gguf").write_bytes(b"PK not a model")
    with start_chat_double({"llama_cpp": True, "model_path": str(tmp_path / "bad.gguf")}) as d:
        assert "not a GGUF" in model_identity(d.url).missing["gguf"]


def test_an_unreachable_server_is_all_missing() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    found = model_identity(f"http://127.0.0.1:{port}")
    assert found.build_info is None and found.models is None
    assert "failed" in found.missing["build_info"] and "failed" in found.missing["models"]


def test_a_changed_fingerprint_is_flagged_where_it_changed(tmp_path: Path) -> None:
    with rig_for({}, tmp_path) as rig:
        post(rig.proxy.url, chat_body())
        post(rig.proxy.url, chat_body())
        steady = fingerprints(rig.proxy.records())
        # the server is swapped mid-campaign (another build answers from now on)
        rig.double.script = rig.double.script.model_copy(update={"system_fingerprint": "b2"})
        post(rig.proxy.url, chat_body(), **{"X-Pairbench-Label": "AR-003"})
        changed = fingerprints(rig.proxy.records())
    assert steady.values == ["fp_pairbench_double"] and not steady.fingerprint_changed
    assert changed.fingerprint_changed and changed.values == ["fp_pairbench_double", "b2"]
    (change,) = changed.changes
    assert (change.n, change.label, change.before, change.after) == (
        3,
        "AR-003",
        "fp_pairbench_double",
        "b2",
    )
