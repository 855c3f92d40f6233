"""How the ``openai`` agent hands an arm's attachments to the model (``settings.attachments``).

- ``file``: each file is a Chat Completions *file content part* of the first user message,
  after the prompt's text part: ``{"type": "file", "file": {"filename": NAME, "file_data":
  "data:<mime>;base64,<bytes>"}}``.
- ``text``: each file's text is appended to the first user message, headed by its name and
  SHA-256: a PDF extracted with pypdf (page by page), any other file as UTF-8 text (a file
  that is neither cannot be sent this way: ``agent_error``).
- ``auto`` (default): ``file``; if the endpoint rejects the request with HTTP 400 while file
  parts are in it, the same turn is sent again with the files as ``text``.

One ``attachment`` transcript event per file records which way it was actually sent: ``name,
sha256, bytes, mode`` (``file`` or ``text``), ``requested`` (the setting) and, after a
fallback, ``fallback_reason`` (the endpoint's rejection). It is emitted once the first
request carrying the attachments has an outcome (so under ``auto`` it names the mode the
endpoint accepted).
"""

from __future__ import annotations

import base64
import hashlib
import io
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import openai

from pairbench.store._transcript import Transcript

AttachmentMode = Literal["file", "text", "auto"]


class AttachmentError(Exception):
    """An attachment that cannot be sent the way the setting asks (an ``agent_error``)."""


@dataclass(frozen=True)
class Attachment:
    """One attached file, read once."""

    name: str
    data: bytes
    sha256: str

    @classmethod
    def read(cls, path: Path) -> Attachment:
        data = path.read_bytes()
        return cls(path.name, data, hashlib.sha256(data).hexdigest())

    @property
    def mime(self) -> str:
        if self.data.startswith(b"%PDF-") or self.name.lower().endswith(".pdf"):
            return "application/pdf"
        return mimetypes.guess_type(self.name)[0] or "application/octet-stream"

    def file_part(self) -> dict[str, Any]:
        """The Chat Completions file content part (base64 data and the file name)."""
        encoded = base64.b64encode(self.data).decode("ascii")
        return {
            "type": "file",
            "file": {"filename": self.name, "file_data": f"data:{self.mime};base64,{encoded}"},
        }

    def text(self) -> str:
        """The file's text: a PDF's extracted by pypdf, any other file's decoded as UTF-8."""
        if self.mime == "application/pdf":
            from pypdf import PdfReader
            from pypdf.errors import PyPdfError

            try:
                pages = PdfReader(io.BytesIO(self.data)).pages
                return "\n".join(page.extract_text() or "" for page in pages)
            except (PyPdfError, ValueError, OSError) as exc:
                raise AttachmentError(
                    f"attachment {self.name}: pypdf could not extract its text: {exc}"
                ) from exc
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            raise AttachmentError(
                f"attachment {self.name} ({self.mime}) is neither a PDF nor UTF-8 text, so it "
                "cannot be sent as text; set agent.settings.attachments: file"
            ) from None

    def text_block(self) -> str:
        return (
            f"--- attached file: {self.name} (sha256 {self.sha256}), its text follows ---\n"
            f"{self.text().rstrip()}\n--- end of {self.name} ---"
        )


class Attachments:
    """An arm's attachments and the way they are being sent (see the module docstring)."""

    def __init__(self, paths: list[Path], setting: AttachmentMode) -> None:
        self.files = [Attachment.read(p) for p in paths]
        self.setting = setting
        self.mode: Literal["file", "text"] = "text" if setting == "text" else "file"
        self.fallback_reason: str | None = None
        self._recorded = False

    def user_content(self, prompt: str) -> str | list[dict[str, Any]]:
        """The first user message's content: the prompt with the attachments, as ``mode``."""
        if not self.files:
            return prompt
        if self.mode == "file":
            return [{"type": "text", "text": prompt}, *(f.file_part() for f in self.files)]
        return "\n\n".join([prompt, *(f.text_block() for f in self.files)])

    def falls_back(self, exc: Exception) -> bool:
        """Whether a failed request is an endpoint rejecting file parts that ``auto`` answers
        by sending text instead (HTTP 400 while file parts were sent)."""
        return (
            bool(self.files)
            and self.setting == "auto"
            and self.mode == "file"
            and isinstance(exc, openai.APIStatusError)
            and exc.status_code == 400
        )

    def fall_back(self, reason: str) -> None:
        self.mode = "text"
        self.fallback_reason = reason

    def record(self, transcript: Transcript) -> None:
        """Emit one ``attachment`` event per file, once (the mode actually sent)."""
        if self._recorded:
            return
        self._recorded = True
        for f in self.files:
            extra: dict[str, Any] = (
                {"fallback_reason": self.fallback_reason} if self.fallback_reason else {}
            )
            transcript.emit(
                "attachment",
                name=f.name,
                sha256=f.sha256,
                bytes=len(f.data),
                mode=self.mode,
                requested=self.setting,
                **extra,
            )


__all__ = ["Attachment", "AttachmentError", "AttachmentMode", "Attachments"]
