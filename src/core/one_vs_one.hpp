// The pairs of a one-vs-one fit (LIBSVM's svm_train loop over the class pairs, §7 of its
// paper), solved on the core's threads: each pair's kernel block, SMO on it to the
// driver's first stop, its intercept and duality gap, and its certificate's reading.
// A pair that does not settle there (a polish stop above tol, a stall, the iteration
// limit, a duality gap above gap_tol, a failure) is marked and left to the Python
// driver (solvers/smo/driver.py), which solves it whole.  Each pair runs on one thread,
// so the answers do not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "kernel.hpp"
#include "reading.hpp"
#include "smo.hpp"

namespace margin_opt {

// Where the pairs' kernel blocks come from: the classes' kernel of dense rows, or the
// class-grouped kernel matrix K (n x n, row-major, exactly symmetric).
struct PairBlocks {
    const ClassKernel* classes = nullptr;
    const double* K = nullptr;               // where classes is nullptr
    std::int64_t n = 0;
    std::vector<std::int64_t> start, size;   // each class's rows
    // out (m x m, m = size[i] + size[j]) = the block of class i's rows then class j's.
    void fill(std::int64_t i, std::int64_t j, double* out) const;
};

// The driver's first stop (driver._SMORun.solve): SMO to `phase` (a polish stop, or
// tol), on to tol in the same run where the work so far is below min_work; settled
// where m - M <= tol and the relative duality gap <= gap_tol (negative: no gap test).
// Where the gap test fails, m - M is tightened as the driver does: the next target is
// max(floor, min(target, last m - M) * clip(gap_aim gap_tol / gap, shrink_min,
// shrink_max)), floor = tol_floor max(1, max|G|); at the floor the pair is left to the
// driver.  Each pair's iteration limit and stall window are the batch's `limits`.
struct PairStopping {
    double phase = 1e-3, tol = 1e-3, gap_tol = -1.0;
    double min_work = 0.0;
    double tol_floor = 1e-15, gap_aim = 0.8, shrink_min = 0.25, shrink_max = 0.5;
};

// What PairBatch::limits holds for each pair (the driver's rules for its size).
enum PairLimit : int { L_MAX_ITER = 0, L_STALL_WINDOW, PAIR_LIMITS };

// What each pair's answer holds in PairBatch::stats (one row of PAIR_STATS per pair).
enum PairStat : int {
    P_SETTLED = 0,        // 1: the answer is the driver's; 0: left to the driver
    P_CODE,               // the run's RunCode
    P_ITERATIONS,
    P_LAST_GAP,           // m - M at the last selection
    P_B,                  // the intercept
    P_REL_GAP,
    P_HITS,
    P_RECONSTRUCTIONS,
    P_ACTIVE_SUM,
    PAIR_STATS
};

// The pairs (i, j) of a fit (class i's rows +1, class j's -1; p = -1, u_t = upper of the
// row) and their answers, concatenated in pair order (pair q's entries from offset[q]).
struct PairBatch {
    PairBlocks blocks;
    std::vector<std::int64_t> pairs;         // count x 2
    std::vector<double> upper;               // n, the blocks' row order
    std::vector<std::int64_t> offset;        // count + 1
    std::vector<std::int64_t> limits;        // count x PAIR_LIMITS
    std::vector<double> alpha, grad, decision, xi;   // offset.back()
    std::vector<double> num;                 // count x READING_SIZE
    std::vector<double> stats;               // count x PAIR_STATS
    std::int64_t count() const { return static_cast<std::int64_t>(pairs.size() / 2); }
};

// Solves pairs [first, last) of `batch` over `threads` threads (pairs dealt one at a
// time to whichever thread is free); the reading where `reading` is given and the pair
// settled with finite a and b.
void solve_pairs(PairBatch& batch, std::int64_t first, std::int64_t last,
                 const SolverSettings& settings, const PairStopping& stop,
                 const ReadingTolerances* reading, int threads);

}  // namespace margin_opt
