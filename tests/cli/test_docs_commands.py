"""Every ``pairbench ...`` command the documentation shows exists.

Collected from README.md, docs/*.md and src/pairbench/studies/*/README.md: each line of a
fenced code block, and each inline code span, that runs ``pairbench`` (also as
``.venv/bin/pairbench``, after ``$ `` or ``VAR=value``, anywhere in a ``&&`` / ``|`` / ``;``
chain, across ``\\`` continuations). Its command path (``pairbench study
runtime-revision-ab serve-model``) must answer ``--help`` with exit 0, and every option it
shows must be one of that command's, so a renamed or removed command fails here, in the
fast tier, rather than in a newcomer's shell. Run in-process with typer's runner (a few
hundredths of a second per path).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from pairbench.cli import app

ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
# <run-id>, <calibration run>: one word standing for a value (may hold a space).
_ANGLE = re.compile(r"<[^<>\n]*>")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def doc_files() -> list[Path]:
    """The documents a newcomer reads: README.md, docs/*.md and each study's README."""
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "src" / "pairbench" / "studies").glob("*/README.md")),
    ]


@dataclass(frozen=True)
class Shown:
    """One command as a document shows it: where, and its words after ``pairbench``."""

    where: str
    words: tuple[str, ...]


def _code_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, code): every fenced line (continuations joined) and inline span."""
    fenced = False
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            for match in _INLINE.finditer(line):
                yield number, match.group(1)
            continue
        start, head = pending if pending is not None else (number, "")
        body = line.rstrip()
        if body.endswith("\\"):
            pending = (start, head + body[:-1] + " ")
            continue
        pending = None
        yield start, head + line


def _segments(code: str) -> Iterator[list[str]]:
    """The simple commands of one shell line: split at ``&&``, ``||``, ``|``, ``;``, ``&``,
    without comments; a line shlex cannot read (an unclosed quote in prose) yields none."""
    code = _ANGLE.sub("PLACEHOLDER", code.strip())
    code = code.removeprefix("$ ")
    lexer = shlex.shlex(code, posix=True, punctuation_chars="|&;")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return
    words: list[str] = []
    for token in [*tokens, ";"]:
        if token and set(token) <= set("|&;"):
            if words:
                yield words
            words = []
        else:
            words.append(token)


def commands_in(text: str, name: str = "<text>") -> list[Shown]:
    """Every ``pairbench`` command in a markdown text, in order."""
    shown = []
    for number, code in _code_lines(text):
        for words in _segments(code):
            while words and _ENV.match(words[0]):
                words = words[1:]
            if words and (words[0] == "pairbench" or words[0].endswith("/pairbench")):
                shown.append(Shown(f"{name}:{number}", tuple(words[1:])))
    return shown


def _placeholder(word: str) -> bool:
    # COMMAND, FILE, DIR: a word in capitals stands for one the reader picks.
    return word == "PLACEHOLDER" or (word.isupper() and word.isalpha())


def _subcommands(command: Any) -> dict[str, Any] | None:
    # typer vendors its own click: a group is what lists subcommands, whatever its class
    # (`pairbench study` loads each study's commands only when asked, so ask).
    if not callable(getattr(command, "list_commands", None)):
        return None
    ctx = typer.Context(command)
    return {name: command.get_command(ctx, name) for name in command.list_commands(ctx)}


def command_path(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words naming the command: subcommand names while the command is a group. A word
    a group does not know is kept (it claims to be a command; its ``--help`` fails)."""
    command = get_command(app)
    path: list[str] = []
    for word in words:
        subcommands = _subcommands(command)
        if word.startswith("-") or _placeholder(word) or subcommands is None:
            break
        path.append(word)
        if word not in subcommands:
            break
        command = subcommands[word]
    return tuple(path)


def help_exit(path: tuple[str, ...]) -> tuple[int, str]:
    """``pairbench <path> --help`` in-process: its exit code and output."""
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="pairbench")
    return result.exit_code, result.output


