"""Notebook displays: problems as LaTeX (the printed primal and dual, typeset),
certificates and solutions as HTML tables, reprs that fit on a screen."""

import re
from html.parser import HTMLParser

import numpy as np
import pytest
from sklearn.datasets import load_iris

from margin_opt import SVC, MulticlassSVMProblem, SeparabilityProblem, SVMProblem, SVRProblem
from margin_opt.datasets import load_dataset
from margin_opt.display import math_latex, problem_latex
from margin_opt.problems.boosting import MaxMarginLP, StageLineSearch, TotallyCorrectiveProblem

_UNICODE_MATH = set("ᵢⱼₖₜₛᵣ₁²ᵀ‖≥≤Σ½αβξφλ−")


def _math_parts(latex):
    """The LaTeX with every \\text{...} removed: what is typeset as mathematics."""
    return re.sub(r"\\text\{[^{}]*\}", "", latex)


def _balanced(latex):
    depth = 0
    for ch in latex.replace(r"\{", "").replace(r"\}", ""):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.fixture(scope="module")
def cancer():
    return load_dataset("breast_cancer")


def _problems():
    X, y = load_iris(return_X_y=True)
    d = load_dataset("diabetes")
    M = np.sign(np.random.default_rng(0).standard_normal((20, 3)))
    return [SVMProblem(X[:100], y[:100], C=1.0, kernel="rbf"),
            SVMProblem(X[:100], y[:100], C=np.inf, kernel="linear"),
            SVRProblem(d.X[:50], d.y[:50], C=1.0, epsilon=0.1),
            MulticlassSVMProblem(X[::5], y[::5]),
            SeparabilityProblem(X[:20], np.r_[np.ones(10), -np.ones(10)]),
            StageLineSearch(np.ones(20), M[:, 0]),
            TotallyCorrectiveProblem(M, l1_bound=2.0), MaxMarginLP(M)]


@pytest.mark.parametrize("problem", _problems(), ids=lambda p: type(p).__name__)
def test_every_problem_typesets_what_it_prints(problem):
    text, latex = str(problem), problem._repr_latex_()
    assert latex.startswith("$$\\begin{array}{ll}") and latex.endswith("\\end{array}$$")
    assert _balanced(latex)
    keyword_rows = [line for line in text.splitlines()
                    if re.match(r"    (minimize|maximize|subject to|min|find) ", line)]
    assert keyword_rows, "the printed problem has no objective row"
    # one typeset row per printed row, in order, with the same keyword
    typeset = re.findall(r"\\quad\\text\{(minimize|maximize|subject to|min|find)\}", latex)
    assert typeset == [re.match(r"    (\S+(?: to)?)", line).group(1) for line in keyword_rows]
    left = _UNICODE_MATH & set(_math_parts(latex))
    assert not left, f"Unicode mathematics not translated: {left}"


def test_svm_problem_latex_holds_primal_and_dual():
    X, y = load_iris(return_X_y=True)
    latex = SVMProblem(X[:100], y[:100], C=1.0, kernel="rbf")._repr_latex_()
    primal = latex.index(r"\text{minimize} & \tfrac12 \lVert w\rVert ^2 + \sum_{i} C_{i}\xi _{i}")
    assert r"y_{i}(w^\top \phi (x_{i}) + b) \ge  1 - \xi _{i}" in latex
    dual = latex.index(r"\text{maximize} & \sum_{i} \alpha _{i} - \tfrac12  \sum_{ij} "
                       r"\alpha _{i}\alpha _{j} y_{i}y_{j} K(x_{i}, x_{j})")
    assert r"0 \le  \alpha _{i} \le  C_{i},\quad \sum_{i} y_{i}\alpha _{i} = 0" in latex
    assert primal < dual
    hard = SVMProblem(X[:100], y[:100], C=np.inf, kernel="linear")._repr_latex_()
    assert r"\text{minimize} & \tfrac12 \lVert w\rVert ^2 \\" in hard
    assert r"\alpha _{i} \ge  0" in hard and r"C_{i}\xi" not in hard


def test_math_latex_pieces():
    assert math_latex("½‖w‖²") == r"\tfrac12 \lVert w\rVert ^2"
    assert math_latex("Σᵢⱼ αᵢαⱼ") == r"\sum_{ij} \alpha _{i}\alpha _{j}"
    assert math_latex("max(0, 1 − yᵢfᵢ)") == r"\max (0, 1 - y_{i}f_{i})"
    assert math_latex("ξ, ξ* ≥ 0") == r"\xi , \xi ^{*} \ge  0"
    assert math_latex("K(x_index[t])") == r"K(\mathrm{x\_index}[t])"
    # prose keeps underscores out of text mode (MathJax and LaTeX reject them there)
    assert r"\text{from problem.to}\_\text{standard}\_\text{form():}" in problem_latex(
        "from problem.to_standard_form():")


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.rows, self.cells = [], 0, []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.rows += tag == "tr"

    def handle_endtag(self, tag):
        assert self.tags and self.tags[-1] == tag, f"</{tag}> closes <{self.tags[-1:]}>"
        self.tags.pop()

    def handle_data(self, data):
        self.cells.append(data)


def _parse(html):
    parser = _Tables()
    parser.feed(html)
    assert not parser.tags, "unclosed tags"
    return parser


def test_certificate_html_holds_its_tables(cancer):
    problem = SVMProblem(cancer.X, cancer.y, C=1.0, kernel="rbf")
    sol = problem.solve("cvxpy-dual")
    cert = problem.certify(sol, tol=1e-6)
    html = cert._repr_html_()
    assert html.count("<table>") == 3 and "support-vector table" in html
    parsed = _parse(html)
    for check in cert.checks:
        assert check.name in parsed.cells
    for row in cert.table:
        assert row.category in parsed.cells
    assert ": OK</b>" in html
    # a wrong answer (α halved) fails, and the display says so
    bad = problem.certify(alpha=sol.alpha / 2, b=sol.b, tol=1e-6)
    assert not bad.ok and ": FAILED</b>" in bad._repr_html_() and "FAIL" in _parse(
        bad._repr_html_()).cells


def test_solution_repr_fits_a_screen(cancer):
    problem = SVMProblem(cancer.X, cancer.y, C=1.0, kernel="rbf")
    sol = problem.solve("smo", tol=1e-6)
    text = repr(sol)
    assert len(text.splitlines()) <= 25 and "array([" not in text
    assert f"{sol.support_.size} of 569 samples" in text and "certificate       OK" in text
    assert f"{sol.dual_objective:.10g}" in text
    html = sol._repr_html_()
    assert "<table>" in html and "support-vector table" in html  # the certificate follows
    _parse(html)


def test_dataset_repr_has_no_arrays(cancer):
    text = repr(cancer)
    assert "\n" not in text and "array(" not in text and "(569, 30)" in text
    assert "2 classes" in text
    assert "targets in" in repr(load_dataset("diabetes"))


def test_one_vs_one_certificate_html():
    X, y = load_iris(return_X_y=True)
    cert = SVC(kernel="linear").fit(X, y).certificate_
    html = cert._repr_html_()
    assert html.count("<tr>") == 1 + len(cert) and _parse(html)
