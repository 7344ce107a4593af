// The pairs of a one-vs-one fit solved on the core's threads (one_vs_one.hpp).

#include "one_vs_one.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>

#include "pool.hpp"

namespace margin_opt {

void PairBlocks::fill(std::int64_t i, std::int64_t j, double* out) const {
    if (classes != nullptr) {
        class_kernel_pair(*classes, i, j, out);
        return;
    }
    pair_block(K, n, BlockRuns{start[i], size[i], start[j], size[j]}, out);
}

namespace {

// One thread's scratch: the largest pair's block and arrays.
struct PairScratch {
    std::vector<double> block, y, p, up, alpha0;
    std::vector<std::int64_t> index;
};

// Pair q of the batch, solved into its answer slots.
void solve_one(PairBatch& b, std::int64_t q, const SolverSettings& settings,
               const PairStopping& stop, const ReadingTolerances* reading, PairScratch& s) {
    const std::int64_t i = b.pairs[2 * q], j = b.pairs[2 * q + 1];
    const std::int64_t ni = b.blocks.size[i], nj = b.blocks.size[j], m = ni + nj;
    const std::int64_t at = b.offset[q];
    double* stats = b.stats.data() + q * PAIR_STATS;
    std::fill(stats, stats + PAIR_STATS, 0.0);
    b.blocks.fill(i, j, s.block.data());
    for (std::int64_t t = 0; t < m; ++t) {
        const std::int64_t row = t < ni ? b.blocks.start[i] + t : b.blocks.start[j] + t - ni;
        s.y[t] = t < ni ? 1.0 : -1.0;
        s.up[t] = b.upper[row];
        s.p[t] = -1.0;
        s.alpha0[t] = 0.0;
        s.index[t] = t;
    }
    DualArrays qp;
    qp.m = m;
    qp.y = s.y.data();
    qp.p = s.p.data();
    qp.upper = s.up.data();
    qp.index = s.index.data();
    qp.alpha0 = s.alpha0.data();
    KernelSource src;
    src.gram = s.block.data();
    src.n = m;
    SolverSettings own = settings;
    own.stall_window = b.limits[q * PAIR_LIMITS + L_STALL_WINDOW];
    Solver solver(src, qp, own);
    const double then_tol = stop.phase > stop.tol ? stop.tol : -1.0;
    const std::int64_t max_iter = b.limits[q * PAIR_LIMITS + L_MAX_ITER];
    double* alpha = b.alpha.data() + at;
    double* grad = b.grad.data() + at;
    const Solver::Counters& c = solver.counters();
    double phase = stop.phase, floor = -1.0, bias = 0.0, rel_gap = 0.0;
    int code = solver.run(phase, max_iter, max_iter, then_tol, stop.min_work);
    if (phase > stop.tol && code == R_OPTIMAL && c.last_gap <= stop.tol)
        phase = stop.tol;                   // went on to tol in the run (no polish)
    for (;;) {
        solver.unshrink();
        solver.read(alpha, grad);
        bias = solver.intercept();
        rel_gap = solver.relative_gap(bias);
        // on only from tol with the gap test failing (else settled, or the driver's)
        if (code != R_OPTIMAL || c.last_gap > stop.tol || stop.gap_tol < 0.0 ||
            rel_gap <= stop.gap_tol)
            break;
        if (floor < 0.0) {
            double gmax = 0.0;
            for (std::int64_t t = 0; t < m; ++t) gmax = std::max(gmax, std::fabs(grad[t]));
            floor = stop.tol_floor * std::max(1.0, gmax);
        }
        if (phase <= floor) {
            code = R_STALLED;
            break;
        }
        const double shrink = std::min(stop.shrink_max,
                                       std::max(stop.shrink_min, stop.gap_aim * stop.gap_tol / rel_gap));
        phase = std::max(floor, std::min(phase, c.last_gap) * shrink);
        code = solver.run(phase, max_iter, max_iter, -1.0, stop.min_work);
    }
    stats[P_CODE] = code;
    stats[P_ITERATIONS] = static_cast<double>(c.iterations);
    stats[P_LAST_GAP] = c.last_gap;
    stats[P_B] = bias;
    stats[P_REL_GAP] = rel_gap;
    stats[P_HITS] = static_cast<double>(solver.hits());
    stats[P_RECONSTRUCTIONS] = static_cast<double>(c.reconstructions);
    stats[P_ACTIVE_SUM] = c.active_sum;
    const bool settled = code == R_OPTIMAL && c.last_gap <= stop.tol &&
                         (stop.gap_tol < 0.0 || rel_gap <= stop.gap_tol);
    stats[P_SETTLED] = settled ? 1.0 : 0.0;
    if (!settled || reading == nullptr || !std::isfinite(bias)) return;
    for (std::int64_t t = 0; t < m; ++t)
        if (!std::isfinite(alpha[t])) return;
    DualAnswer ans;
    ans.K = s.block.data();
    ans.m = m;
    ans.y = s.y.data();
    ans.p = s.p.data();
    ans.up = s.up.data();
    ans.alpha = alpha;
    ans.b = bias;
    dual_qp_reading(ans, *reading,
                    DualReading{b.decision.data() + at, b.xi.data() + at,
                                b.num.data() + q * READING_SIZE});
}

}  // namespace

void solve_pairs(PairBatch& batch, std::int64_t first, std::int64_t last,
                 const SolverSettings& settings, const PairStopping& stop,
                 const ReadingTolerances* reading, int threads) {
    std::int64_t largest = 0;
    for (std::int64_t q = first; q < last; ++q)
        largest = std::max(largest, batch.offset[q + 1] - batch.offset[q]);
    SolverSettings one = settings;
    one.threads = 1;                        // a pair on one thread: answers thread-free
    for (std::int64_t q = first; q < last; ++q)       // unsettled until solved
        std::fill_n(batch.stats.data() + q * PAIR_STATS, PAIR_STATS, 0.0);
    std::atomic<std::int64_t> next{first};
    const int nthr = static_cast<int>(std::max<std::int64_t>(
        1, std::min<std::int64_t>(threads, last - first)));
    parallel_for(nthr, [&](int) {
        PairScratch s;
        try {
            s.block.resize(static_cast<std::size_t>(largest * largest));
            for (auto* v : {&s.y, &s.p, &s.up, &s.alpha0}) v->resize(largest);
            s.index.resize(largest);
        } catch (const std::exception&) {
            return;                         // no room: the pairs stay unsettled
        }
        for (std::int64_t q = next++; q < last; q = next++) {
            try {
                solve_one(batch, q, one, stop, reading, s);
            } catch (const std::exception&) {
                batch.stats[q * PAIR_STATS + P_SETTLED] = 0.0;   // the driver will say why
            }
        }
    });
}

}  // namespace margin_opt
