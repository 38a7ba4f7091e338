"""Run one page's code blocks in order, in the current folder (a test's scratch folder).

    python docs_runner.py BLOCKS.json

``BLOCKS.json`` lists ``{"lang": "sh" | "python", "line": N, "code": "..."}``. Shell
blocks run with ``bash -e -o pipefail``; Python blocks share one namespace, as a reader
pasting them into one session would. The first failure prints the block's line and
ends with status 1.
"""

from __future__ import annotations

import json
import subprocess
import sys
import traceback


def main(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        items = json.load(f)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for item in items:
        print(f"--- block at line {item['line']} ({item['lang']})", flush=True)
        if item["lang"] == "sh":
            proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", item["code"]])
            if proc.returncode != 0:
                print(f"FAILED: the block at line {item['line']} exited with "
                      f"{proc.returncode}", flush=True)
                return 1
        else:
            try:
                exec(compile(item["code"], f"<block at line {item['line']}>", "exec"),
                     namespace)
            except Exception:
                traceback.print_exc()
                print(f"FAILED: the block at line {item['line']} raised", flush=True)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
