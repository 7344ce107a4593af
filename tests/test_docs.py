"""The documentation: the API page covers the public API, the site builds without warnings."""

import os
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


@pytest.mark.slow
def test_sphinx_build_without_warnings(tmp_path):
    for module in ("sphinx", "numpydoc", "pydata_sphinx_theme", "myst_parser"):
        pytest.importorskip(module, reason="the docs extra is not installed")
    src = tmp_path / "docs"  # a copy: autosummary writes its stubs into the source tree
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "generated"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", str(src), str(tmp_path / "html")], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    for page in ("index", "svm", "svr", "boosting", "certificates", "backends", "benchmarks",
                 "api", "generated/margin_opt.SVMProblem"):
        assert (tmp_path / "html" / f"{page}.html").exists(), page
