"""tinyrt: a small agent runtime written against pairbench's runtime contract alone (no
pairbench import). It reads the task from $PAIRBENCH_PROMPT_FILE, talks to the model at
$PAIRBENCH_BASE_URL (Chat Completions), offers read_file and write_file inside
$PAIRBENCH_WORKSPACE, and ends with one JSON line on stdout: {"status": "done"}.

With $PAIRBENCH_EVENTS set it appends pairbench.runtime-events/1 lines there. REVISION is
what the candidate commit changes: it stops refusing paths that leave the workspace.
"""

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

REVISION = "baseline"
CLAIM_TOKENS = 0  # a revision that inflates its own usage report sets this
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": text,
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            },
        },
    }
    for name, text in (("read_file", "Read a file"), ("write_file", "Write a file"))
]
WORKSPACE = Path(os.environ.get("PAIRBENCH_WORKSPACE", "."))
EVENTS = os.environ.get("PAIRBENCH_EVENTS")
seq = 0


def emit(kind: str, **fields: object) -> None:
    global seq
    if not EVENTS:
        return
    seq += 1
    line = {"schema": "pairbench.runtime-events/1", "seq": seq, "kind": kind, **fields}
    with open(EVENTS, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")


def chat(messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = {
        "model": os.environ["PAIRBENCH_MODEL"],
        "messages": messages,
        "tools": TOOLS,
        "seed": int(os.environ["PAIRBENCH_MODEL_SEED"]),
        "temperature": 1.0,
        "max_tokens": 256,
    }
    request = urllib.request.Request(
        os.environ["PAIRBENCH_BASE_URL"] + "/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    emit("request", round=len(messages))
    with urllib.request.urlopen(request, timeout=60) as response:
        reply: dict[str, Any] = json.loads(response.read())
    usage = dict(reply.get("usage") or {})
    if CLAIM_TOKENS and usage:
        usage["prompt_tokens"] = CLAIM_TOKENS
    emit("usage", usage=usage)
    message: dict[str, Any] = reply["choices"][0]["message"]
    return message


def run_tool(name: str, args: dict[str, str]) -> tuple[bool, str]:
    target = (WORKSPACE / args.get("path", "")).resolve()
    if REVISION == "baseline" and not target.is_relative_to(WORKSPACE.resolve()):
        return False, "refused: the path leaves the workspace"
    if name == "read_file":
        return True, target.read_text(encoding="utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(args.get("content", ""), encoding="utf-8")
    return True, f"wrote {args.get('path')}"


def main() -> int:
    names = [p.relative_to(WORKSPACE).as_posix() for p in sorted(WORKSPACE.rglob("*"))]
    if not all(name.isascii() for name in names):
        # Refused before any model request: a pre-inference rejection.
        emit("rejected", reason="unsupported_path", paths=[n for n in names if not n.isascii()])
        print(json.dumps({"status": "rejected"}))
        return 0
    prompt = Path(os.environ["PAIRBENCH_PROMPT_FILE"]).read_text(encoding="utf-8")
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(8):
        message = chat(messages)
        calls = message.get("tool_calls") or []
        if not calls:
            emit("claim", status="done", summary=message.get("content") or "")
            print(json.dumps({"status": "done"}))
            return 0
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call in calls:
            name, cid = call["function"]["name"], call["id"]
            emit("proposed", call_id=cid, name=name, raw_arguments=call["function"]["arguments"])
            args = json.loads(call["function"]["arguments"])
            op = {"op": "write" if name == "write_file" else "read", "path": args.get("path")}
            emit("normalized", call_id=cid, ok=True, operation=op)
            ok, text = run_tool(name, args)
            emit(
                "authorization",
                call_id=cid,
                decision="allow" if ok else "deny",
                reason="policy" if ok else text,
            )
            if ok:
                emit("executed", call_id=cid, by="model", receipt=op)
            emit("observed", call_id=cid, ok=ok, error=None if ok else text)
            messages.append({"role": "tool", "tool_call_id": cid, "content": text})
    print(json.dumps({"status": "exhausted"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
