"""Benchmarks behind ``margin-opt bench`` and ``benchmarks/``: one module per suite.

Each suite module exposes ``run(quick=False, **kw) -> list[dict]`` (one dict per
row, JSON-ready) and ``format_rows(rows) -> str``.
"""

SUITES = {
    "smo": "margin_opt.bench.smo",
    "scale": "margin_opt.bench.scale",
    "conditions": "margin_opt.bench.conditions",
    "subgradient": "margin_opt.bench.subgradient",
    "svr": "margin_opt.bench.svr",
    "linear": "margin_opt.bench.linear",
    "adaboost": "margin_opt.bench.adaboost",
    "truth": "margin_opt.bench.truth",
    "multiclass": "margin_opt.bench.multiclass",
    "bias-variance": "margin_opt.bench.bias_variance",
}
