// SMO for the standard dual QP (LIBSVM's algorithm, its concepts as classes):
//
//   min_a 1/2 a'Qa + p'a   s.t.  y'a = Delta (with the equality),  0 <= a_t <= u_t,
//   Q_ts = y_t y_s K(x_index[t], x_index[s]).
//
// KernelItems  kernel values K(item r, items [0, len)) of the run's data (LIBSVM's
//              Kernel): dense rows (a private copy), the dense transpose of CSR rows,
//              CSR rows themselves, or a given kernel matrix; items can be swapped.
// RowCache     least-recently-used rows within a byte budget (LIBSVM's Cache).
// QRows        Q's rows at the solver's positions (LIBSVM's SVC_Q / SVR_Q): one item per
//              variable (C-SVC, the pairs of one-vs-one), or data rows shared by several
//              variables through `index` (epsilon-SVR's 2n variables).
// Solver       working-set selection, the pair update, shrinking and the gradient's
//              reconstruction (LIBSVM's Solver); greedy coordinate descent where there
//              is no equality (no intercept).  The Newton polish of the free set and
//              the phases of a run are the Python driver's (solvers/smo/driver.py).
//              With SolverSettings::two_equalities it is LIBSVM's Solver_NU: e'a is held
//              as well (nu-SVC, nu-SVR), pairs are chosen within one sign of y, shrinking
//              compares each variable with its own sign's extremes, and nu_rho() reads
//              out rho and r.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "kernel.hpp"

namespace margin_opt {

// Where an SMO run's kernel values come from: a named kernel on data rows, or a given
// n x n kernel matrix (row-major; gram != nullptr).
struct KernelSource {
    KernelSpec kernel;
    RowsView rows;
    const double* gram = nullptr;
    std::int64_t n = 0;                      // data rows
    double dense_budget = 0.0;               // bytes allowed for a dense transpose of CSR rows
};

// The standard dual QP's arrays, in the caller's variable order (copied by the solver).
struct DualArrays {
    std::int64_t m = 0;
    const double* y = nullptr;               // +-1
    const double* p = nullptr;
    const double* upper = nullptr;           // may hold +inf
    const std::int64_t* index = nullptr;     // data row of each variable
    const double* alpha0 = nullptr;          // a feasible start
    bool equality = true;
    double delta = 0.0;                      // y'a = delta (with the equality)
};

// What a run does; set by the caller once (the tolerance and the limits are run()'s).
struct SolverSettings {
    bool second_order = true;                // Fan-Chen-Lin WSS 2, else the maximal violating pair
    bool shrinking = true;
    double cache_bytes = 200.0 * (1 << 20);
    int threads = 1;                         // kernel rows of ROW_SPLIT_MIN entries or more
    double alpha_cap = 1e12;                 // a multiplier above it: the dual diverges
    std::int64_t stall_window = 100000;      // m - M must halve within this many iterations
    // LIBSVM's Solver_NU: e'a = sum of the start's a is held too (needs the equality)
    bool two_equalities = false;
};

// The dense transpose of CSR rows is kept in single precision from this size on where
// every value is a single-precision number (binary features, counts, float32 data): the
// same kernel values, half the memory traffic.
constexpr double NARROW_MIN_BYTES = 4.0 * (1 << 20);
// The cache is re-cut (packed) once the active positions are at most this many tenths of
// a row's slots.
constexpr std::int64_t REPACK_TENTHS = 7;
// A row is computed tile by tile of this many entries (4 KB: its sums stay in L1).
constexpr std::int64_t ROW_TILE = 512;
// Rows at least this long are split over the threads (docs/performance.md: at 4096, the
// rows of n = 5000 split; 10 % faster alone, 1.6x slower in a process where oneDAL's
// threads had just run).
constexpr std::int64_t ROW_SPLIT_MIN = 8192;
// A row asked for on the active set is computed whole where the active set holds more
// than this many eighths of the positions.
constexpr std::int64_t WHOLE_ROW_EIGHTHS = 7;
// LIBSVM's tau: the smallest curvature of a pair step.
constexpr double TAU = 1e-12;
// The relative duality gap's smallest scale (margin_opt.kkt.GAP_FLOOR: the smallest
// normal double).
constexpr double GAP_FLOOR = std::numeric_limits<double>::min();

enum RunCode : int { R_OPTIMAL = 0, R_MAX_ITER = 1, R_CHUNK = 2, R_STALLED = 3, R_CAP = 4 };

// Some columns of K: the data rows `rows`, with (where kernel rows are sums over a
// transpose) that transpose's columns copied contiguous, and their squared norms.
struct Columns {
    std::vector<std::int64_t> rows;
    std::vector<double> XT;                  // d x count
    std::vector<float> XTf;                  // the same in single precision (where narrow)
    std::vector<double> sq;
    std::int64_t count = 0;
    std::uint64_t stamp = ~std::uint64_t{0};  // the positions' order it was taken in
    std::int64_t lo = -1;                    // the first position it covers
};

// Kernel values of the run's data (LIBSVM's Kernel): K(x_r, x_s) for data rows r, s,
// from dense rows (a private copy, centred for RBF, with its transpose), the dense
// transpose of CSR rows, CSR rows themselves, or a given kernel matrix.
class KernelItems {
  public:
    explicit KernelItems(const KernelSource& src);
    // out[s] = K(x_r, x_s) for every data row s, split over `threads`.
    void whole_row(std::int64_t r, double* out, int threads) const;
    // `cols` made the columns of the data rows rows[0 .. count).
    void gather(const std::int64_t* rows, std::int64_t count, Columns* cols) const;
    // out[k] = K(x_r, x_{cols.rows[k]}) for k < cols.count, split over `threads`.
    void row_on(std::int64_t r, const Columns& cols, double* out, int threads) const;
    // K(x_r, x_r) for every data row.
    std::vector<double> diagonal() const;
    std::int64_t size() const { return n_; }
    const char* layout() const;
    // Row r of a given kernel matrix, read in place (nullptr where the values are computed).
    const double* given_row(std::int64_t r) const {
        return gram_ == nullptr ? nullptr : gram_ + r * n_;
    }

