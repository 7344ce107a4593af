"""Benchmarks behind ``margin-opt bench``: one module per suite.

Each suite module exposes ``run(quick=False, **kw) -> list[dict]`` (one dict per
row, JSON-ready) and ``format_rows(rows) -> str``.  :func:`run_suite` runs one by
name with the options the command line passes (``--sizes``, ``--repeats``).
"""

from __future__ import annotations

import inspect
from importlib import import_module

__all__ = ["SUITES", "run_suite"]

SUITES = {
    "smo": "margin_opt.bench.smo",
    "scale": "margin_opt.bench.scale",
    "memory": "margin_opt.bench.memory",
    "conditions": "margin_opt.bench.conditions",
    "subgradient": "margin_opt.bench.subgradient",
    "svr": "margin_opt.bench.svr",
    "linear": "margin_opt.bench.linear",
    "adaboost": "margin_opt.bench.adaboost",
    "truth": "margin_opt.bench.truth",
    "multiclass": "margin_opt.bench.multiclass",
    "crammer-singer": "margin_opt.bench.crammer_singer",
    "bias-variance": "margin_opt.bench.bias_variance",
    "cvxpy-dual": "margin_opt.bench.cvxpy_dual",
    "predict": "margin_opt.bench.predict",
    "conformance": "margin_opt.bench.conformance",
}


def run_suite(name, quick=False, **options):
    """Run suite ``name``; ``(rows, text)``.

    Parameters
    ----------
    name : str
        A key of :data:`SUITES`.
    quick : bool, default=False
        Small sizes (a smoke test).
    **options
        Keyword arguments of the suite's ``run`` (e.g. ``sizes``, ``repeats``); those
        that are None are left out.

    Returns
    -------
    rows : list of dict
    text : str
        The suite's table.

    Raises
    ------
    ValueError
        An unknown suite, or an option the suite does not take.
    """
    if name not in SUITES:
        raise ValueError(f"unknown benchmark suite {name!r}; choose from {list(SUITES)}")
    module = import_module(SUITES[name])
    given = {k: v for k, v in options.items() if v is not None}
    takes = inspect.signature(module.run).parameters
    refused = sorted(k for k in given if k not in takes)
    if refused:
        raise ValueError(f"suite {name!r} takes no {', '.join('--' + k for k in refused)}")
    rows = module.run(quick=quick, **given)
    return rows, module.format_rows(rows)
