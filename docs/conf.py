"""Sphinx configuration of dispatchlab's documentation (``make docs``).

The build needs no network: no intersphinx inventories, no external link checks, no
remote assets (the theme ships its own). Pages are MyST Markdown; the Python API pages
are generated from each package's ``__all__`` (``_ext/apipages.py``), the command line
from the click commands (sphinx-click), the metric table from
:data:`dispatchlab.metrics.keys.METRICS`, the migration table from
:mod:`dispatchlab.core.deprecation`, and the tutorials' figures by running their plotting
code (``_ext/figures.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
# the package from this checkout, whether or not it is installed
sys.path.insert(0, str(DOCS.parent / "src"))

import dispatchlab  # noqa: E402

project = "dispatchlab"
author = "the dispatchlab authors"
copyright = "the dispatchlab authors, MIT licence"
release = dispatchlab.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx_click",
    "cliref",
    "apipages",
    "generated",
    "figures",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_generated/*.md", "README.md", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []

# MyST: heading anchors for [text](page.md#anchor) links, as GitHub makes them
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "deflist"]

# warnings are errors (make docs runs sphinx -W --keep-going); every reference to a
# dispatchlab object must resolve; references to other packages' objects are not
# checked (no intersphinx: the build is offline)
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"(?!dispatchlab\b).*")]
suppress_warnings = ["myst.header"]

autodoc_default_options = {"members": False}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"
add_module_names = False

# "--slices" stays two hyphens (no typographic dashes or quotes in commands and help)
smartquotes = False

html_theme = "furo"
html_title = f"dispatchlab {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
html_theme_options = {"navigation_with_keys": True}
