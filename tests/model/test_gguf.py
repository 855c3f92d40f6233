"""The GGUF header reader, pinned against the gguf package (llama.cpp's own writer)."""

from __future__ import annotations

from pathlib import Path

import gguf  # llama.cpp's own GGUF package: a dev dependency, the reference here
import numpy as np
import pytest

from pairbench._errors import ModelError
from pairbench.model._weights import gguf_header


def test_the_header_reads_what_the_gguf_package_wrote(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "gemma3")
    writer.add_name("Tiny test model")
    writer.add_context_length(32768)
    writer.add_float32("gemma3.attention.layer_norm_rms_epsilon", 1e-6)
    writer.add_bool("tokenizer.ggml.add_bos_token", True)
    writer.add_token_list(["<pad>", "<eos>", "<bos>", "hello"])
    writer.add_token_scores([0.0, 0.0, 0.0, -1.5])
    writer.add_array("general.tags", ["a", "b"])
    writer.add_tensor("t", np.zeros((2, 2), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    header = gguf_header(path)
    expected = {
        field.name: field.contents()
        for field in gguf.GGUFReader(str(path)).fields.values()
        if not field.name.startswith("GGUF.")
    }
    assert header.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, list):
            assert header[key] == f"array of {len(value)}", key
        elif isinstance(value, float):
            assert header[key] == pytest.approx(value), key
        else:
            assert header[key] == value, key
    assert header["general.name"] == "Tiny test model"
    assert header["tokenizer.ggml.tokens"] == "array of 4"


def test_a_file_that_is_not_gguf_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ModelError, match="not a GGUF file"):
        gguf_header(path)
