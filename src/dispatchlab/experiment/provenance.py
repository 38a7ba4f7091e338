"""Provenance: what a run's results depend on, as hashes that change when it changes.

A campaign run's key (:mod:`dispatchlab.experiment.campaign.config`) covers its configuration,
the SHA-256 of every input file it reads and the **code hash** computed here, so a
stored result can never silently belong to other code or other data.

**Project code hash** (:func:`project_code_hash`): every module of the installed
``dispatchlab`` package except those in :data:`EXCLUDED_MODULES`, each hashed on its
*parsed* source (:func:`source_hash`: ``ast.parse``, docstrings removed, ``ast.dump``),
so comments, docstrings and formatting do not count while any change to what the code
does (a statement, a constant, a default, an error text) does. The rule: every module
that can affect a stored result counts (the readers, the engine, the dispatchers, the
run layer, the campaign worker and the rest of the experiment layer); only the modules
that present results are left out: the command line (``dispatchlab.cli*``,
``__main__``) and the report with its figures (``dispatchlab.report*``). The hash is
computed once per process (about 0.15 s).

**Native core** (:func:`native_code_hash`): the compiled core (``dispatchlab._core``,
built from the Rust workspace ``rust/`` beside ``src/``) runs the native engine. When
the workspace is there (a source checkout), every ``*.rs`` file, every
``Cargo.toml`` and ``Cargo.lock`` under it (``target/``, the build output, left out)
count, on their bytes (comments included: Rust sources are not parsed), with the built
extension's version; without it (an installed wheel) the bytes of the built extension
count instead. So a change to the core re-executes runs as a change of a Python module
does.

**Dependencies** (:func:`dependency_versions`): the installed versions of the
packages in :data:`DEPENDENCIES` (``"absent"`` when not installed).

**Own classes** (:func:`component_code_hash`): for a dispatcher or predictor named
``module:Class`` or ``path/file.py:Class``, the hash of its module's parsed source and
of every module it imports (at any depth, also inside functions) that lives outside
the standard library, outside site-packages and outside ``dispatchlab``: the user's
own modules. Imports are found with ``ast`` and resolved without importing anything;
at most :data:`MAX_OWN_MODULES` files are followed. Registered built-ins have no
component hash (``None``): the project hash covers them.

**Declared input files** (:func:`declared_input_files`): a component class, built-in
or your own, lists the files it reads (a lookup table, a trained model) in an
attribute ``input_files``: a tuple of paths, or a method taking no argument that
returns one (so it may depend on the instance's parameters, as the ``l2r`` ordering's
``model``). Relative paths are relative to the folder of the class's own module. The
files of its sub-components (a component given as a parameter of another) count too,
and so do the source files of a sub-component that is a class of your own
(:func:`nested_own_class_files`). Their SHA-256s join the run's ``inputs``, so editing
such a file re-executes the runs that read it.

:func:`run_code_hash` combines the project hash, the native core's hash, the
dependency versions and the two components' hashes; it is what the campaign store's
``runs.code_hash`` holds.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import json
import os
import sys
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import dispatchlab
from dispatchlab.core.components import registry_of
from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Params
from dispatchlab.core.registry import is_own_class_name
from dispatchlab.core.suggest import missing_file_hint

#: Modules of ``dispatchlab`` left out of :func:`project_code_hash` (``fnmatch``
#: patterns on dotted module names; a package's ``__init__`` is the package's name).
EXCLUDED_MODULES: tuple[str, ...] = (
    "dispatchlab.cli", "dispatchlab.cli.*", "dispatchlab.__main__",
    "dispatchlab.report", "dispatchlab.report.*",
)

#: Third-party packages whose versions join the run code hash (distribution names).
DEPENDENCIES: tuple[str, ...] = ("numpy", "ortools", "lightgbm", "scikit-learn")

#: Most files followed from one own class's module through its imports.
MAX_OWN_MODULES = 100


def sha256_hex(text: str | bytes) -> str:
    """SHA-256 of a text (UTF-8) or bytes, as 64 hex digits."""
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def package_version() -> str:
    """The installed dispatchlab version (what a campaign's runs record in ``version``
    and its database in ``dispatchlab_version``)."""
    from importlib.metadata import version

    return version("dispatchlab")


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


# ------------------------------------------------------------------ parsed source


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    """Remove the docstring of the module and of every class and function (in place);
    a body left empty becomes ``pass``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                      | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _parse(source: str | bytes, filename: str) -> ast.Module:
    """The parse tree; a syntax error is an :class:`InputError` naming the file."""
    try:
        return ast.parse(source, filename=filename)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        raise InputError(f"cannot parse Python source: {exc}", file=filename,
                         line=line) from None


