"""Notebook displays: a problem's printed mathematics as LaTeX, reports as HTML tables.

Jupyter shows an object by its ``_repr_latex_`` or ``_repr_html_`` where it has
one.  Every problem prints itself (``print(problem)``) in one layout: a headline,
sections ending in ``:`` (``primal (...):``, ``dual (...):``), and indented rows
that start with a keyword (``minimize``, ``maximize``, ``subject to``, ``with``)
followed by an expression in Unicode mathematics (``½‖w‖² + Σᵢ Cᵢξᵢ``).
:func:`problem_latex` renders that layout, so every problem's notebook display is
the text it prints, typeset; :func:`math_latex` translates one expression.
:func:`html_table` is the table that certificates and solutions display.
"""

from __future__ import annotations

import html
import re

__all__ = ["problem_latex", "math_latex", "html_table"]

#: Unicode mathematics -> LaTeX, character by character
_SYMBOLS = {
    "½": r"\tfrac12 ", "²": "^2", "³": "^3", "ᵀ": r"^\top ", "*": "^{*}",
    "α": r"\alpha ", "β": r"\beta ", "γ": r"\gamma ", "δ": r"\delta ", "ε": r"\varepsilon ",
    "ξ": r"\xi ", "ν": r"\nu ", "φ": r"\phi ", "λ": r"\lambda ", "μ": r"\mu ", "ρ": r"\rho ",
    "σ": r"\sigma ", "θ": r"\theta ", "η": r"\eta ", "τ": r"\tau ", "ω": r"\omega ",
    "Φ": r"\Phi ", "Δ": r"\Delta ", "Σ": r"\sum", "Π": r"\prod", "∀": r"\forall ",
    "≥": r"\ge ", "≤": r"\le ", "−": "-", "→": r"\to ", "∈": r"\in ", "≠": r"\ne ",
    "·": r"\cdot ", "∘": r"\circ ", "∞": r"\infty ", "…": r"\ldots ", "⇒": r"\Rightarrow ",
    "â": r"\hat a", "{": r"\{", "}": r"\}", "%": r"\%", "#": r"\#", "&": r"\&", "$": r"\$",
}
#: subscript characters -> their letters or digits
_SUB = dict(zip("ᵢⱼₖₜₛₙₘᵣₗ₀₁₂₃₄₅₆₇₈₉", "ijktsnmrl0123456789", strict=True))
#: words typeset as operators
_OPERATORS = {"max", "min", "log", "exp", "sign", "sup", "inf", "argmin", "argmax"}
#: the keywords that open a row, longest first
_KEYWORDS = ("subject to", "minimize", "maximize", "s.t.", "with", "find", "min", "max")


def math_latex(expr: str) -> str:
    """One expression of printed Unicode mathematics as LaTeX (math mode).

    Parameters
    ----------
    expr : str
        E.g. ``"½‖w‖² + Σᵢ Cᵢξᵢ"``.

    Returns
    -------
    latex : str
        Subscript runs become ``_{...}``, ``‖·‖`` ``\\lVert``/``\\rVert``, Greek letters
        and relations their macros, two spaces a ``\\quad``, ``max``/``log``
        operators, other words of several letters ``\\mathrm{}``.
    """
    out, norm_open, i = [], False, 0
    while i < len(expr):
        ch = expr[i]
        if ch in _SUB:
            j = i
            while j < len(expr) and expr[j] in _SUB:
                j += 1
            out.append("_{" + "".join(_SUB[c] for c in expr[i:j]) + "}")
            i = j
            continue
        if expr.startswith("s.t.", i):
            out.append(r"\ \text{s.t.}\ ")
            i += 4
            continue
        if ch == "‖":
            out.append(r"\rVert " if norm_open else r"\lVert ")
            norm_open = not norm_open
        elif ch == "." and expr.startswith("..", i):
            out.append(r"\ldots ")
            i += 2
            continue
        elif ch == " " and expr.startswith("  ", i):
            while i < len(expr) and expr[i] == " ":
                i += 1
            out.append(r"\quad ")
            continue
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            m = re.match(r"[A-Za-z_]+", expr[i:])
            word = m.group(0)
            if word in _OPERATORS:
                out.append("\\" + word + " " if word not in ("argmin", "argmax", "sign")
                           else r"\operatorname{" + word + "}")
            elif len(word) == 1:
                out.append(word)
            elif "_" in word or word.islower() and len(word) > 2:
                out.append(r"\mathrm{" + word.replace("_", r"\_") + "}")
            else:  # products of one-letter symbols: LLᵀ, Kβ
                out.append(word)
            i += len(word)
            continue
        else:
            out.append(_SYMBOLS.get(ch, ch))
        i += 1
    return "".join(out).strip()


def _text(line: str) -> str:
    r"""A line of prose in ``\text{}`` (braces and backslashes escaped; ``_`` is set
    between text runs in math mode, where MathJax and LaTeX both allow it)."""
    safe = line.replace("\\", "/").replace("{", "(").replace("}", ")").replace("$", "")
    return r"\_".join(r"\text{" + part + "}" for part in safe.split("_"))


def _row(body: str):
    """(keyword, expression) of an indented row, or None when it opens with no keyword."""
    for kw in _KEYWORDS:
        if body.startswith(kw + " ") or body == kw:
            return kw, body[len(kw):].strip()
    return None


def problem_latex(text: str) -> str:
    """A problem's printed form (``str(problem)``) as one LaTeX display.

    The headline and section titles are set as text; each indented row that opens
    with a keyword (``minimize``, ``maximize``, ``subject to``, ``min``, ``s.t.``)
    is a row of an aligned array, keyword left and expression typeset right;
    ``with`` rows and other lines stay prose.

    Parameters
    ----------
    text : str
        What ``print(problem)`` prints.

    Returns
    -------
    latex : str
        ``$$\\begin{array}{ll} ... \\end{array}$$``, for ``_repr_latex_``.
    """
    rows = []
    for line in text.splitlines():
        if not line.strip():
            if rows and rows[-1].endswith("\\\\"):
                rows[-1] += "[6pt]"
            continue
        if line.startswith("    "):
            body = line.strip()
            found = _row(body)
            if found is None:
                rows.append(r"& " + math_latex(body) + r" \\")
            elif found[0] == "with":
                rows.append(r"\quad\text{with} & " + _text(found[1]) + r" \\")
            else:
                kw, expr = found
                rows.append(r"\quad\text{" + kw + "} & " + math_latex(expr) + r" \\")
        else:
            rows.append(r"\rlap{" + _text(line) + r"} & \\")
    if rows:
        rows[-1] = re.sub(r"\\\\(\[6pt\])?$", "", rows[-1])
    return "$$\\begin{array}{ll}\n" + "\n".join(rows) + "\n\\end{array}$$"


def html_table(head, rows, *, caption=None) -> str:
    """An HTML ``<table>`` of strings (escaped), for ``_repr_html_``.

    Parameters
    ----------
    head : sequence of str
        Column titles.
    rows : sequence of sequence
        Cells, converted by ``str``.
    caption : str, optional

    Returns
    -------
    html : str
    """
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    th = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table>{cap}<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"