  private:
    enum Layout { DENSE, SPARSE_T, SPARSE, GRAM };
    // out[k] for k in [lo, hi): the columns of XT (leading dimension ld), their squared
    // norms sq and data rows `rows` (nullptr: the data rows themselves).
    // (XT or, where narrow, XTf: the same columns in single precision)
    void range(std::int64_t r, const double* XT, const float* XTf, std::int64_t ld,
               const double* sq, const std::int64_t* rows, std::int64_t lo, std::int64_t hi,
               double* out) const;
    void split(std::int64_t r, const double* XT, const float* XTf, std::int64_t ld,
               const double* sq, const std::int64_t* rows, std::int64_t count, double* out,
               int threads) const;
    double direct_d2(std::int64_t a, std::int64_t b) const;
    KernelSpec kernel_;
    RowsView rows_;
    const double* gram_ = nullptr;
    Layout layout_ = DENSE;
    std::int64_t n_ = 0, d_ = 0;
    std::vector<double> X_;                  // DENSE: the rows (centred for RBF)
    std::vector<double> XT_;                 // DENSE, SPARSE_T: the transpose, d x n
    std::vector<float> XTf_;                 // SPARSE_T where narrow: in single precision
    bool narrow_ = false;
    std::vector<double> sq_;                 // squared norms (of the centred rows)
};

// Where a kernel row's value for position k is: K[at[k]].
struct RowRef {
    const double* K;
    const std::int64_t* at;
};

// Rows of K, least-recently-used within a byte budget (LIBSVM's Cache, without its
// per-swap edits: rows are read through a map from positions to slots).
class RowCache {
  public:
    RowCache(std::int64_t n_keys, std::int64_t row_len, double budget_bytes);
    // The row of `key`; *valid: what of it holds values (NONE, FULL, or the generation of
    // the active set it was computed on).
    double* get(std::int64_t key, std::int64_t** valid);
    // Rows re-cut to new_len slots: new[s] = old[from[s]] for the rows whose `valid` keep()
    // accepts (they become `valid_as`), the others dropped.
    template <class Keep>
    void recut(std::int64_t new_len, const std::int64_t* from, Keep keep, std::int64_t valid_as);
    // Rows the budget holds at the current length.
    std::int64_t capacity() const { return capacity_; }
    std::int64_t hits = 0, misses = 0, recuts = 0;
    static constexpr std::int64_t NONE = -2, FULL = -1;

