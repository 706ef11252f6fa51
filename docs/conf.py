"""Sphinx configuration: the API reference from the docstrings (numpydoc), a user guide, and a
gallery of examples executed at every build (sphinx-gallery).  Built in CI with warnings as
errors: ``python -m sphinx -W -b html docs docs/_build/html``."""
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import fastomkl  # noqa: E402

project = "fastomkl"
copyright = "the fastomkl developers"
release = version = getattr(fastomkl, "__version__", "0.1.0")

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc",
              "sphinx_gallery.gen_gallery", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# The guide's pages are Markdown that also reads on a code host: links to the repository's files
# (benchmark results, data) are not documents, and headings are linked by their slugs.
myst_heading_anchors = 3
suppress_warnings = ["myst.xref_missing"]
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": True}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5",
                    "auto_examples/*.codeobj.json"]
html_theme = "alabaster"
html_static_path: list = []

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
}


# The docstrings write norms and absolute values as plain text (|y|, |S_t|, ||w||^2), which
# reStructuredText would read as substitution references: escape single bars outside literals.
import re  # noqa: E402

_BARS = re.compile(r"(?<![|\\`])\|(?=[^\s|`])([^|`\n]*?[^\s|`\\])\|(?![|`])")


def _escape_bars(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if "|" in line and not line.lstrip().startswith((">>>", "...", "..")):
            lines[i] = _BARS.sub(r"\\|\1\\|", line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_bars, priority=100)
