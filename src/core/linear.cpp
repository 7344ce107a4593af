// The linear solvers' row operations and dual coordinate descent's epochs (linear.hpp).
//
// The epochs take the iterates of the Python-compiled code they replaced: the same order
// (xorshift64*, Fisher-Yates), the same sums in the same order (no fast-math), so the
// same alpha after every epoch.
#include "linear.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace margin_opt {

namespace {

constexpr double INF = std::numeric_limits<double>::infinity();
// How far ahead (variables in the visiting order) an epoch asks for a row's data and
// for a variable's record and span: the rows are read at random, beyond the hardware's
// guess; on text-like data (48 MB of X) the prefetch made an epoch ~2.5x faster.
constexpr std::int64_t AHEAD_ROW = 1;
constexpr std::int64_t AHEAD_REC = 3;
// A step below this is not taken (liblinear's 1e-12).
constexpr double MIN_STEP = 1e-12;
// The curvature that stands in for 0 (an empty row in the tube's step): every step then
// reaches a bound of the box, as liblinear's division by zero does.
constexpr double NO_CURVATURE = 1e-300;
// The line search's Newton steps, at most, and its tolerance on the derivative (relative
// to the objective's scale).
constexpr int LINE_STEPS = 60;
constexpr double LINE_TOL = 1e-13;

// A pseudo-random integer in [0, k) (xorshift64*).
inline std::int64_t rand_below(std::uint64_t& state, std::int64_t k) {
    std::uint64_t x = state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    state = x;
    return static_cast<std::int64_t>((x * 2685821657736338717ULL) >> 33) % k;
}

// A random permutation of order[0, size) in place (Fisher-Yates).
void shuffle(std::int64_t* order, std::int64_t size, std::uint64_t& state) {
    for (std::int64_t i = 0; i < size; ++i) {
        const std::int64_t j = i + rand_below(state, size - i);
        std::swap(order[i], order[j]);
    }
}

// Prefetch what the visits s + AHEAD_ROW (its row) and s + AHEAD_REC (its span, record
// and value) will read.
template <class R>
MO_PREFETCH_INLINE void ask_ahead(const R& x, const EpochArrays& v, std::int64_t s, std::int64_t active) {
    if (s + AHEAD_REC < active) {
        const std::int64_t q = v.order[s + AHEAD_REC];
        __builtin_prefetch(v.span + 2 * q, 0, 3);
        __builtin_prefetch(v.rec + REC_WIDTH * q, 0, 3);
        __builtin_prefetch(v.value + q, 0, 3);
    }
    if (s + AHEAD_ROW < active) {
        const std::int64_t q = v.order[s + AHEAD_ROW];
        prefetch_span(x, v.span[2 * q], v.span[2 * q + 1]);
    }
}

// The row rows[k]'s first cache lines, for a loop over a list of rows.
template <class R>
MO_PREFETCH_INLINE void ask_row(const R& x, const std::int64_t* rows, std::int64_t k, std::int64_t m) {
    if constexpr (!R::dense)
        if (k < m) prefetch_span(x, x.lo(rows[k]), x.hi(rows[k]));
}

// Move variable order[s] past the active ones.
inline void shrink(std::int64_t* order, std::int64_t s, std::int64_t& active) {
    --active;
    std::swap(order[s], order[active]);
}

template <class R>
EpochResult margin_epoch(const R& x, const EpochArrays& v, std::int64_t active, CDState& st,
                         bool equality, double delta) {
    const double pg_max_old = st.pg_max_old, pg_min_old = st.pg_min_old, lam = st.lam;
    const double rho = equality ? st.rho : 0.0;
    double sya = st.sum;
    shuffle(v.order, active, st.rng);
    double pg_max = -INF, pg_min = INF;
    const std::int64_t* __restrict span = v.span;
    const double* __restrict rec = v.rec;
    double* __restrict alpha = v.value;
    double* __restrict w = v.w;
    std::int64_t* __restrict order = v.order;
    std::int64_t s = 0;
    while (s < active) {
        ask_ahead(x, v, s, active);
        const std::int64_t t = order[s];
        const double* r = rec + REC_WIDTH * t;
        const double u = r[2];
        if (u <= 0.0) {              // a zero weight: alpha = 0 = u is fixed, never a violation
            shrink(order, s, active);
            continue;
        }
        const std::int64_t lo = span[2 * t], hi = span[2 * t + 1];
        const double yt = r[0], a = alpha[t];
        double g = yt * span_dot(x, lo, hi, w) + r[1] + r[3] * a;
        if (equality) g += yt * (lam + rho * (sya - delta));
        double pg = 0.0;
        if (a == 0.0) {
            if (g > pg_max_old) {
                shrink(order, s, active);
                continue;
            }
            if (g < 0.0) pg = g;
        } else if (a >= u) {
            if (g < pg_min_old) {
                shrink(order, s, active);
                continue;
            }
            if (g > 0.0) pg = g;
        } else {
            pg = g;
        }
        if (pg > pg_max) pg_max = pg;
        if (pg < pg_min) pg_min = pg;
        if (std::fabs(pg) > MIN_STEP) {
            const double q = r[4] + rho;
            // an empty row without intercept or D has no curvature: the step runs to the
            // bound the gradient points at (liblinear's -g/0 = -+inf, clipped below)
            double next = q > 0.0 ? a - g / q : (g < 0.0 ? INF : -INF);
            if (next < 0.0)
                next = 0.0;
            else if (next > u)
                next = u;
            const double step = next - a;
            if (step != 0.0) {
                alpha[t] = next;
                sya += yt * step;
                span_axpy(x, lo, hi, yt * step, w);
            }
        }
        ++s;
    }
    st.sum = sya;
    return {active, pg_max, pg_min};
}

template <class R>
EpochResult tube_epoch(const R& x, const EpochArrays& v, std::int64_t active, CDState& st,
                       bool equality, double delta) {
    const double g_max_old = st.pg_max_old, lam = st.lam;
    const double rho = equality ? st.rho : 0.0;
    double sb = st.sum;
    shuffle(v.order, active, st.rng);
    double v_max = 0.0;
    const std::int64_t* __restrict span = v.span;
    const double* __restrict rec = v.rec;
    double* __restrict beta = v.value;
    double* __restrict w = v.w;
    std::int64_t* __restrict order = v.order;
    std::int64_t s = 0;
    while (s < active) {
        ask_ahead(x, v, s, active);
        const std::int64_t i = order[s];
        const double* r = rec + REC_WIDTH * i;
        const double u = r[2];
        if (u <= 0.0) {              // a zero weight: beta = 0 is fixed, never a violation
            shrink(order, s, active);
            continue;
        }
        const std::int64_t lo = span[2 * i], hi = span[2 * i + 1];
        const double bt = beta[i];
        double g = span_dot(x, lo, hi, w) - r[0] + r[3] * bt;
        if (equality) g += lam + rho * (sb - delta);
        const double e = r[1], gp = g + e, gn = g - e;
        double viol = 0.0;
        if (bt == 0.0) {
            if (gp < 0.0) {
                viol = -gp;
            } else if (gn > 0.0) {
                viol = gn;
            } else if (gp > g_max_old && gn < -g_max_old) {
                shrink(order, s, active);
                continue;
            }
        } else if (bt >= u) {
            if (gp > 0.0) {
                viol = gp;
            } else if (gp < -g_max_old) {
                shrink(order, s, active);
                continue;
            }
        } else if (bt <= -u) {
            if (gn < 0.0) {
                viol = -gn;
            } else if (gn > g_max_old) {
                shrink(order, s, active);
                continue;
            }
        } else {
            viol = std::fabs(bt > 0.0 ? gp : gn);
        }
        if (viol > v_max) v_max = viol;
        double h = r[4] + rho;
        if (h <= 0.0) h = NO_CURVATURE;    // an empty row without intercept or D
        double step;
        if (gp < h * bt)
            step = -gp / h;
        else if (gn > h * bt)
            step = -gn / h;
        else
            step = -bt;
        if (std::fabs(step) >= MIN_STEP) {
            double next = bt + step;
            if (next < -u)
                next = -u;
            else if (next > u)
                next = u;
            step = next - bt;
            if (step != 0.0) {
                beta[i] = next;
                sb += step;
                span_axpy(x, lo, hi, step, w);
            }
        }
        ++s;
    }
    st.sum = sb;
    return {active, v_max, 0.0};
}

}  // namespace

