"""The documentation: the API page covers the public API, every page is in the site and
names only what exists, and the site builds without warnings and without the network."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import margin_opt
from margin_opt import cli

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


def test_api_page_lists_the_public_api():
    text = (DOCS / "api.rst").read_text(encoding="utf-8")
    listed = {line.strip() for line in text.splitlines() if line.startswith("   ")}
    missing = sorted(set(margin_opt.__all__) - listed)
    assert not missing, f"docs/api.rst lacks {missing} (exported in margin_opt.__all__)"


def test_top_level_help_is_clean(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out
    assert "\nexamples:\n  margin-opt verify" in out  # raw layout: one example per line


#: pages included into another page rather than built on their own
INCLUDED = {"adaboost.md"}
PAGES = sorted(p for p in DOCS.iterdir() if p.suffix in (".md", ".rst"))
USER_DOCS = [REPO / "README.md", *PAGES]


def _toctree_entries():
    text = (DOCS / "index.rst").read_text(encoding="utf-8")
    entries = set()
    for block in re.findall(r"\.\. toctree::\n((?:   .*\n|\n)+)", text):
        entries |= {line.strip() for line in block.splitlines()
                    if line.strip() and not line.strip().startswith(":")}
    return entries


def test_every_page_is_in_the_site():
    entries = _toctree_entries()
    missing = [p.name for p in PAGES
               if p.stem not in entries and p.name not in INCLUDED and p.stem != "index"]
    assert not missing, f"pages outside the toctree of docs/index.rst: {missing}"
    for name in ("certificates", "performance", "architecture", "gallery"):
        assert name in entries


def test_no_doc_names_a_path_outside_the_repository():
    for page in USER_DOCS:
        text = page.read_text(encoding="utf-8")
        assert "shared/data" not in text and "shared/DESIGN" not in text, page.name
        for target in re.findall(r"\.\./[\w./-]+", text):
            resolved = (page.parent / target).resolve()
            assert resolved.is_relative_to(REPO), f"{page.name} names {target}"
            assert resolved.exists(), f"{page.name} names {target}, which does not exist"


def test_named_paths_exist():
    """Every margin_opt/..., examples/..., tests/... path a page names exists (the
    architecture page above all: it must describe the code as it is)."""
    named = set()
    for page in USER_DOCS:
        text = page.read_text(encoding="utf-8")
        named |= set(re.findall(r"(?<![\w./])((?:margin_opt|examples|tests|src)/[\w./-]*\w/?)",
                                text))
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert not missing, f"paths named in the docs that do not exist: {missing}"
    arch = (DOCS / "architecture.md").read_text(encoding="utf-8")
    modules = {p.name for p in (REPO / "margin_opt" / "solvers" / "smo").glob("*.py")
               if p.name != "__init__.py"}
    assert all(f"`{m}`" in arch for m in modules), "a SMO module is missing from architecture"
    core = {p.name for p in (REPO / "src" / "core").glob("*.[ch]pp")}
    assert core and all(m in arch for m in core), "a core file is missing from architecture"


def test_user_pages_hold_no_lab_notes():
    for page in USER_DOCS:
        text = page.read_text(encoding="utf-8")
        assert "for the lead to paste" not in text, page.name
        if page.name != "performance.md":  # the changelog holds the history
            assert "tried, not kept" not in text.lower(), page.name


def test_readme_is_short_and_links_the_pages():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for page in ("certificates.md", "performance.md", "architecture.md", "gallery.md"):
        assert f"docs/{page}" in text


def test_model_table_is_complete():
    index = (DOCS / "index.rst").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in ("SVC", "SVR", "AdaBoost", "Perceptron", "separability", "Bagging",
                 "RandomForest", "ExtraTrees", "BaggingRegressor", "RandomForestRegressor",
                 "ExtraTreesRegressor", "bias_variance", "MulticlassSVMProblem",
                 "SVMProblem", "SVRProblem", "SeparabilityProblem", "OneClassSVM",
                 "OneClassProblem"):
        assert name in index, f"docs/index.rst's model table lacks {name}"
        assert name in readme, f"README's model table lacks {name}"


def test_gallery_shows_every_example_and_every_figure_exists():
    gallery = (DOCS / "gallery.md").read_text(encoding="utf-8")
    for script in sorted((REPO / "examples").glob("*.py")):
        assert f"examples/{script.name}" in gallery, f"{script.name} is not in the gallery"
        for png in re.findall(r"[\w-]+\.png", script.read_text(encoding="utf-8")):
            if png in ("adaboost.png",):  # the stem its four figures are named from
                continue
            assert png in gallery, f"{png} of {script.name} is not shown in the gallery"
    shown = re.compile(r"(?:\]\(|\{(?:image|figure)\} |\.\. (?:image|figure):: )([\w./-]+\.png)")
    for page in PAGES:
        for image in shown.findall(page.read_text(encoding="utf-8")):
            assert (DOCS / image).exists(), f"{page.name} shows {image}, which is missing"


def test_math_is_served_from_the_site():
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    path = re.search(r'mathjax_path = "([^"]+)"', conf).group(1)
    assert not path.startswith(("http", "//")) and (DOCS / "_static" / path).is_file()


_REMOTE = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//",
                     re.I)


def _remote_loads(html):
    """The tags of a page that load something from the network (links to read are fine)."""
    tags = re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", html, re.I)
    return [t for t in tags
            if _REMOTE.match(t) and not re.search(r'rel="(?:canonical|alternate)"', t)]


def test_remote_load_detector():
    assert _remote_loads('<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex.js">')
    assert _remote_loads('<link rel="stylesheet" href="//fonts.example/x.css">')
    assert not _remote_loads('<script src="_static/mathjax/tex-svg-full.js"></script>'
                             '<a href="https://scikit-learn.org/">sklearn</a>')


@pytest.mark.slow
def test_sphinx_build_without_warnings(tmp_path):
    for module in ("sphinx", "numpydoc", "pydata_sphinx_theme", "myst_parser"):
        pytest.importorskip(module, reason="the docs extra is not installed")
    src = tmp_path / "docs"  # a copy: autosummary writes its stubs into the source tree
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "generated"))
    shutil.copytree(REPO / "examples", tmp_path / "examples")  # the gallery includes them
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", str(src), str(tmp_path / "html")], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    html = tmp_path / "html"
    for page in ("index", "getting_started", "svm", "svr", "boosting", "certificates",
                 "backends", "smo", "performance", "architecture", "gallery", "api",
                 "generated/margin_opt.SVMProblem"):
        assert (html / f"{page}.html").exists(), page
    remote = {p.name: _remote_loads(p.read_text(encoding="utf-8"))
              for p in html.rglob("*.html")}
    remote = {k: v for k, v in remote.items() if v}
    assert not remote, f"pages that load from the network: {remote}"
    svm = (html / "svm.html").read_text(encoding="utf-8")
    assert '_static/mathjax/tex-svg-full.js' in svm
    assert (html / "_static" / "mathjax" / "tex-svg-full.js").is_file()
