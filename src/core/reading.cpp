// A C-SVC dual's certificate numbers from its answer (reading.hpp): the NumPy pass of
// margin_opt.kkt's dual_qp_checks for a dual with one variable per row of its kernel
// matrix, in one loop over the variables.

#include "reading.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace margin_opt {

namespace {

// max(0, x), NaN kept (as NumPy's maximum).
double pos_part(double x) { return std::isnan(x) ? x : (x > 0.0 ? x : 0.0); }

// Running counts and extremes of the pass.
struct Tally {
    double primal_res = 0.0, box = 0.0, comp = 0.0;
    double g_up = -std::numeric_limits<double>::infinity();
    double g_low = std::numeric_limits<double>::infinity();
    bool any_up = false, any_low = false, finite = true;
    double ya = 0.0, slack = 0.0;
    std::int64_t n_zero = 0, n_free = 0, n_at_upper = 0, n_support = 0;
    std::int64_t bad_zero = 0, bad_free = 0, bad_at_upper = 0, negligible = 0;
};

}  // namespace

void dual_qp_reading(const DualAnswer& qp, const ReadingTolerances& tols, const DualReading& out) {
    const std::int64_t m = qp.m;
    const double *y = qp.y, *p = qp.p, *up = qp.up, *alpha = qp.alpha;
    // f0 = K beta by the rows of the nonzero beta_j (K symmetric)
    std::vector<double> f0(static_cast<std::size_t>(m), 0.0);
    for (std::int64_t j = 0; j < m; ++j) {
        const double beta = y[j] * alpha[j];
        if (beta == 0.0) continue;
        const double* row = qp.K + j * m;
        for (std::int64_t t = 0; t < m; ++t) f0[t] += beta * row[t];
    }
    double quad = 0.0, scale = 0.0;
    for (std::int64_t t = 0; t < m; ++t) {
        quad += y[t] * alpha[t] * f0[t];
        if (std::isfinite(up[t])) scale = std::max(scale, up[t]);
    }
    const double zero_scale = std::max(1.0, scale), tau = tols.tau, tol = tols.tol;
    Tally a;
    for (std::int64_t t = 0; t < m; ++t) {
        const double dec = f0[t] + qp.b;
        const double st = y[t] * dec + p[t];
        const double xi = pos_part(-st);
        const double grad = y[t] * f0[t] + p[t];
        out.decision[t] = dec;
        out.xi[t] = xi;
        const double u = up[t], al = alpha[t];
        const bool fin = std::isfinite(u), fixed = u == 0.0;
        const bool zero = al <= tau * (fin ? u : zero_scale) && !fixed;
        const bool at_u = fin && al >= (1.0 - tau) * u && !zero && !fixed;
        const bool free = !zero && !at_u && !fixed;
        a.finite = a.finite && std::isfinite(st) && std::isfinite(grad) && std::isfinite(al) &&
                   std::isfinite(xi) && !std::isnan(u);
        a.primal_res = std::max({a.primal_res, -st - xi, -xi});
        a.box = std::max(a.box, -al);
        a.comp = std::max(a.comp, std::abs(al * (st + xi)));
        if (fin) {
            a.box = std::max(a.box, al - u);
            a.comp = std::max(a.comp, std::abs((u - al) * xi));
            a.slack += u * xi;
        }
        const bool movable = u > 0.0;
        const bool below_u = !at_u && movable, above_0 = !zero && movable;
        const double g = -y[t] * grad;
        const bool i_up = y[t] > 0.0 ? below_u : above_0;
        const bool i_low = y[t] > 0.0 ? above_0 : below_u;
        if (i_up) { a.any_up = true; a.g_up = std::max(a.g_up, g); }
        if (i_low) { a.any_low = true; a.g_low = std::min(a.g_low, g); }
        a.ya += y[t] * al;
        a.n_zero += zero;
        a.n_free += free;
        a.n_at_upper += at_u;
        a.bad_zero += zero && st < -tol;
        a.bad_free += free && std::abs(st) > tol;
        a.bad_at_upper += at_u && st > tol;
        const bool support = al != 0.0;
        a.n_support += support;
        if (scale > 0.0 && support) {
            const bool keep = al > tols.sv_threshold * scale && al / scale >= pos_part(st);
            a.negligible += !keep;
        }
    }
    double* num = out.num;
    if (a.finite) {
        num[0] = a.primal_res;
        num[1] = a.box;
        num[2] = a.comp;
        num[3] = a.any_up && a.any_low ? std::max(0.0, a.g_up - a.g_low) : 0.0;
    } else {
        std::fill(num, num + 4, std::numeric_limits<double>::quiet_NaN());
    }
    num[4] = std::abs(a.ya);
    num[5] = quad;
    num[6] = a.slack;
    const std::int64_t counts[] = {a.n_zero, a.n_free, a.n_at_upper, a.n_support,
                                   a.bad_zero, a.bad_free, a.bad_at_upper, a.negligible};
    for (int k = 0; k < 8; ++k) num[7 + k] = static_cast<double>(counts[k]);
}

}  // namespace margin_opt