void row_norms(const LinearData& data, double* out) {
    visit_rows(data, [&](const auto& x) {
        for (std::int64_t r = 0; r < x.n; ++r) {
            double s = 0.0;
            for (std::int64_t k = x.lo(r); k < x.hi(r); ++k) s += x.data[k] * x.data[k];
            out[r] = s;
        }
    });
}

void weights(const LinearData& data, const std::int64_t* rows, const double* coef,
             std::int64_t m, double* w) {
    visit_rows(data, [&](const auto& x) {
        for (std::int64_t j = 0; j < x.d; ++j) w[j] = 0.0;
        for (std::int64_t t = 0; t < m; ++t) {
            ask_row(x, rows, t + 2, m);
            if (coef[t] != 0.0) span_axpy(x, x.lo(rows[t]), x.hi(rows[t]), coef[t], w);
        }
    });
}

void decision_rows(const LinearData& data, const std::int64_t* rows, std::int64_t m,
                   const double* w, double* out) {
    visit_rows(data, [&](const auto& x) {
        if (rows == nullptr) {
            for (std::int64_t r = 0; r < x.n; ++r) out[r] = span_dot(x, x.lo(r), x.hi(r), w);
            return;
        }
        for (std::int64_t t = 0; t < m; ++t) {
            ask_row(x, rows, t + 2, m);
            out[t] = span_dot(x, x.lo(rows[t]), x.hi(rows[t]), w);
        }
    });
}

