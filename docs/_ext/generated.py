"""Tables generated from the code at every build, so they cannot drift from it.

Written into ``docs/_generated/`` (not versioned) when the build starts and included by
the pages (``{include}``):

- ``metrics.md``: one row per run-level metric of
  :data:`dispatchlab.metrics.keys.METRICS` (key, unit, better, meaning);
- ``migration.md``: the old names of moved modules
  (:data:`dispatchlab.core.deprecation.MOVED_MODULES`), of moved module attributes
  (:func:`~dispatchlab.core.deprecation.moved_attributes`) and of moved methods and
  functions (:func:`~dispatchlab.core.deprecation.moved_callable`), with their new names;
  the shims that warn by hand (``Dispatcher._check``, the old ``core.params`` helpers)
  are found in the source by their warning text.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import warnings
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

OUT = Path(__file__).resolve().parents[1] / "_generated"
SRC = Path(__file__).resolve().parents[2] / "src" / "dispatchlab"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def metrics_table() -> str:
    """The METRICS list as a Markdown table."""
    from dispatchlab.metrics.keys import METRICS

    rows = ["| key | unit | better | meaning |", "|---|---|---|---|"]
    for m in METRICS:
        rows.append(f"| `{m.key}` | {_cell(m.unit)} | {_cell(m.better or '')} | "
                    f"{_cell(m.meaning)} |")
    return "\n".join(rows) + "\n"


def _all_modules() -> list[str]:
    from dispatchlab.core.deprecation import MOVED_MODULES

    root = importlib.import_module("dispatchlab")
    names = ["dispatchlab"] + [m.name for m in pkgutil.walk_packages(root.__path__,
                                                                     "dispatchlab.")]
    return [n for n in names if n not in MOVED_MODULES and not n.endswith("__main__")]


def moved_names() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(attributes, callables)``: (old, new) pairs of the module-attribute shims and of
    the moved functions and methods."""
    from dispatchlab.core.deprecation import moved_attributes, moved_callable

    attr_code = moved_attributes("x", {}).__code__
    call_code = moved_callable("x.y", "x:y").__code__
    attrs: set[tuple[str, str]] = set()
    calls: set[tuple[str, str]] = set()
    for name in _all_modules():
        module = importlib.import_module(name)
        getter = module.__dict__.get("__getattr__")
        if getattr(getter, "__code__", None) is attr_code:
            cells = dict(zip(getter.__code__.co_freevars,
                             (c.cell_contents for c in getter.__closure__), strict=True))
            for old, new in cells["moved"].items():
                attrs.add((f"{cells['module']}.{old}", new.replace(":", ".")))
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != name:
                continue
            for value in vars(cls).values():
                func = getattr(value, "__func__", value)
                if getattr(func, "__code__", None) is call_code:
                    cells = dict(zip(func.__code__.co_freevars,
                                     (c.cell_contents for c in func.__closure__),
                                     strict=True))
                    calls.add((cells["old"], cells["target"].replace(":", ".")))
    # shims that warn by hand: "OLD moved to NEW" in the warning text
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r'_warn\("(\w+)", "([\w.]+)"\)', text):
            if path.name == "params.py":
                calls.add((f"dispatchlab.core.params.{m[1]}", m[2]))
        for m in re.finditer(r'"(\w+\._check) moved to (\w+\.\w+);', text):
            calls.add((f"dispatchlab.dispatch.base.{m[1]}",
                       f"dispatchlab.dispatch.base.{m[2]}"))
    return sorted(attrs), sorted(calls)


def migration_table() -> str:
    """The migration page's tables."""
    from dispatchlab.core.deprecation import MOVED_MODULES, REMOVED_IN

    attrs, calls = moved_names()
    out = [f"Every old name below still works until dispatchlab {REMOVED_IN}, with a "
           "`MovedWarning` naming its replacement.", "",
           "## Modules", "", "| old module | new module |", "|---|---|"]
    out += [f"| `{old}` | `{new}` |" for old, new in sorted(MOVED_MODULES.items())]
    out += ["", "## Module attributes", "", "| old name | new name |", "|---|---|"]
    out += [f"| `{old}` | `{new}` |" for old, new in attrs]
    out += ["", "## Functions and methods", "", "| old name | new name |", "|---|---|"]
    out += [f"| `{old}` | `{new}` |" for old, new in calls]
    return "\n".join(out) + "\n"


def write_all(app: Sphinx | None = None) -> None:
    """Write every generated table (the build's ``builder-inited`` hook)."""
    OUT.mkdir(exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        files = {"metrics.md": metrics_table(), "migration.md": migration_table()}
    for name, text in files.items():
        path = OUT / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            # atomically: two builds at once (the test workers) never read half a file
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", write_all)
    return {"parallel_read_safe": True, "version": "1"}