  private:
    struct Entry {
        std::unique_ptr<double[]> data;
        std::int64_t valid = NONE;
        std::int64_t prev = -1, next = -1;   // LRU list
    };
    void unlink(std::int64_t k);
    void push_back(std::int64_t k);
    void set_capacity();
    std::vector<Entry> rows_;
    std::int64_t row_len_, capacity_ = 2, used_ = 0;
    double budget_;
    std::int64_t head_ = -1, tail_ = -1;     // least and most recently used
};

// Kernel rows for the solver's positions (LIBSVM's SVC_Q / SVR_Q): each position reads
// the row of its data row (`index`: one per variable for C-SVC, two for epsilon-SVR's 2n
// variables).  Rows are computed whole while most positions are active, else on the
// active positions only; once shrinking has left at most half of a row's slots active
// and the free variables' rows do not fit, the cache is re-cut to the active positions
// (packed: more rows in the same memory).
class QRows {
  public:
    QRows(const KernelSource& src, const DualArrays& qp, double cache_bytes);
    // K's row of position t, valid at positions [0, active) (every position with `full`).
    RowRef row(std::int64_t t, std::int64_t active, bool full, int threads);
    // K(position t, position s) for s in [lo, hi), at [s] of the returned row (valid
    // until the next call; not cached).
    const double* span(std::int64_t t, std::int64_t lo, std::int64_t hi, int threads);
    // After shrinking: packs the cache where `active` fills at most 7/10 of a row's slots
    // and the n_free free variables' rows do not fit whole.
    void shrunk(std::int64_t active, std::int64_t n_free);
    // The active set grew: rows computed on the active positions are no longer enough.
    void new_generation();
    void swap(std::int64_t i, std::int64_t j);
    const double* y() const { return y_.data(); }
    const double* diagonal() const { return QD_.data(); }
    std::int64_t hits() const { return cache_.hits; }
    std::int64_t misses() const { return cache_.misses; }
    std::int64_t recuts() const { return cache_.recuts; }
    const char* layout() const { return items_.layout(); }

  private:
    std::int64_t m_, n_;
    KernelItems items_;
    Columns active_cols_, span_cols_;        // the active positions' columns; a span's
    std::uint64_t stamp_ = 0;                // the positions' order (a swap moves it on)
    RowCache cache_;
    std::vector<double> y_, QD_, buf_, span_;
    std::vector<std::int64_t> data_at_;      // position -> data row
    std::vector<std::int64_t> slot_at_;      // position -> slot of a cached row
    std::vector<std::int64_t> slot_of_;      // data row -> slot (-1: none)
    std::int64_t width_;                     // slots of a cached row
    std::int64_t generation_ = 0;
};

// The nu mode's read-out (LIBSVM's Solver_NU::calculate_rho): r1 and r2, the gradient's
// level on the free variables of y = +1 and of y = -1; rho = (r1 - r2) / 2 is the
// multiplier of y'a (b = -rho) and r = (r1 + r2) / 2 that of e'a.
struct NuReadout {
    double rho = 0.0;
    double r = 0.0;
};

// I_up and I_low of each sign of y, by position (the nu mode's selection runs within
// one sign): the masks of Solver's up_ and low_ split by y.
struct SignMasks {
    std::vector<std::uint8_t> up_pos, low_pos, up_neg, low_neg;
};

class Solver {
  public:
    Solver(const KernelSource& src, const DualArrays& qp, const SolverSettings& settings);
    // Iterate until m - M <= tol (every variable active and its gradient exact), or the
    // iteration count reaches stop_at (R_CHUNK) or max_iter (R_MAX_ITER), or a stall;
    // where tol is reached with less work done (active variables summed over the
    // iterations) than min_work, go on to then_tol (negative: none; counters().last_gap
    // says which was reached).
    int run(double tol, std::int64_t max_iter, std::int64_t stop_at, double then_tol,
            double min_work);
    // Every variable active, its gradient reconstructed.
    void unshrink();
    // Sets a[v] = values[k] for the variables v = vars[k] (every variable made active
    // first), with the gradient's change dG = Q[:, vars] (values - a[vars]) given in the
    // caller's order (the caller computes it by the kernel engine); G_bar updated by Q's
    // rows for the variables that reach or leave their upper bound.
    void assign_with_gradient(const std::int64_t* vars, const double* values,
                              std::int64_t count, const double* dG);
    // out (rows x cols) = Q[rows, cols], variables in the caller's order.
    void q_block(const std::int64_t* rows, std::int64_t nr, const std::int64_t* cols,
                 std::int64_t nc, double* out);
    // a and the gradient in the caller's order.
    void read(double* alpha, double* grad) const;
    // LIBSVM's b = -rho (its calculate_rho): the mean of -y_t G_t over the free
    // variables, else the midpoint of the interval the bound ones leave (a zero bound
    // counts as the upper one; its finite end where the other is infinite); 0 without
    // the equality.  Sums in the caller's order;
    // every variable active (after unshrink).
    double intercept() const;
    // The nu mode's rho and r (LIBSVM's Solver_NU::calculate_rho): per sign of y, the mean
    // gradient over its free variables, else the midpoint of the interval its bound ones
    // leave (the finite end where one is infinite).  Sums in the caller's order; every
    // variable active.
    NuReadout nu_rho() const;
    // |P - D| / max(|P|, |D|, tiny) (margin_opt.kkt.relative_gap) of
    // P = 1/2 a'Qa + sum u_t xi_t + Delta b, xi_t = max(0, -(G_t + y_t b)) over the
    // finite u_t > 0 (Delta b: margin_opt.kkt.intercept_cost, 0 for C-SVC and
    // epsilon-SVR), and D = -(1/2 a'Qa + p'a), in O(m) from the gradient; every
    // variable active.  Two equalities: c is e'a's multiplier (-r of nu_rho(), b = -rho),
    // xi_t = max(0, -(G_t + y_t b + c)) and P gains Delta_2 c (Delta_2 = e'a).
    double relative_gap(double b, double c = 0.0) const;
    void set_threads(int threads) { settings_.threads = threads < 1 ? 1 : threads; }
    // The progress test starts afresh (after the caller moved a, e.g. by a Newton step).
    void reset_progress() { mark_gap_ = INFINITY; mark_iter_ = counters_.iterations; }