void gram_rows(const LinearData& data, const std::int64_t* rows, std::int64_t m, double* G) {
    visit_rows(data, [&](const auto& x) {
        std::vector<double> buf(static_cast<std::size_t>(x.d), 0.0);
        for (std::int64_t a = 0; a < m; ++a) {
            const std::int64_t lo = x.lo(rows[a]), hi = x.hi(rows[a]);
            for (std::int64_t k = lo; k < hi; ++k) buf[x.column(k, lo)] = x.data[k];
            for (std::int64_t c = a; c < m; ++c) {
                const double g = span_dot(x, x.lo(rows[c]), x.hi(rows[c]), buf.data());
                G[a * m + c] = g;
                G[c * m + a] = g;
            }
            for (std::int64_t k = lo; k < hi; ++k) buf[x.column(k, lo)] = 0.0;
        }
    });
}

void add_hessian(const LinearData& data, const std::int64_t* rows, const double* coef,
                 std::int64_t m, double* H) {
    visit_rows(data, [&](const auto& x) {
        const std::int64_t d = x.d, w = d + 1;
        for (std::int64_t t = 0; t < m; ++t) {
            const double a = coef[t];
            const std::int64_t lo = x.lo(rows[t]), hi = x.hi(rows[t]);
            for (std::int64_t p = lo; p < hi; ++p) {
                const std::int64_t i = x.column(p, lo);
                const double v = a * x.data[p];
                H[i * w + d] += v;
                for (std::int64_t q = p; q < hi; ++q) H[i * w + x.column(q, lo)] += v * x.data[q];
            }
            H[d * w + d] += a;
        }
    });
}

LineStep huber_line_step(const double* t, const double* dm, const double* c, std::int64_t n,
                         double h, double lin, double ss, double scale) {
    double lo = 0.0, hi = INF, th = 1.0;
    for (int it = 0; it < LINE_STEPS; ++it) {
        double d1 = lin + th * ss, d2 = ss;
        for (std::int64_t i = 0; i < n; ++i) {
            const double g = dm[i];
            if (g == 0.0) continue;
            const double tt = t[i] - th * g;
            if (tt >= h) {
                d1 -= c[i] * g;
            } else if (tt > 0.0) {
                d1 -= c[i] * g * tt / h;
                d2 += c[i] * g * g / h;
            }
        }
        if (std::fabs(d1) <= LINE_TOL * scale) return {th, th == 1.0};
        if (d1 < 0.0)
            lo = th;
        else
            hi = th;
        double next = d2 > 0.0 ? th - d1 / d2 : INF;
        if (!(lo < next && next < hi)) next = hi < INF ? 0.5 * (lo + hi) : 2.0 * std::max(th, 1.0);
        if (next == th) break;
        th = next;
    }
    return {th, false};
}