def source_hash(source: str | bytes, filename: str = "<source>") -> str:
    """Hash of what a Python source *does*: SHA-256 of ``ast.dump`` of its parse tree
    with docstrings removed. Comments, docstrings, blank lines and formatting do not
    change it; any other edit does. A syntax error raises :class:`InputError`."""
    tree = _strip_docstrings(_parse(source, filename))
    return sha256_hex(ast.dump(tree))


def _file_source_hash(path: Path) -> str:
    """:func:`source_hash` of a file (an unreadable file is an :class:`InputError`)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    return source_hash(data, str(path))


# ------------------------------------------------------------------- the project


def _is_excluded(module: str) -> bool:
    """True when a dotted module name matches a pattern of :data:`EXCLUDED_MODULES`."""
    from fnmatch import fnmatchcase

    return any(fnmatchcase(module, pattern) for pattern in EXCLUDED_MODULES)


def package_modules(root: Path, package: str = "dispatchlab") -> list[tuple[str, Path]]:
    """``(module name, file)`` of every ``.py`` file of a package folder ``root``
    (named ``package``) that :data:`EXCLUDED_MODULES` does not exclude, sorted."""
    out = []
    for path in Path(root).rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join((package, *parts))
        if not _is_excluded(name):
            out.append((name, path))
    return sorted(out)


def package_code_hash(root: Path, package: str = "dispatchlab") -> str:
    """Hash of the modules :func:`package_modules` lists: each module's name and
    :func:`source_hash`. :func:`project_code_hash` is this for the installed package
    (a copy of the package folder hashes the same)."""
    h = hashlib.sha256()
    for name, path in package_modules(root, package):
        h.update(f"{name}\0{_file_source_hash(path)}\n".encode())
    return h.hexdigest()


def _installed_root() -> Path:
    """The folder of the imported ``dispatchlab`` package."""

    return Path(dispatchlab.__file__).resolve().parent


def project_modules() -> list[tuple[str, Path]]:
    """``(module name, file)`` of every module the project code hash covers (the
    installed package's ``.py`` files minus :data:`EXCLUDED_MODULES`), sorted."""
    return package_modules(_installed_root())


@functools.cache
def project_code_hash() -> str:
    """Hash of the result-affecting modules of the installed ``dispatchlab`` (see the
    module docstring); computed once per process."""
    return package_code_hash(_installed_root())


#: Files of the Rust workspace that count in :func:`native_code_hash` (``fnmatch``
#: patterns on file names), and the folder left out (the build output).
RUST_FILES: tuple[str, ...] = ("*.rs", "Cargo.toml", "Cargo.lock")
RUST_BUILD_FOLDER = "target"


def rust_sources(root: Path) -> list[Path]:
    """The files of the Rust workspace ``root`` that count (:data:`RUST_FILES`, outside
    ``root/target``), sorted by path."""
    from fnmatch import fnmatchcase

    out = []
    for path in Path(root).rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] == RUST_BUILD_FOLDER or not path.is_file():
            continue
        if any(fnmatchcase(path.name, pattern) for pattern in RUST_FILES):
            out.append(path)
    return sorted(out)


def rust_sources_hash(root: Path) -> str:
    """Hash of :func:`rust_sources` of ``root``: each file's path (relative to
    ``root``) and the SHA-256 of its bytes."""
    h = hashlib.sha256()
    for path in rust_sources(root):
        h.update(f"{path.relative_to(root).as_posix()}\0{file_sha256(path)}\n".encode())
    return h.hexdigest()


def rust_workspace() -> Path | None:
    """The Rust workspace of the installed package (``rust/`` beside ``src/``, holding
    a ``Cargo.toml``), None when there is none (an installed wheel)."""
    root = _installed_root().parents[1] / "rust"
    return root if (root / "Cargo.toml").is_file() else None


