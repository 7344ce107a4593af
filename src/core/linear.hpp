// The linear solvers' data (liblinear's family): rows of X read as spans [lo, hi) of
// one array, w kept explicitly.  Three layouts, one template instance each: dense
// (row-major, flat), CSR with 32-bit indices (scipy's usual) and CSR with 64-bit ones
// (past 2^31 - 1 entries or columns).  Dual coordinate descent's epochs (Hsieh et al.
// 2008; Ho and Lin 2012 for eps-SVR) and the row operations the Newton steps use.
#pragma once

#include <cstdint>

// A prefetching helper must be inlined where it is called: a separate function whose
// only effect is __builtin_prefetch is "pure" to GCC's inter-procedural analysis, and
// the call is deleted (GCC 12: no prefetch was left in the epochs, which ran 2x slower).
#define MO_PREFETCH_INLINE inline __attribute__((always_inline))

namespace margin_opt {

// Dense rows: row r is data[r d, r d + d), column k - lo.
struct DenseRows {
    static constexpr bool dense = true;
    const double* data = nullptr;
    std::int64_t n = 0, d = 0;
    std::int64_t lo(std::int64_t r) const { return r * d; }
    std::int64_t hi(std::int64_t r) const { return r * d + d; }
    std::int64_t column(std::int64_t k, std::int64_t lo) const { return k - lo; }
    MO_PREFETCH_INLINE void prefetch_index(std::int64_t) const {}
};

// CSR rows with indices of type I: row r is data[indptr[r], indptr[r + 1]).
template <class I>
struct CsrRows {
    static constexpr bool dense = false;
    const double* data = nullptr;
    const I* indices = nullptr;
    const I* indptr = nullptr;
    std::int64_t n = 0, d = 0;
    std::int64_t lo(std::int64_t r) const { return indptr[r]; }
    std::int64_t hi(std::int64_t r) const { return indptr[r + 1]; }
    std::int64_t column(std::int64_t k, std::int64_t) const { return indices[k]; }
    MO_PREFETCH_INLINE void prefetch_index(std::int64_t k) const {
        __builtin_prefetch(indices + k, 0, 3);
    }
};

// x . w for the row stored in data[lo, hi).
template <class R>
inline double span_dot(const R& x, std::int64_t lo, std::int64_t hi, const double* w) {
    double s = 0.0;
    if constexpr (R::dense) {
        const double* a = x.data + lo;
        for (std::int64_t k = 0; k < hi - lo; ++k) s += a[k] * w[k];
    } else {
        for (std::int64_t k = lo; k < hi; ++k) s += x.data[k] * w[x.indices[k]];
    }
    return s;
}

// w += a x for the row stored in data[lo, hi).
template <class R>
inline void span_axpy(const R& x, std::int64_t lo, std::int64_t hi, double a, double* w) {
    if constexpr (R::dense) {
        const double* v = x.data + lo;
        for (std::int64_t k = 0; k < hi - lo; ++k) w[k] += a * v[k];
    } else {
        for (std::int64_t k = lo; k < hi; ++k) w[x.indices[k]] += a * x.data[k];
    }
}

// Ask the CPU for the first cache lines of the row in data[lo, hi) (a hint only).
template <class R>
MO_PREFETCH_INLINE void prefetch_span(const R& x, std::int64_t lo, std::int64_t hi) {
    const std::int64_t end = hi < lo + 64 ? hi : lo + 64;
    for (std::int64_t k = lo; k < end; k += 8) __builtin_prefetch(x.data + k, 0, 3);
    if constexpr (!R::dense)
        for (std::int64_t k = lo; k < end; k += 16) x.prefetch_index(k);
}

// The data of a linear solver, of one of the three layouts (bindings build it).
struct LinearData {
    bool dense = true;
    bool wide = false;                  // CSR with 64-bit indices
    const double* data = nullptr;
    const void* indices = nullptr;
    const void* indptr = nullptr;
    std::int64_t n = 0, d = 0;
};

// f(rows) with rows the layout of x (DenseRows, CsrRows<int32_t> or CsrRows<int64_t>).
template <class F>
decltype(auto) visit_rows(const LinearData& x, F&& f) {
    if (x.dense) return f(DenseRows{x.data, x.n, x.d});
    if (x.wide)
        return f(CsrRows<std::int64_t>{x.data, static_cast<const std::int64_t*>(x.indices),
                                       static_cast<const std::int64_t*>(x.indptr), x.n, x.d});
    return f(CsrRows<std::int32_t>{x.data, static_cast<const std::int32_t*>(x.indices),
                                   static_cast<const std::int32_t*>(x.indptr), x.n, x.d});
}

// ---- row operations (linear.cpp) ----

// ||x_r||^2 of every row into out[n].
void row_norms(const LinearData& x, double* out);
// w[d] = sum_t coef[t] x_{rows[t]} (w overwritten).
void weights(const LinearData& x, const std::int64_t* rows, const double* coef, std::int64_t m,
             double* w);
// out[t] = x_{rows[t]} . w (rows null: every row, m = n).
void decision_rows(const LinearData& x, const std::int64_t* rows, std::int64_t m,
                   const double* w, double* out);
// G[m, m] = X_R X_R^T of the rows R (a dense buffer of length d per row).
void gram_rows(const LinearData& x, const std::int64_t* rows, std::int64_t m, double* G);
// H[(d+1), (d+1)] += sum_t coef[t] [x; 1][x; 1]^T over x = x_{rows[t]} (upper triangle and
// the last column written).
void add_hessian(const LinearData& x, const std::int64_t* rows, const double* coef,
                 std::int64_t m, double* H);

// The exact line search of the Huber-smoothed primal (primal_newton.py): the root
// theta >= 0 of lin + theta ss - sum_i c_i l_h'(t_i - theta dm_i) dm_i (nondecreasing,
// piecewise linear) by safeguarded Newton steps, l_h' = clip(t / h, 0, 1); exact when
// theta = 1 meets the root.
struct LineStep {
    double theta = 1.0;
    bool exact = false;
};
LineStep huber_line_step(const double* t, const double* dm, const double* c, std::int64_t n,
                         double h, double lin, double ss, double scale);

// ---- dual coordinate descent (linear.cpp) ----

// The state of a coordinate-descent run between epochs: liblinear's bounds of the
// previous epoch's projected gradients (for shrinking), the augmented Lagrangian's
// multiplier and penalty for the intercept (b = lam + rho (sum - delta)), the running
// y^T alpha (or sum beta) and the random generator's state (xorshift64*).
struct CDState {
    double pg_max_old = 1.0 / 0.0;
    double pg_min_old = -1.0 / 0.0;
    double lam = 0.0;
    double rho = 0.0;
    double sum = 0.0;
    std::uint64_t rng = 1;
};

// What one epoch leaves: the active size and the extreme projected gradients (for the
// tube: the largest violation in pg_max, pg_min = 0).
struct EpochResult {
    std::int64_t active = 0;
    double pg_max = 0.0, pg_min = 0.0;
};

// Columns of a variable's record (one cache line a variable): margin (y, p, u, D, Q+D);
// tube (z, eps, u, D, ||x||^2 + D).
constexpr int REC_WIDTH = 5;

// The variables of an epoch: span[t] = (lo, hi) of its row in x's data, its record,
// its value, the visiting order and the intercept's equality (sum = delta).
struct EpochArrays {
    const std::int64_t* span = nullptr;
    const double* rec = nullptr;
    double* value = nullptr;
    double* w = nullptr;
    std::int64_t* order = nullptr;
    std::int64_t m = 0;
};

// One epoch of liblinear's dual CD over standard-form variables (C-SVC, hinge and
// squared hinge; solve_l2r_l1l2_svc).
EpochResult epoch_margin(const LinearData& x, const EpochArrays& v, std::int64_t active,
                         CDState& state, bool equality, double delta);
// One epoch of Ho and Lin's dual CD for eps-SVR in beta = a - a_hat (solve_l2r_l1l2_svr).
EpochResult epoch_tube(const LinearData& x, const EpochArrays& v, std::int64_t active,
                       CDState& state, bool equality, double delta);

// ---- the L1-regularized squared hinge, primal coordinate descent (linear.cpp) ----

// min_w ||w||_1 + sum_i C_i max(0, 1 - y_i w.x_i)^2 (liblinear's -s 5, solve_l1r_l2_svc:
// CDN, Chang, Hsieh and Lin 2008; Yuan, Chang, Hsieh and Lin 2010): one feature at a
// time, a Newton step on the smooth part with the L1 term's soft threshold and an
// Armijo line search; features whose zero weight looks optimal are shrunk between
// passes, as liblinear does.  The columns of X are read as the rows of `cols` (X^T),
// their entries multiplied by y_i on the fly.
struct L1Arrays {
    const double* y = nullptr;              // +-1, n samples
    const double* C = nullptr;              // C_i >= 0
    const double* col_sq = nullptr;         // sum_i C_i x_ij^2 of every feature j
    double* w = nullptr;                    // d features
    double* margin = nullptr;               // b_i = 1 - y_i w.x_i, kept with w
    std::int64_t* order = nullptr;          // the features, the active ones first
};

// A run's state between calls: the passes so far, liblinear's bound of the last pass's
// largest violation (shrinking), the first pass's summed violation (the scale of the
// stopping rule), the active features and the generator's state.
struct L1State {
    std::int64_t passes = 0;
    double gmax_old = 1.0 / 0.0;
    double gnorm1_init = -1.0;
    std::int64_t active = -1;               // -1: every feature
    std::uint64_t rng = 1;
};

// Passes until the summed violation is at most eps times the first pass's with every
// feature active, or max_passes passes in all; returns the last pass's summed violation.
double l1_squared_hinge(const LinearData& cols, const L1Arrays& a, L1State& state, double eps,
                        std::int64_t max_passes);

}  // namespace margin_opt