    struct Counters {
        std::int64_t iterations = 0, reconstructions = 0, shrinks = 0;
        double active_sum = 0.0;             // sum over iterations of the active set's size
        double last_gap = INFINITY;          // m - M at the last selection
    };
    const Counters& counters() const { return counters_; }
    std::int64_t active_size() const { return active_; }
    std::int64_t hits() const { return Q_.hits(); }
    std::int64_t recuts() const { return Q_.recuts(); }
    std::int64_t misses() const { return Q_.misses(); }
    const char* layout() const { return Q_.layout(); }
    bool two_equalities() const { return two_eq_; }

  private:
    bool is_upper(std::int64_t t) const { return alpha_[t] >= upper_[t]; }
    RowRef row(std::int64_t t, bool full = false) {
        return Q_.row(t, active_, full, settings_.threads);
    }
    bool is_lower(std::int64_t t) const { return alpha_[t] <= 0.0; }
    bool select_pair(double tol, std::int64_t* out_i, std::int64_t* out_j);
    // A working pair among some variables: i, its best j (-1: none), their m - M (-inf:
    // no i) and the pair's objective (WSS 2's decrease; first order: -gap).
    struct Candidate {
        std::int64_t i = -1, j = -1;
        double gap = -INFINITY, obj = INFINITY;
    };
    // The pair among the positions of the masks up (I_up) and low (I_low): every variable,
    // or one sign of y (the nu mode); known_gmax: the largest -F over up, where known.
    void select_within(const std::uint8_t* up, const std::uint8_t* low,
                       const double* known_gmax, Candidate* c);
    bool update_pair(std::int64_t i, std::int64_t j);
    int run_pairs(double tol, std::int64_t max_iter, std::int64_t stop_at);
    int run_coordinate(double tol, std::int64_t max_iter, std::int64_t stop_at);
    bool progress(double gap);
    void shrink();
    // The largest -F over I_up and F over I_low (of every variable, or of one sign of y).
    struct Extremes {
        double up = -INFINITY, low = -INFINITY;
    };
    bool be_shrunk(std::int64_t t, const Extremes& e) const;
    void swap(std::int64_t i, std::int64_t j);
    void reconstruct();
    void add_row(std::int64_t t, double c, bool to_bar, double bar_c);
    void initial_gradient();
    void set_status(std::int64_t t);

    SolverSettings settings_;
    QRows Q_;
    std::int64_t m_;
    bool equality_;
    double delta_;                           // the equality's right-hand side
    bool two_eq_;                            // nu mode (settings' two_equalities)
    double delta2_ = 0.0;                    // e'a (nu mode: the start's, held by every step)
    SignMasks signs_;                        // nu mode only
    const double* y_;                        // Q_'s y (swapped with the positions)
    const double* QD_;                       // Q's diagonal by position
    std::vector<std::int64_t> index_;        // the data row of each variable
    std::vector<double> alpha_;
    std::vector<double> F_, F_bar_;          // y * gradient, y * LIBSVM's G_bar
    std::vector<double> p_, upper_, yp_, obj_;
    std::vector<std::uint8_t> up_, low_;     // in I_up (a_t may move so that yG falls), I_low
    std::vector<std::int64_t> var_of_, pos_of_;   // position <-> the caller's variable
    std::int64_t active_;
    std::int64_t shrink_counter_;
    double switched_from_ = -1.0, switched_to_ = -1.0;   // run()'s last switch of tol
    bool fresh_ = false;                     // fresh_max_ is the largest -F over I_up now
    double fresh_max_ = -INFINITY;
    double mark_gap_ = INFINITY;             // the progress test's last mark
    std::int64_t mark_iter_ = 0;
    Counters counters_;
};

}  // namespace margin_opt