@functools.cache
def native_code_hash() -> str:
    """Hash of the native core (see the module docstring): its Rust sources and the
    built extension's version, or the built extension's bytes without the sources
    (``"absent"`` inside when the extension is not built); computed once per
    process."""
    core = sys.modules.get("dispatchlab._core")
    if core is None:
        try:  # the compiled extension, loaded by name (a missing build is "absent")
            core = importlib.import_module("dispatchlab._core")
        except ImportError:
            core = None
    version = "absent" if core is None else str(getattr(core, "__version__", "unknown"))
    root = rust_workspace()
    if root is not None:
        parts = {"sources": rust_sources_hash(root), "extension": version}
    else:
        binary = None if core is None else getattr(core, "__file__", None)
        parts = {"extension": version,
                 "binary": "absent" if binary is None else file_sha256(binary)}
    return sha256_hex(json.dumps(parts, sort_keys=True, separators=(",", ":")))


@functools.cache
def dependency_versions() -> dict[str, str]:
    """Installed version of each package of :data:`DEPENDENCIES` (``"absent"`` when
    it is not installed); computed once per process."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in DEPENDENCIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


# ------------------------------------------------------------------- own classes


def is_file_module(module: str) -> bool:
    """True when the module part of ``module:Class`` is a file path (``.py``, or it
    contains a path separator), as
    :meth:`dispatchlab.core.registry.Registry.resolve` decides."""
    return module.endswith(".py") or "/" in module or "\\" in module


@functools.cache
def _external_roots() -> tuple[Path, ...]:
    """Folders whose modules are not the user's own: the standard library,
    site-packages (system, virtual environment, user) and the dispatchlab package."""
    import site
    import sysconfig


    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                 "platlib")}
    paths.update(getattr(site, "getsitepackages", list)())
    paths.add(getattr(site, "getusersitepackages", lambda: "")() or "")
    paths.add(str(Path(dispatchlab.__file__).parent))
    return tuple(Path(p).resolve() for p in paths if p)


def _is_own(path: Path) -> bool:
    """True for a module file outside :func:`_external_roots`: the user's own."""
    return not any(path.is_relative_to(root) for root in _external_roots())


def _search_path() -> list[str]:
    """Where ``module:Class`` names are looked up: ``sys.path`` and the current
    directory (as :meth:`dispatchlab.core.registry.Registry.resolve` makes it importable)."""
    cwd = os.getcwd()
    return [*sys.path, cwd] if cwd not in sys.path and "" not in sys.path else list(sys.path)


def find_module_file(name: str, search: list[str]) -> Path | None:
    """The ``.py`` file of module ``name`` on ``search`` without importing anything
    (None for built-in, compiled or namespace modules and for names not found)."""
    from importlib.machinery import PathFinder

    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    try:
        spec = PathFinder.find_spec(parts[0], search)
        for i in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                return None
            spec = PathFinder.find_spec(".".join(parts[:i + 1]),
                                        list(spec.submodule_search_locations))
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin).resolve()


def _relative_base(package: str | None, folder: Path, level: int) -> tuple[str | None, Path]:
    """The package name (if known) and folder that ``from .{level}`` refers to."""
    for _ in range(level - 1):
        folder = folder.parent
        package = package.rpartition(".")[0] if package else package
    return package, folder


