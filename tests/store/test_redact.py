"""The redactor: every spelling of a secret value out of text, data, lines and files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from helpers.common import checkout_env
from pairbench.store._redact import Redactor, stored_env, stored_secret

TOKEN = "tok-0123456789abcdef"


def test_a_value_is_replaced_by_its_name() -> None:
    r = Redactor({"API_TOKEN": TOKEN})
    assert r.redact(f"key={TOKEN}; again {TOKEN}") == (
        "key=[redacted:API_TOKEN]; again [redacted:API_TOKEN]"
    )
    assert r.found(f"x{TOKEN}x") and not r.found("tok-0123")


def test_the_longest_value_wins_where_one_contains_another() -> None:
    r = Redactor({"SHORT": "abcdefgh", "LONG": "abcdefgh-and-more"})
    assert r.redact("abcdefgh-and-more abcdefgh") == "[redacted:LONG] [redacted:SHORT]"


def test_json_escaped_spellings_are_redacted() -> None:
    value = 'pa"ss\\wörd-123'
    r = Redactor({"PW": value})
    once = json.dumps({"v": value})  # ensure_ascii: the quote, backslash and ö escaped
    assert value not in r.redact(once) and "[redacted:PW]" in r.redact(once)
    raw = json.dumps({"v": value}, ensure_ascii=False)
    assert json.loads(r.redact(raw)) == {"v": "[redacted:PW]"}
    twice = json.dumps({"line": json.dumps({"v": value})})  # JSON printed, inside a line
    assert json.loads(json.loads(r.redact(twice))["line"]) == {"v": "[redacted:PW]"}


def test_data_keeps_its_shape() -> None:
    r = Redactor({"K": TOKEN})
    data = {"a": [TOKEN, 3, None, True], TOKEN: {"b": f"x{TOKEN}"}}
    assert r.redact_data(data) == {
        "a": ["[redacted:K]", 3, None, True],
        "[redacted:K]": {"b": "x[redacted:K]"},
    }


def test_a_line_stays_json_and_a_number_holding_the_value_is_still_hidden() -> None:
    r = Redactor({"PIN": "12345678"})
    assert json.loads(r.redact_line({"kind": "stdout", "line": "pin 12345678"})) == {
        "kind": "stdout",
        "line": "pin [redacted:PIN]",
    }
    # A value the structure cannot reach (here a number): keeping it out wins over JSON.
    assert "12345678" not in r.redact_line({"kind": "tool_call", "arguments": {"n": 12345678}})
    clean = {"kind": "message", "text": "nothing here"}
    assert r.redact_line(clean) == json.dumps(clean, ensure_ascii=False)


def test_empty_values_are_ignored_and_an_empty_redactor_changes_nothing() -> None:
    r = Redactor({"EMPTY": ""})
    assert not r and r.redact("anything") == "anything" and r.redact_bytes(b"x") == b"x"


def test_a_tree_is_redacted_without_following_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(f"harness file {TOKEN}", encoding="utf-8")
    work = tmp_path / "work"
    (work / "home" / ".cache").mkdir(parents=True)
    leak = work / "home" / ".cache" / "session.jsonl"
    leak.write_text(json.dumps({"env": {"K": TOKEN}}) + "\n", encoding="utf-8")
    (work / "clean.txt").write_text("nothing", encoding="utf-8")
    (work / "link.txt").symlink_to(outside)
    os.link(outside, work / "hard.txt")
    changed = Redactor({"K": TOKEN}).redact_tree(work)
    assert sorted(p.name for p in changed) == ["hard.txt", "session.jsonl"]
    assert TOKEN not in leak.read_text(encoding="utf-8")
    assert (work / "hard.txt").read_text(encoding="utf-8") == "harness file [redacted:K]"
    # The symlink's target and the hard link's other name keep their bytes.
    assert outside.read_text(encoding="utf-8") == f"harness file {TOKEN}"
    assert Redactor({"K": TOKEN}).redact_tree(tmp_path / "missing") == []


def test_stored_forms_hold_a_name_and_a_hash() -> None:
    assert stored_secret("K", "abc") == {
        "name": "K",
        "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    }
    stored = stored_env({"K": TOKEN, "R": "${env:R}", "MODE": "fast"}, {"K", "R"})
    assert stored == {"K": stored_secret("K", TOKEN), "R": "${env:R}", "MODE": "fast"}


# Brackets never occur in a value here: a label's own "[" could otherwise join the text
# around it into a new copy of the value (surrogates cannot be encoded at all).
_CHARS = st.characters(exclude_characters="[]", exclude_categories=["Cs"])


@given(value=st.text(_CHARS, min_size=8), before=st.text(_CHARS), after=st.text(_CHARS))
def test_no_spelling_of_the_value_survives(value: str, before: str, after: str) -> None:
    r = Redactor({"S": value})
    text = f"{before}{value}{after}"
    assert value not in r.redact(text)
    line = r.redact_line({"text": text, value: [value]})
    assert value not in line and json.dumps(value)[1:-1] not in line
    assert json.loads(line)["text"].count("[redacted:S]") >= 1


def _streamed(r: Redactor, data: bytes, path: Path, chunk: int) -> bytes:
    path.write_bytes(data)
    r.redact_file(path, chunk=chunk)
    return path.read_bytes()


def test_a_value_straddling_a_chunk_boundary_is_redacted(tmp_path: Path) -> None:
    # Read 16 bytes at a time, the 20-byte value is cut in two at every one of its offsets
    # across the first boundary (and the last of its forms sits at the file's very end).
    r = Redactor({"K": TOKEN})
    path = tmp_path / "f.bin"
    for start in range(16 - len(TOKEN), 17):
        data = b"a" * start + TOKEN.encode() + b"b" * 5 + TOKEN.encode()
        out = _streamed(r, data, path, chunk=16)
        assert out == b"a" * start + b"[redacted:K]bbbbb[redacted:K]", start
    assert not r.redact_file(path, chunk=16)  # nothing left: the file is not rewritten


def test_a_file_without_a_value_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"tok-0123456789abcde" * 100)  # one byte short of the value, repeated
    inode = path.stat().st_ino
    assert not Redactor({"K": TOKEN}).redact_file(path, chunk=7)
    assert path.stat().st_ino == inode  # not replaced


@given(
    data=st.lists(st.sampled_from([b"x", b"tok-", TOKEN.encode(), b"abcdefgh", b"\xff"])),
    chunk=st.integers(min_value=1, max_value=40),
)
def test_streaming_redacts_the_same_spans_as_the_whole_file(data: list[bytes], chunk: int) -> None:
    # Two values, one inside the other: the longest must win in chunks as it does whole.
    import tempfile

    r = Redactor({"K": TOKEN, "SHORT": "abcdefgh", "LONG": "abcdefgh" + TOKEN})
    whole = b"".join(data)
    with tempfile.TemporaryDirectory() as folder:
        assert _streamed(r, whole, Path(folder) / "f", chunk) == r.redact_bytes(whole)


_PEAK = """
import resource, sys
from pathlib import Path
from pairbench.store._redact import Redactor
path, size, token = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with path.open("wb") as handle:  # sparse: quick to write, as big as it says to the reader
    handle.truncate(size)
    handle.seek(size // 2 - 7)
    handle.write(token.encode())
r = Redactor({"K": token})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert r.redact_file(path)
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def test_redacting_a_big_file_keeps_memory_flat(tmp_path: Path) -> None:
    # A 256 MiB file holding a value at a 1 MiB chunk boundary, redacted in a child: its
    # peak resident memory grows by a few chunks, not by the file (it once read it whole).
    size = 256 << 20
    path = tmp_path / "big.bin"
    child = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path), str(size), TOKEN],
        capture_output=True, text=True, env=checkout_env(), check=True,
    )  # fmt: skip
    before_kib, peak_kib = map(int, child.stdout.split())
    assert (peak_kib - before_kib) * 1024 < 16 << 20, (before_kib, peak_kib)
    assert path.stat().st_size == size - len(TOKEN) + len("[redacted:K]")
    with path.open("rb") as handle:
        handle.seek(size // 2 - 7)
        assert handle.read(12) == b"[redacted:K]"
