"""Studies: experiments over estimators (bias–variance by bootstrap, ensemble comparisons).

Replicates run through joblib, so ``with joblib.parallel_backend("dask"):`` spreads
them over a Dask cluster; results never depend on the backend or on ``n_jobs``.
"""