namespace {

// The Armijo rule's sufficient decrease and its trials (liblinear's sigma and
// max_num_linesearch), and the smallest curvature of a feature (its 1e-12).
constexpr double ARMIJO_SIGMA = 0.01;
constexpr int ARMIJO_TRIALS = 20;
constexpr double MIN_CURVATURE = 1e-12;

// b_i += c y_i x_ij over column j's entries; returns sum_i C_i max(0, b_i)^2 over them
// after the change (and, in *before, before it).
template <class R>
double shift_margins(const R& x, std::int64_t j, const L1Arrays& a, double c, double* before) {
    double loss_old = 0.0, loss_new = 0.0;
    const std::int64_t lo = x.lo(j), hi = x.hi(j);
    for (std::int64_t k = lo; k < hi; ++k) {
        const std::int64_t i = x.column(k, lo);
        const double v = x.data[k] * a.y[i];
        if (v == 0.0) continue;
        const double b = a.margin[i];
        if (b > 0.0) loss_old += a.C[i] * b * b;
        const double nb = b + c * v;
        a.margin[i] = nb;
        if (nb > 0.0) loss_new += a.C[i] * nb * nb;
    }
    if (before != nullptr) *before = loss_old;
    return loss_new;
}

// One coordinate step on feature j; returns its violation of the optimality conditions
// (-1: shrunk, its zero weight looks optimal).
template <class R>
double l1_step(const R& x, std::int64_t j, const L1Arrays& a, double shrink_bound) {
    double G = 0.0, H = 0.0;
    const std::int64_t lo = x.lo(j), hi = x.hi(j);
    for (std::int64_t k = lo; k < hi; ++k) {
        const std::int64_t i = x.column(k, lo);
        const double b = a.margin[i];
        if (b <= 0.0) continue;
        const double v = x.data[k] * a.y[i];
        G += a.C[i] * v * b;
        H += a.C[i] * v * v;
    }
    G *= -2.0;
    H = std::max(2.0 * H, MIN_CURVATURE);
    const double wj = a.w[j], Gp = G + 1.0, Gn = G - 1.0;
    double violation = 0.0;
    if (wj == 0.0) {
        if (Gp < 0.0) {
            violation = -Gp;
        } else if (Gn > 0.0) {
            violation = Gn;
        } else if (Gp > shrink_bound && Gn < -shrink_bound) {
            return -1.0;
        }
    } else {
        violation = wj > 0.0 ? std::fabs(Gp) : std::fabs(Gn);
    }
    double d = Gp < H * wj ? -Gp / H : (Gn > H * wj ? -Gn / H : -wj);
    if (std::fabs(d) < MIN_STEP) return violation;
    double delta = std::fabs(wj + d) - std::fabs(wj) + G * d;
    double d_old = 0.0, loss_old = 0.0;
    int trial = 0;
    for (; trial < ARMIJO_TRIALS; ++trial) {
        double cond = std::fabs(wj + d) - std::fabs(wj) - ARMIJO_SIGMA * delta;
        // an upper bound of the loss's change first (liblinear's appxcond): no pass over
        // the column where it already shows the decrease
        if (a.col_sq[j] * d * d + G * d + cond <= 0.0) {
            shift_margins(x, j, a, d_old - d, nullptr);
            break;
        }
        const double loss_new = shift_margins(x, j, a, d_old - d,
                                              trial == 0 ? &loss_old : nullptr);
        cond += loss_new - loss_old;
        if (cond <= 0.0) break;
        d_old = d;
        d *= 0.5;
        delta *= 0.5;
    }
    a.w[j] = wj + d;
    if (trial == ARMIJO_TRIALS) {            // no decrease found: margins recomputed whole
        a.w[j] = wj;
        shift_margins(x, j, a, d_old, nullptr);   // undo the last trial's shift
    }
    return violation;
}

template <class R>
double l1_passes(const R& x, const L1Arrays& a, L1State& st, double eps, std::int64_t max_passes,
                 std::int64_t n_samples) {
    const std::int64_t d = x.n;
    if (st.active < 0) st.active = d;
    double gnorm1 = 0.0;
    while (st.passes < max_passes) {
        double gmax = 0.0;
        gnorm1 = 0.0;
        shuffle(a.order, st.active, st.rng);
        const double bound = st.gmax_old / static_cast<double>(n_samples);
        for (std::int64_t s = 0; s < st.active; ++s) {
            const std::int64_t j = a.order[s];
            const double v = l1_step(x, j, a, bound);
            if (v < 0.0) {                   // shrunk: swapped behind the active ones
                --st.active;
                std::swap(a.order[s], a.order[st.active]);
                --s;
                continue;
            }
            gmax = std::max(gmax, v);
            gnorm1 += v;
        }
        if (st.gnorm1_init < 0.0) st.gnorm1_init = gnorm1;
        ++st.passes;
        if (gnorm1 <= eps * st.gnorm1_init) {
            if (st.active == d) break;
            st.active = d;                   // every feature again before stopping
            st.gmax_old = INF;
            continue;
        }
        st.gmax_old = gmax;
    }
    return gnorm1;
}

}  // namespace

double l1_squared_hinge(const LinearData& cols, const L1Arrays& a, L1State& state, double eps,
                        std::int64_t max_passes) {
    return visit_rows(cols, [&](const auto& x) {
        return l1_passes(x, a, state, eps, max_passes, cols.d);
    });
}

EpochResult epoch_margin(const LinearData& data, const EpochArrays& v, std::int64_t active,
                         CDState& state, bool equality, double delta) {
    return visit_rows(data, [&](const auto& x) {
        return margin_epoch(x, v, active, state, equality, delta);
    });
}

EpochResult epoch_tube(const LinearData& data, const EpochArrays& v, std::int64_t active,
                       CDState& state, bool equality, double delta) {
    return visit_rows(data, [&](const auto& x) {
        return tube_epoch(x, v, active, state, equality, delta);
    });
}

}  // namespace margin_opt
