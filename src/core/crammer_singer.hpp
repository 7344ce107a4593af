// The sequential dual method for the Crammer-Singer multiclass SVM (Keerthi et al. 2008),
// W kept explicitly, on linear.hpp's rows.
//
// The dual in liblinear's variables beta = C Y - lambda: min 1/2 sum_r ||w_r||^2 -
// sum_i beta_{i y_i}, w_r = sum_i beta_ir x_i, beta_ir <= C_i delta_{y_i r}, sum_r beta_ir = 0.
// Each visit solves one sample's sub-problem over its active classes exactly (Crammer and
// Singer 2001, section 6); passes visit the samples in random blocks, shrink, and (once the
// active set is settled) follow each pass by an exact step in the span of the last passes'
// displacements.  With intercepts (the method of multipliers) the gradients carry
// b_r + rho s_r, s = sum_i beta_i, and A_i = ||x_i||^2 + rho.  The Python driver
// (margin_opt/solvers/linear/crammer_singer.py) holds the outer loop.
#pragma once

#include <cstdint>

#include "linear.hpp"

namespace margin_opt {

// The per-sample arrays, one row each (row-major): the label y_i in [0, k), the weight C_i
// (beta_{i y_i} <= C_i), the curvature A_i = ||x_i||^2 + rho, beta (n x k), and the active
// classes cls (n x k, int32: row i's first n_cls[i] entries; the identity while
// n_cls[i] = k).
struct CSSamples {
    const std::int64_t* y = nullptr;
    const double* C = nullptr;
    const double* A = nullptr;
    double* beta = nullptr;
    std::int32_t* cls = nullptr;
    std::int64_t* n_cls = nullptr;
    std::int64_t n = 0, k = 0;
};

// What the passes move besides beta: W (d x k, row-major) = sum_i x_i beta_i^T, the
// intercepts' multiplier estimate b (k, read) and the class sums s = sum_i beta_i (k).
struct CSModel {
    double* W = nullptr;
    const double* b = nullptr;
    double* s = nullptr;
};

// The shrinking state carried from call to call: order[0, n_active) the samples not
// shrunk, whether that is all of them since the last restore (full), the shrinking
// tolerance, and the sample order's random generator (xorshift64*).
struct CSState {
    std::int64_t n_active = 0;
    double eps_shrink = 1.0;
    bool full = true;
    std::uint64_t rng = 1;
};

// One call's settings (CSOptions in the driver): the intercepts' penalty rho, the stop
// (a full pass with violation <= eps), the shrinking tolerance's decay, the passes
// allowed, the sample order's block, and the subspace steps' history (0, 1 or 2), reach,
// guard, width and patience.
struct CSSettings {
    double rho = 0.0;
    bool shrinking = true;
    double eps = 1e-3;
    double decay = 0.5;
    std::int64_t max_passes = 1;
    std::int64_t block = 16;
    std::int64_t history = 0;
    double reach = 2.0;
    double guard = 4.0;
    double width = 1.0;
    std::int64_t patience = 20;
};

// What a call leaves: the passes made, the last pass's violation, whether a full pass met
// eps, and the restores of shrunk variables.
struct CSPassResult {
    std::int64_t passes = 0;
    double violation = 0.0;
    bool converged = false;
    std::int64_t restores = 0;
};

// (primal, dual, max violation) at (W, b, beta).
struct CSObjectives {
    double primal = 0.0, dual = 0.0, violation = 0.0;
};

// Passes over the samples order[0, state.n_active) (order[0, n_free) the samples that
// move) until a full pass has violation <= settings.eps, or settings.max_passes; state is
// left as the next call goes on from (after a converged call, the shrinking tolerance
// already lowered by decay).
CSPassResult cs_passes(const LinearData& x, const CSSamples& samples, const CSModel& model,
                       std::int64_t* order, std::int64_t n_free, CSState& state,
                       const CSSettings& settings);

// W (d x k) = sum_i x_i beta_i^T.
void cs_weights(const LinearData& x, const double* beta, std::int64_t k, double* W);

// The primal and dual objectives and the max violation at (W, b, beta); f = X W + b, the
// slacks from f; samples with C_i <= 0 add only to the dual's linear term.
CSObjectives cs_objectives(const LinearData& x, const std::int64_t* y, const double* C,
                           const double* beta, std::int64_t k, const double* W, const double* b);

// The passes' random order of order[0, n) (entries in [0, n_samples)): block = 1 a
// uniform permutation; else the sorted entries cut into blocks of `block` consecutive
// ones, the blocks in a uniformly random order.
void cs_shuffle(std::int64_t* order, std::int64_t n, std::int64_t block, std::uint64_t& rng,
                std::int64_t n_samples);

}  // namespace margin_opt
