"""The Python API pages, generated from each package's ``__all__``.

A page holds ``.. dl-api:: PACKAGE`` (in an ``{eval-rst}`` block of a MyST page, so
that what it generates is read as reStructuredText, as docstrings are); it expands to
the package's docstring, a summary table of the package's public names (its
``__all__``), the description of every public object owned by the package, and the
docstring of each of its modules; a public name without a docstring (or ``#:``
comment) is a warning, so ``make docs`` (``-W``) fails. An object is described once, on
the page of the deepest package that contains the module defining it (``EASY``, exported
by ``dispatchlab.dispatch``, is described there as
``dispatchlab.dispatch.backfill.EASY``, the name its docstrings and the rest of the
package use); other packages that re-export it list it in their table, linked to that
description. The modules of :data:`~dispatchlab.core.deprecation.
MOVED_MODULES` (old names kept as shims) are not documented.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import warnings
from pathlib import Path
from typing import Any

import click
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

ROOT = "dispatchlab"

#: Modules whose docstrings hold plain-text tables or headings that are not valid
#: reStructuredText (a simple table's text running into a column margin, a short title
#: underline): shown as preformatted text, as ``help()`` shows them, until they are
#: rewritten; their module is still a reference target.
PREFORMATTED: set[str] = set()


def packages() -> list[str]:
    """Every package of dispatchlab (the root first), old module names left out."""
    from dispatchlab.core.deprecation import MOVED_MODULES

    root = importlib.import_module(ROOT)
    names = [ROOT] + [m.name for m in pkgutil.walk_packages(root.__path__, ROOT + ".")
                      if m.ispkg]
    return [n for n in names if n not in MOVED_MODULES]


def modules_of(package: str) -> list[str]:
    """The modules directly inside ``package`` (not sub-packages), old names left out."""
    from dispatchlab.core.deprecation import MOVED_MODULES

    pkg = importlib.import_module(package)
    return [f"{package}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)
            if not m.ispkg and f"{package}.{m.name}" not in MOVED_MODULES
            and m.name != "__main__"]


def public_names(package: str) -> list[str]:
    """The package's ``__all__`` (empty when it declares none)."""
    return list(getattr(importlib.import_module(package), "__all__", []))


#: a top-level binding: ``NAME = ...``, ``NAME: type = ...``, or a decorated ``def`` /
#: ``class`` (a click command is an object made by its decorator)
_DEFINED = re.compile(r"^(?:(?P<name>[A-Za-z_]\w*)\s*(?::[^=\n]*)?=|(?:def|class)\s+"
                      r"(?P<fname>[A-Za-z_]\w*))", re.M)


