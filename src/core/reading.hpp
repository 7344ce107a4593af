// The certificate's numbers of a C-SVC dual read from its answer alone (a one-vs-one
// pair's reading, margin_opt.kkt.dual_qp_reading): the decision values, the slacks, the
// per-variable conditions of the KKT checks and the counts of the support-vector table.
#pragma once

#include <cstdint>

namespace margin_opt {

// The numbers written to DualReading::num, in margin_opt.kkt.READING's order.
constexpr std::int64_t READING_SIZE = 15;

// min 1/2 b'Kb + p'a s.t. y'a = 0, 0 <= a <= up (b = y a; up may hold +inf), one variable
// per row of K (m x m, row-major, exactly symmetric), at the answer (alpha, b).
struct DualAnswer {
    const double* K = nullptr;
    std::int64_t m = 0;
    const double* y = nullptr;
    const double* p = nullptr;
    const double* up = nullptr;
    const double* alpha = nullptr;
    double b = 0.0;
};

// The tolerance, its category threshold and the relative support-vector threshold.
struct ReadingTolerances {
    double tol = 1e-3;
    double tau = 0.0;
    double sv_threshold = 0.0;
};

// Written: decision (m) = K b + b, xi (m) = the slacks, num (READING_SIZE).
struct DualReading {
    double* decision = nullptr;
    double* xi = nullptr;
    double* num = nullptr;
};

void dual_qp_reading(const DualAnswer& qp, const ReadingTolerances& tols, const DualReading& out);

}  // namespace margin_opt
