"""Sphinx configuration of the margin_opt documentation.

Build:  python -m pip install -e ".[docs]" && python -m sphinx -W -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import margin_opt  # noqa: E402

project = "margin_opt"
author = "the margin_opt contributors"
copyright = "the margin_opt contributors"
release = version = margin_opt.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# adaboost.md is included into boosting.rst (``.. include::`` with the MyST parser);
# every other page is in the toctree of index.rst.
exclude_patterns = ["_build", "adaboost.md"]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"  # numpydoc sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# Offline: MathJax 3 (tex-svg-full, Apache-2.0, from the npm package mathjax 3.2.2) is
# served from the site itself, so the math renders with no network; the component holds
# every TeX extension and draws SVG, so it loads no fonts or extensions from elsewhere.
mathjax_path = "mathjax/tex-svg-full.js"

# Intersphinx only from inventories at hand, never fetched: a build must not need the
# network.  Debian's documentation packages install some (python3.11-doc,
# python-scipy-doc, python-sklearn-doc); a project's own copy can be put in
# docs/_inventories/NAME.inv.  Where none is found the links are plain text.
_INVENTORIES = {
    "python": ("https://docs.python.org/3/", ["/usr/share/doc/python3.11/html/objects.inv"]),
    "numpy": ("https://numpy.org/doc/stable/", ["/usr/share/doc/python-numpy/html/objects.inv"]),
    "scipy": ("https://docs.scipy.org/doc/scipy/",
              ["/usr/share/doc/python-scipy-doc/html/objects.inv"]),
    "sklearn": ("https://scikit-learn.org/stable/",
                ["/usr/share/doc/python-sklearn-doc/html/objects.inv"]),
    "cvxpy": ("https://www.cvxpy.org/", []),
}


def _local_inventory(name, candidates):
    own = os.path.join(os.path.dirname(__file__), "_inventories", f"{name}.inv")
    return next((p for p in [own, *candidates] if os.path.isfile(p)), None)


intersphinx_mapping = {name: (url, inv) for name, (url, paths) in _INVENTORIES.items()
                       if (inv := _local_inventory(name, paths)) is not None}
intersphinx_timeout = 1

html_theme = "pydata_sphinx_theme"
html_title = f"margin_opt {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path = ["_static"]
templates_path = ["_templates"]  # a class page is its autoclass (own members), no table

# Narrow suppressions, each for a source this documentation does not own:
# - myst.header: adaboost.md is included under boosting.rst's own headings, so its
#   headings start at ##.
suppress_warnings = ["myst.header"]

def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn's metadata-routing setters (set_fit_request, ...) are generated on
    # every estimator class; they are scikit-learn's API, not margin_opt's.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