def canonical(package: str, name: str) -> tuple[str, str, str]:
    """``(module, name, kind)`` of the public ``name`` of ``package``: the module that
    defines it (searched under the package first), the name it is defined with there
    (``clean_table`` is ``dispatchlab.workload.clean.clean``) and the autodoc directive
    (``class``, ``function``, ``data``)."""
    obj = getattr(importlib.import_module(package), name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        kind = "class" if inspect.isclass(obj) else "function"
        return obj.__module__, obj.__name__, kind
    # data: the module under the package whose source binds the name at top level
    candidates = [package, *modules_of(package)]
    for sub in _subpackages(package):
        candidates += [sub, *modules_of(sub)]
    # a name re-exported from another package (a lower layer) comes last
    candidates += [m for p in packages() for m in (p, *modules_of(p)) if m not in candidates]
    for mod in candidates:
        module = importlib.import_module(mod)
        if not (module.__file__ or "").endswith(".py"):  # the compiled core: no source
            continue
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        if (any(name in (m["name"], m["fname"]) for m in _DEFINED.finditer(source))
                and getattr(module, name, None) is obj):
            return mod, name, "data"
    raise LookupError(f"{package}.{name}: no module of dispatchlab defines it")


def _subpackages(package: str) -> list[str]:
    return [p for p in packages() if p.startswith(package + ".")]


def owner(module: str) -> str:
    """The deepest package containing ``module``."""
    return max((p for p in packages() if module == p or module.startswith(p + ".")),
               key=len)


def _first_line(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ")


class APIDirective(SphinxDirective):
    """``.. dl-api:: PACKAGE``: the API page of one package."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        package = self.arguments[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # old names resolve with a warning
            lines = self._lines(package)
        content = StringList(lines, source=f"<dl-api {package}>")
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(content, self.content_offset, node, match_titles=True)
        return node.children

    def _lines(self, package: str) -> list[str]:
        out = [f".. automodule:: {package}", "   :no-members:", ""]
        names = public_names(package)
        if names:
            out += [".. rubric:: Public names", "", ".. list-table::", "   :widths: 30 70",
                    ""]
            objs = []
            seen: set[str] = set()
            for name in names:
                if name.startswith("__"):
                    continue
                module, real, kind = canonical(package, name)
                target = f"{module}.{real}"
                if target in seen:  # an alias of a name listed already
                    continue
                seen.add(target)
                role = {"class": "class", "function": "func", "data": "data"}[kind]
                obj = getattr(importlib.import_module(package), name)
                summary = _summary(obj, kind, module, real)
                if not summary:  # a public name must say what it is (-W: the build fails)
                    logger.warning(f"public name {package}.{name} has no docstring",
                                   location=self.get_location())
                shown = f":{role}:`~{target}`"
                if real != name:  # exported under another name than its own
                    shown = f"``{name}`` (:{role}:`{real} <{target}>`)"
                out += [f"   * - {shown}", f"     - {_escape(summary)}"]
                if owner(module) == package:
                    objs.append((target, kind))
            out.append("")
            for target, kind in objs:
                out += [f".. auto{kind}:: {target}"]
                if kind == "class":
                    out += ["   :members:", "   :show-inheritance:"]
                out.append("")
        mods = modules_of(package)
        if mods:
            out += [".. rubric:: Modules", ""]
            for mod in mods:
                if mod in PREFORMATTED:
                    doc = inspect.getdoc(importlib.import_module(mod)) or ""
                    out += [f".. py:module:: {mod}", "", f"**{mod}**", "", "::", ""]
                    out += ["   " + line for line in doc.splitlines()] + [""]
                else:
                    out += [f".. automodule:: {mod}", "   :no-members:", ""]
        return out


def _summary(obj: Any, kind: str, module: str, name: str) -> str:
    """The first paragraph of what documents ``obj``: its docstring, a click command's
    help, or a value's ``#:`` comment."""
    if isinstance(obj, click.Command):
        return (obj.help or "").split("\n\n", 1)[0].replace("\n", " ").strip()
    if kind != "data" or callable(obj):  # a function, a class, a bound method
        return _first_line(obj)
    return _value_doc(module, name)


def _value_doc(module: str, name: str) -> str:
    """The first sentence of the ``#:`` comment (or docstring) of a module-level value."""
    from sphinx.pycode import ModuleAnalyzer

    lines = ModuleAnalyzer.for_module(module).find_attr_docs().get(("", name), [])
    return " ".join(line.strip() for line in lines).split(". ")[0].strip()


def _escape(text: str) -> str:
    """A docstring's first paragraph as one line of a list-table cell."""
    text = text.strip()
    if text.endswith("::"):  # a literal block follows in the docstring, not in the cell
        text = text[:-1]
    return text or "(no summary)"


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("dl-api", APIDirective)
    app.connect("missing-reference", resolve_internal)
    return {"parallel_read_safe": True, "version": "1"}


def _existing(target: str) -> str | None:
    """The module of ``target`` (``dispatchlab.a.b.name[.attr]``) when the object exists
    in the code, else None."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        modname = ".".join(parts[:cut])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj: Any = importlib.import_module(modname)
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return modname
    return None


def resolve_internal(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """A reference to a dispatchlab object that the API pages do not describe (not in a
    package's ``__all__``, or an attribute not shown) links to its module's docstring,
    provided the object exists in the code; a reference to a name that does not exist
    (a typo, a stale name) stays unresolved and fails the build."""
    if node.get("refdomain") != "py":
        return None
    # a target broken over two docstring lines reads "dispatchlab.a. name"
    target = "".join(node["reftarget"].split()).lstrip("~.")
    candidates = [target]
    if not target.startswith(ROOT + "."):
        module, cls = node.get("py:module"), node.get("py:class")
        if module:
            if cls:
                candidates.append(f"{module}.{cls}.{target}")
            candidates.append(f"{module}.{target}")
    for name in candidates:
        if not name.startswith(ROOT):
            continue
        modname = _existing(name)
        if modname is None:
            continue
        domain = env.get_domain("py")
        ref = domain.resolve_xref(env, node["refdoc"], app.builder, "mod", modname, node,
                                  contnode)
        if ref is not None:
            return ref
    return None