def _with_parents(names: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """The names with the packages above each one (importing ``a.b.c`` runs ``a`` and
    ``a.b`` too), empty names left out, each once."""
    out: dict[str, list[str]] = {}
    for name, where in names:
        parts = name.split(".") if name else []
        for i in range(1, len(parts) + 1):
            out.setdefault(".".join(parts[:i]), where)
    return list(out.items())


def _imports(tree: ast.AST, package: str | None, folder: Path,
             search: list[str]) -> Iterable[tuple[Path, str | None]]:
    """Files of the modules a module imports (``import a.b``, ``from a import b``,
    relative imports), with their package names; unresolvable names are skipped."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [(alias.name, search) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                pkg, base = _relative_base(package, folder, node.level)
                module = node.module or ""
                if pkg:
                    full = f"{pkg}.{module}" if module else pkg
                    names = [(full, search)] + [(f"{full}.{a.name}", search)
                                                for a in node.names]
                else:  # a file-path module: relative to its folder
                    names = [(module, [str(base)])] if module else []
                    prefix = f"{module}." if module else ""
                    names += [(prefix + a.name, [str(base)]) for a in node.names]
            else:
                module = node.module or ""
                names = [(module, search)] + [(f"{module}.{a.name}", search)
                                              for a in node.names]
        else:
            continue
        for name, where in _with_parents(names):
            path = find_module_file(name, where)
            if path is not None:
                is_pkg = path.name == "__init__.py"
                yield path, name if is_pkg else name.rpartition(".")[0] or None


def _root_module(name: str) -> tuple[Path, str | None, list[str]]:
    """The file, package and search path of an own class's module."""
    module, _, _attr = name.rpartition(":")
    if is_file_module(module):
        path = Path(module).expanduser().resolve()
        if not path.is_file():

            raise InputError(f"no such Python file {module!r} for {name!r}"
                             + missing_file_hint(module), field="code")
        return path, None, [str(path.parent), *_search_path()]
    search = _search_path()
    path = find_module_file(module, search)
    if path is None:
        raise InputError(f"cannot find module {module!r} of {name!r} (is it in the "
                         "current directory or on PYTHONPATH?)", field="code")
    package = module if path.name == "__init__.py" else module.rpartition(".")[0] or None
    return path, package, search


def own_module_files(name: str) -> list[Path]:
    """The files :func:`component_code_hash` hashes for ``module:Class`` or
    ``path/file.py:Class``: its module first, then the user's own modules it imports
    (breadth first, at most :data:`MAX_OWN_MODULES`). :class:`InputError` when the
    module cannot be found or parsed."""
    root, package, search = _root_module(name)
    seen = {root}
    order = [root]
    todo = deque([(root, package)])
    while todo and len(order) < MAX_OWN_MODULES:
        path, pkg = todo.popleft()
        tree = _parse(path.read_bytes(), str(path))
        for dep, dep_pkg in _imports(tree, pkg, path.parent, search):
            if dep in seen or not _is_own(dep):
                continue
            seen.add(dep)
            order.append(dep)
            todo.append((dep, dep_pkg))
            if len(order) >= MAX_OWN_MODULES:
                break
    return order


def component_code_hash(name: str) -> str | None:
    """Code hash of a dispatcher or predictor class of your own (``module:Class`` or
    ``path/file.py:Class``): its module and the own modules it imports, each by
    :func:`source_hash`, independent of where the files are. ``None`` for a
    registered built-in name (covered by :func:`project_code_hash`). Raises
    :class:`InputError` when the module cannot be found or parsed (computed afresh on
    every call: edits are seen at once)."""

    if not is_own_class_name(name):
        return None
    hashes = sorted(_file_source_hash(p) for p in own_module_files(name))
    return sha256_hex("\n".join(hashes))


def code_hash_from(dispatcher_hash: str | None, predictor_hash: str | None,
                   power_predictor_hash: str | None = None) -> str:
    """:func:`run_code_hash` from the components' :func:`component_code_hash` values
    (for callers that computed them already). A power predictor's hash enters only
    when it is an own class, so runs without one keep their hashes."""
    parts = {"project": project_code_hash(), "native": native_code_hash(),
             "dependencies": dependency_versions(),
             "dispatcher": dispatcher_hash, "predictor": predictor_hash}
    if power_predictor_hash is not None:
        parts["power_predictor"] = power_predictor_hash
    return sha256_hex(json.dumps(parts, sort_keys=True, separators=(",", ":")))


def run_code_hash(dispatcher_name: str, predictor_name: str,
                  power_predictor_name: str | None = None) -> str:
    """The code a run executes: the project code hash, the native core's hash
    (:func:`native_code_hash`), the dependency versions and the component hashes of
    its dispatcher, predictor and power predictor (own classes only). This is the
    campaign store's ``runs.code_hash``. Raises :class:`InputError` when an own class's
    module cannot be found or parsed."""
    return code_hash_from(component_code_hash(dispatcher_name),
                          component_code_hash(predictor_name),
                          None if power_predictor_name is None
                          else component_code_hash(power_predictor_name))


# ---------------------------------------------------------------- declared files


def _class_folder(component: Any) -> Path:
    """The folder of the module that defines the component's class."""
    cls = component if isinstance(component, type) else type(component)
    module = sys.modules.get(cls.__module__)
    file = getattr(module, "__file__", None)
    return Path(file).resolve().parent if file else Path.cwd()


def _own_input_files(component: Any) -> list[Path]:
    """The files ``component`` itself declares in ``input_files`` (see
    :func:`declared_input_files`), resolved and checked to exist."""
    value = getattr(component, "input_files", ())
    cls_name = (component if isinstance(component, type) else type(component)).__name__
    if callable(value):
        value = value()
    if isinstance(value, str | Path) or not isinstance(value, tuple | list):
        raise InputError(f"{cls_name}.input_files must be a tuple of paths, got "
                         f"{value!r}", field="input_files")
    folder = _class_folder(component)
    out = []
    for item in value:
        if not isinstance(item, str | Path):
            raise InputError(f"{cls_name}.input_files holds {item!r}, not a path",
                             field="input_files")
        path = Path(item).expanduser()
        path = (path if path.is_absolute() else folder / path).resolve()
        if not path.is_file():

            raise InputError(f"{cls_name} declares input file {str(path)!r}, which does "
                             f"not exist{missing_file_hint(path)}", field="input_files")
        out.append(path)
    return out


def _sub_components(component: Any) -> list[Any]:
    """The sub-components held by ``component``'s parameters: every parameter value
    that is a component instance, and every text value of a parameter listed in its
    ``nested`` map (built by its registry, :meth:`~dispatchlab.core.registry.Registry.build`, from
    the component grammar, so ``priority="l2r:model=m.json"`` is an ``l2r`` ordering). A
    text that names no component (EASY's ``order="priority"``) holds none."""

    get_params = getattr(component, "get_params", None)
    if isinstance(component, type) or not callable(get_params):
        return []
    nested = getattr(component, "nested", {}) or {}
    out = []
    for key, value in get_params().items():
        if isinstance(value, Params):
            out.append(value)
        elif isinstance(value, str) and key in nested:
            try:
                out.append(registry_of(nested[key]).build(value))
            except (InputError, TypeError, ValueError):
                continue  # not a component name: the component reads no file through it
    return out


def _nested_components(component: Any) -> list[Any]:
    """``component``'s sub-components at any depth, breadth first (see
    :func:`_sub_components`), itself not included."""
    out: list[Any] = []
    todo = _sub_components(component)
    while todo:
        comp = todo.pop(0)
        out.append(comp)
        if len(out) > 1000:
            raise InputError(f"{type(component).__name__}'s sub-components nest deeper "
                             "than 1000 components", field="input_files")
        todo.extend(_sub_components(comp))
    return out


def declared_input_files(component: Any) -> list[Path]:
    """Every file a component declares it reads, its sub-components' included.

    A component (dispatcher, predictor, power predictor, duration model, ordering,
    allocator, or a class of your own) declares the files it reads in an attribute
    ``input_files``: a tuple of paths, or a method without arguments returning one (so
    it may depend on the instance's parameters: the ``l2r`` ordering returns its
    ``model`` file). Relative paths are resolved against the folder of the class's
    module (a method that reads a path parameter relative to the current directory
    returns it absolute). The files of its sub-components (see
    :func:`_sub_components`: ``easy:priority=l2r:priority__model=m.json``, a dispatcher
    of ``dec-rapl``, the base of ``inflated``) follow, at any depth; each path once, in
    order. ``[]`` when none declares a file. A bad declaration or a missing file raises
    :class:`InputError`."""
    out: list[Path] = []
    for comp in [component, *_nested_components(component)]:
        out.extend(p for p in _own_input_files(comp) if p not in out)
    return out


def nested_own_class_files(component: Any) -> list[Path]:
    """The source files of the classes of your own (any class outside ``dispatchlab``)
    among ``component``'s sub-components, at any depth (``priority =
    "my_order.py:Shortest"``): each class's module and the own modules it imports
    (:func:`own_module_files`), each path once. The component's own class is not
    included: its code is in the run's code hash (:func:`component_code_hash`). A
    campaign adds their SHA-256s to the run's inputs, so editing such a class
    re-executes the runs that use it."""
    out: list[Path] = []
    for comp in _nested_components(component):
        cls = type(comp)
        if cls.__module__ == "dispatchlab" or cls.__module__.startswith("dispatchlab."):
            continue
        file = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if file is None:
            continue  # defined interactively: no source file to follow
        # a module imported from a path/file.py name is followed from its file, one
        # imported by name by its name (so its package's relative imports resolve)
        module = (str(Path(file).resolve()) if cls.__module__.startswith("_dispatchlab_user_")
                  else cls.__module__)
        out.extend(p for p in own_module_files(f"{module}:{cls.__name__}") if p not in out)
    return out


__all__ = [
    "DEPENDENCIES",
    "EXCLUDED_MODULES",
    "MAX_OWN_MODULES",
    "code_hash_from",
    "component_code_hash",
    "declared_input_files",
    "dependency_versions",
    "file_sha256",
    "nested_own_class_files",
    "own_module_files",
    "package_code_hash",
    "package_modules",
    "project_code_hash",
    "project_modules",
    "run_code_hash",
    "source_hash",
]
