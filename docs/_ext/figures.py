"""Figures drawn by the build from the code shown beside them.

``{dl-plot} NAME`` (a MyST directive) holds Python code that leaves a matplotlib
``Figure`` in the variable ``fig``. The build shows the code as a code block, runs it
in a fresh namespace inside a temporary folder, saves ``fig`` as
``docs/_generated/figures/NAME.png`` and shows the image under the code: a tutorial's
figure is always the output of the code printed above it. The code must need no data
files (the documentation builds where no traces are present), so the tutorials draw
their figures from the package's seeded synthetic workloads. A failure in the code
fails the build (an error naming the page and the figure).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

OUT = Path(__file__).resolve().parents[1] / "_generated" / "figures"


def run_plot_code(code: str, name: str, out: Path = OUT) -> Path:
    """Run ``code`` and save the ``fig`` it defines as ``out/NAME.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    namespace: dict[str, Any] = {"__name__": f"dl_plot_{name}"}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            exec(compile(code, f"<dl-plot {name}>", "exec"), namespace)
        finally:
            os.chdir(cwd)
    fig = namespace.get("fig")
    if fig is None or not hasattr(fig, "savefig"):
        raise ExtensionError(f"dl-plot {name}: the code leaves no Figure in 'fig'")
    path = out / f"{name}.png"
    # atomically: two builds at once (the test workers) never copy half an image
    tmp = out / f".{name}.{os.getpid()}.png"
    fig.savefig(tmp, dpi=100, bbox_inches="tight")
    plt.close("all")
    os.replace(tmp, path)
    return path


class PlotDirective(SphinxDirective):
    """``{dl-plot} NAME``: the code, then the figure it draws."""

    required_arguments = 1
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {"alt": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        code = "\n".join(self.content)
        try:
            run_plot_code(code, name)
        except ExtensionError:
            raise
        except Exception as exc:  # the page's code failed: the build must say where
            raise self.error(f"dl-plot {name}: {type(exc).__name__}: {exc}") from exc
        block = nodes.literal_block(code, code, language="python")
        image = nodes.image(uri=f"/_generated/figures/{name}.png",
                            alt=self.options.get("alt", name))
        return [block, image]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("dl-plot", PlotDirective)
    return {"parallel_read_safe": True, "version": "1"}
