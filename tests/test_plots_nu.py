"""The ν-property figure (margin_opt.plots.nu): the plotted fractions are the fitted
NuSVC's."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from margin_opt import NuSVC  # noqa: E402
from margin_opt.datasets import load_dataset  # noqa: E402
from margin_opt.plots.nu import plot_nu_property  # noqa: E402


def test_plot_nu_property_draws_the_fitted_fractions(tmp_path):
    d = load_dataset("breast_cancer")
    nus = [0.1, 0.4, 0.7, 0.9]                     # 0.9 > 2 min(n+, n-)/n = 0.745
    fig = plot_nu_property(d.X, d.y, nus, file=tmp_path / "nu.png")
    assert (tmp_path / "nu.png").stat().st_size > 0
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    errors, support = lines["margin errors / n"], lines["support vectors / n"]
    np.testing.assert_array_equal(errors.get_xdata(), [0.1, 0.4, 0.7])
    for nu, e, s in zip(errors.get_xdata(), errors.get_ydata(), support.get_ydata(), strict=True):
        clf = NuSVC(nu=nu).fit(d.X, d.y)
        q = clf.certificate_.quantities
        assert (e, s) == (q["error_fraction"], q["support_fraction"])
        margin = clf.decision_function(d.X) * np.where(d.y == clf.classes_[1], 1, -1)
        assert e == np.mean(margin < 1 - 1e-4)     # y f(x) < 1 in the C-SVC scale (f/r)
        assert e <= nu <= s
        assert s == pytest.approx(clf.support_.size / d.X.shape[0])