def unknown_options(shown: Shown) -> list[str]:
    """The ``--options`` a shown command uses that its command does not have."""
    command = get_command(app)
    for word in command_path(shown.words):
        subcommands = _subcommands(command)
        if subcommands is None or word not in subcommands:
            return []  # not a command: test_every_command_path_answers_help names it
        command = subcommands[word]
    known = {"--help"} | {
        opt for param in command.params for opt in (*param.opts, *param.secondary_opts)
    }
    used = [w.split("=", 1)[0] for w in shown.words if w.startswith("--") and w != "--"]
    return [option for option in used if option not in known]


def _shown_everywhere() -> list[Shown]:
    return [
        shown
        for path in doc_files()
        for shown in commands_in(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]


SHOWN = _shown_everywhere()
PATHS: dict[tuple[str, ...], list[str]] = {}
for _shown in SHOWN:
    PATHS.setdefault(command_path(_shown.words), []).append(_shown.where)


def test_the_docs_show_commands_of_every_kind() -> None:
    # A collector that found nothing would pass every check below.
    wheres = {s.where.split(":")[0] for s in SHOWN}
    assert "README.md" in wheres and any(w.startswith("src/pairbench/studies/") for w in wheres)
    assert ("study", "runtime-revision-ab", "serve-model") in PATHS
    assert ("run",) in PATHS and ("report",) in PATHS


@pytest.mark.parametrize("path", sorted(PATHS), ids=lambda p: " ".join(("pairbench", *p)))
def test_every_command_path_answers_help(path: tuple[str, ...]) -> None:
    code, output = help_exit(path)
    shown_at = ", ".join(PATHS[path][:5])
    assert code == 0, f"`pairbench {' '.join(path)}` shown at {shown_at}:\n{output}"


def test_every_option_shown_is_the_commands() -> None:
    problems = [
        f"{s.where}: pairbench {' '.join(s.words)}: {', '.join(unknown_options(s))}"
        for s in SHOWN
        if unknown_options(s)
    ]
    assert not problems, "options the commands do not have:\n" + "\n".join(problems)


SAMPLE = r"""
Try `pairbench frobnicate --now`, or:

```bash
$ pairbench run exp.yaml --run-seed 7 && pairbench report runs/<run-id> | less
.venv/bin/pairbench study runtime-revision-ab serve-model &   # its model
PAIRBENCH_CACHE=/tmp/c pairbench plan exp.yaml --stage confirmation \
    --write plan.json
pairbench study runtime-revision-ab retrain --fast
pairbench COMMAND --help
pairbench run exp.yaml --no-such-option
```
"""


def test_the_collector_reads_prompts_chains_continuations_and_placeholders() -> None:
    shown = commands_in(SAMPLE)
    assert [(s.where, command_path(s.words)) for s in shown] == [
        ("<text>:2", ("frobnicate",)),
        ("<text>:5", ("run",)),
        ("<text>:5", ("report",)),
        ("<text>:6", ("study", "runtime-revision-ab", "serve-model")),
        ("<text>:7", ("plan",)),
        ("<text>:9", ("study", "runtime-revision-ab", "retrain")),
        ("<text>:10", ()),
        ("<text>:11", ("run",)),
    ]
    assert shown[4].words == ("plan", "exp.yaml", "--stage", "confirmation", "--write", "plan.json")


def test_a_made_up_command_fails() -> None:
    shown = commands_in(SAMPLE)
    verdicts = {command_path(s.words): help_exit(command_path(s.words))[0] for s in shown}
    assert verdicts[("frobnicate",)] != 0
    assert verdicts[("study", "runtime-revision-ab", "retrain")] != 0
    assert verdicts[("study", "runtime-revision-ab", "serve-model")] == 0
    assert verdicts[("run",)] == 0 and verdicts[()] == 0
    assert [unknown_options(s) for s in shown if s.where == "<text>:11"] == [["--no-such-option"]]
    assert unknown_options(shown[4]) == []


def test_the_readme_stays_short_and_every_study_has_its_own() -> None:
    # A newcomer's page: detail lives in docs/ and in each study's README.
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200
    studies = ROOT / "src" / "pairbench" / "studies"
    for folder in sorted(p for p in studies.iterdir() if (p / "__init__.py").is_file()):
        assert (folder / "README.md").is_file(), folder.name
        assert f"({folder.relative_to(ROOT)}/README.md)" in (ROOT / "README.md").read_text()
