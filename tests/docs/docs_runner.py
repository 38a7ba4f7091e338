"""Run one page's code blocks in order, in the current folder (a test's scratch folder).

    python docs_runner.py BLOCKS.json

``BLOCKS.json`` lists ``{"lang": "sh" | "python", "line": N, "code": "...", "expect":
[...]}``. Shell blocks run with ``bash -e -o pipefail``; Python blocks share one
namespace, as a reader pasting them into one session would. A block's output (stdout and
stderr) is echoed and must contain each text of ``expect`` (the numbers the page quotes).
The first failure prints the block's line and ends with status 1.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import traceback


def _run(item: dict, namespace: dict[str, object]) -> tuple[bool, str]:
    if item["lang"] == "sh":
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", item["code"]],
                              capture_output=True, text=True)
        return proc.returncode == 0, proc.stdout + proc.stderr
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile(item["code"], f"<block at line {item['line']}>", "exec"), namespace)
    except Exception:
        return False, out.getvalue() + traceback.format_exc()
    return True, out.getvalue()


def main(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        items = json.load(f)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for item in items:
        print(f"--- block at line {item['line']} ({item['lang']})", flush=True)
        ok, output = _run(item, namespace)
        print(output, flush=True)
        if not ok:
            print(f"FAILED: the block at line {item['line']} failed", flush=True)
            return 1
        missing = [t for t in item.get("expect", []) if t not in output]
        if missing:
            print(f"FAILED: the output of the block at line {item['line']} lacks "
                  f"{missing} (the page quotes them)", flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
