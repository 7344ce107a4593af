// The Crammer-Singer sequential dual method's passes (crammer_singer.hpp), one template
// instance per row layout.  A port of the numba kernels it replaces: the same visiting
// order (xorshift64*, blocks), the same shrinking, sub-problems and subspace steps.
#include "crammer_singer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace margin_opt {

namespace {

constexpr double INF = std::numeric_limits<double>::infinity();

using i64 = std::int64_t;

// An uninitialized buffer of n doubles (every entry is written before it is read).
std::unique_ptr<double[]> scratch(i64 n) {
    return std::unique_ptr<double[]>(new double[n > 0 ? n : 1]);
}

// G[c] = x_i . W[:, cls[c]] for the na active classes.  With all classes active (na = k)
// cls is the identity (nothing was shrunk since the last restore) and W's rows are read
// directly, a contiguous loop.  The row is read four entries at a time (a dense row skips
// four zeros together): each G[c] then waits on one store-to-load chain per four entries
// instead of one per entry (digits / 16, 2-3 active classes a sample: a pass ~1.4x faster
// than one entry at a time, the numba code's pairs ~1.15x).
template <class R>
inline void row_gradient(const R& x, i64 i, const double* W, i64 k, const std::int32_t* cls,
                         i64 na, double* __restrict G) {
    for (i64 c = 0; c < na; ++c) G[c] = 0.0;
    const i64 lo = x.lo(i), hi = x.hi(i);
    if constexpr (R::dense) {
        i64 p = lo;
        for (; p + 3 < hi; p += 4) {
            const double v0 = x.data[p], v1 = x.data[p + 1], v2 = x.data[p + 2],
                         v3 = x.data[p + 3];
            if (v0 == 0.0 && v1 == 0.0 && v2 == 0.0 && v3 == 0.0) continue;
            const double* r0 = W + (p - lo) * k;
            const double* r1 = r0 + k;
            const double* r2 = r1 + k;
            const double* r3 = r2 + k;
            if (na == k) {
                for (i64 c = 0; c < k; ++c)
                    G[c] += (v0 * r0[c] + v1 * r1[c]) + (v2 * r2[c] + v3 * r3[c]);
            } else {
                for (i64 c = 0; c < na; ++c) {
                    const i64 m = cls[c];
                    G[c] += (v0 * r0[m] + v1 * r1[m]) + (v2 * r2[m] + v3 * r3[m]);
                }
            }
        }
        for (; p < hi; ++p) {
            const double v = x.data[p];
            if (v == 0.0) continue;
            const double* row = W + (p - lo) * k;
            for (i64 c = 0; c < na; ++c) G[c] += v * row[na == k ? c : cls[c]];
        }
    } else {
        // every class (na == k: column c) or the active ones (column cls[c]), four nonzeros
        // per sweep; one body, instantiated for each case (the indirection costs in the
        // first: with 2-3 active classes the adds to G wait on each other)
        auto sweep = [&](auto every) {
            constexpr bool ALL = decltype(every)::value;
            i64 p = lo;
            for (; p + 3 < hi; p += 4) {
                const double v0 = x.data[p], v1 = x.data[p + 1], v2 = x.data[p + 2],
                             v3 = x.data[p + 3];
                const double* r0 = W + static_cast<i64>(x.indices[p]) * k;
                const double* r1 = W + static_cast<i64>(x.indices[p + 1]) * k;
                const double* r2 = W + static_cast<i64>(x.indices[p + 2]) * k;
                const double* r3 = W + static_cast<i64>(x.indices[p + 3]) * k;
                for (i64 c = 0; c < na; ++c) {
                    const i64 m = ALL ? c : cls[c];
                    G[c] += (v0 * r0[m] + v1 * r1[m]) + (v2 * r2[m] + v3 * r3[m]);
                }
            }
            for (; p < hi; ++p) {
                const double v = x.data[p];
                const double* row = W + static_cast<i64>(x.indices[p]) * k;
                for (i64 c = 0; c < na; ++c) G[c] += v * row[ALL ? c : cls[c]];
            }
        };
        if (na == k)
            sweep(std::true_type{});
        else
            sweep(std::false_type{});
    }
}

// W[:, changed[c]] += delta[c] x_i.
template <class R>
inline void row_update(const R& x, i64 i, double* W, i64 k, const i64* changed,
                       const double* delta, i64 nch) {
    const i64 lo = x.lo(i), hi = x.hi(i);
    for (i64 p = lo; p < hi; ++p) {
        const double v = x.data[p];
        if constexpr (R::dense)
            if (v == 0.0) continue;
        double* row = W + x.column(p, lo) * k;
        for (i64 c = 0; c < nch; ++c) row[changed[c]] += delta[c] * v;
    }
}

// The exact minimizer of 1/2 A ||beta||^2 + B^T beta over na classes, beta_c <= Ci
// delta_{c, ypos}, with sum beta = 0 when the label's class is among them (ypos >= 0),
// else sum beta = -Ci (its beta then fixed at Ci): in both cases theta = (sum of the top r
// D - A Ci) / r, D = B + A Ci delta_{c, ypos} sorted in decreasing order.
inline void sub_problem(double A, double Ci, i64 ypos, const double* B, i64 na, double* D,
                        double* out) {
    for (i64 c = 0; c < na; ++c) D[c] = B[c];
    if (ypos >= 0) D[ypos] += A * Ci;
    for (i64 c = 1; c < na; ++c) {     // insertion sort, descending (na: the classes)
        const double v = D[c];
        i64 p = c - 1;
        while (p >= 0 && D[p] < v) {
            D[p + 1] = D[p];
            --p;
        }
        D[p + 1] = v;
    }
    double theta = D[0] - A * Ci;
    i64 r = 1;
    while (r < na && theta < static_cast<double>(r) * D[r]) {
        theta += D[r];
        ++r;
    }
    theta /= static_cast<double>(r);
    for (i64 c = 0; c < na; ++c) {
        const double upper = c == ypos ? Ci : 0.0;
        const double v = (theta - B[c]) / A;
        out[c] = v < upper ? v : upper;
    }
}

// A pseudo-random integer in [0, t] (xorshift64*).
inline i64 rand_upto(std::uint64_t& state, i64 t) {
    std::uint64_t x = state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    state = x;
    const std::uint64_t r = (x * 2685821657736338717ULL) >> 33;
    return static_cast<i64>(r % static_cast<std::uint64_t>(t + 1));
}

// A random order of order[0, n) by blocks (cs_shuffle); tmp: 2n entries of scratch; mark:
// n_mark zero flags (one per possible entry), left zero.  The entries are sorted by
// flagging them and reading the flags in order (O(n_mark) sequential steps), by a
// comparison sort where n is small beside n_mark.
void shuffle(i64* order, i64 n, std::uint64_t& rng, i64 block, i64* tmp, unsigned char* mark,
             i64 n_mark) {
    const i64 nb = block == 1 ? n : (n + block - 1) / block;
    i64* perm = order;
    if (block > 1) {
        if (16 * n < n_mark) {
            std::sort(order, order + n);
        } else {
            for (i64 t = 0; t < n; ++t) mark[order[t]] = 1;
            i64 t = 0;
            for (i64 i = 0; i < n_mark; ++i)
                if (mark[i]) {
                    mark[i] = 0;
                    order[t++] = i;
                }
        }
        perm = tmp;
        for (i64 c = 0; c < nb; ++c) tmp[c] = c;
    }
    for (i64 t = nb - 1; t > 0; --t) std::swap(perm[t], perm[rand_upto(rng, t)]);
    if (block > 1) {
        i64 p = n;
        for (i64 c = 0; c < nb; ++c) {
            const i64 lo = tmp[c] * block, hi = std::min(lo + block, n);
            for (i64 t = lo; t < hi; ++t) tmp[p++] = order[t];
        }
        for (i64 t = 0; t < n; ++t) order[t] = tmp[n + t];
    }
}

// Every class of the samples order[0, n_free) back.
void restore(const i64* order, i64 n_free, std::int32_t* cls, i64* n_cls, i64 k) {
    for (i64 t = 0; t < n_free; ++t) {
        const i64 i = order[t];
        n_cls[i] = k;
        for (i64 c = 0; c < k; ++c) cls[i * k + c] = static_cast<std::int32_t>(c);
    }
}

// t = -(H + eps I)^-1 g for the leading nd x nd block (Cholesky; eps a rounding-size
// ridge).  False when H is not numerically positive definite.
bool small_solve(const double (&H)[3][3], const double* g, i64 nd, double* t) {
    double L[3][3] = {};
    const double ridge = 1e-12 * std::max(H[0][0], 1e-300);
    for (i64 a = 0; a < nd; ++a)
        for (i64 c = 0; c <= a; ++c) {
            double v = H[a][c] + (a == c ? ridge : 0.0);
            for (i64 q = 0; q < c; ++q) v -= L[a][q] * L[c][q];
            if (a == c) {
                if (!(v > 1e-14 * (H[a][a] + ridge))) return false;
                L[a][a] = std::sqrt(v);
            } else {
                L[a][c] = v / L[c][c];
            }
        }
    for (i64 a = 0; a < nd; ++a) {             // L z = -g
        double v = -g[a];
        for (i64 q = 0; q < a; ++q) v -= L[a][q] * t[q];
        t[a] = v / L[a][a];
    }
    for (i64 a = nd - 1; a >= 0; --a) {        // L^T t = z
        double v = t[a];
        for (i64 q = a + 1; q < nd; ++q) v -= L[q][a] * t[q];
        t[a] = v / L[a][a];
    }
    return true;
}

// One call of the passes: its scratch and the subspace steps' history.
template <class R>
class Passes {
public:
    Passes(const R& x, const CSSamples& sm, const CSModel& md, i64* order, i64 n_free,
           const CSSettings& set)
        : x_(x), sm_(sm), md_(md), order_(order), n_free_(n_free), set_(set), k_(sm.k),
          dk_(x.d * sm.k), G_(k_), B_(k_), D_(k_), new_(k_), delta_(k_), changed_(k_),
          tmp_(set.block > 1 ? 2 * n_free : 0), smark_(set.block > 1 ? sm.n : 0, 0),
          gone_(n_free), nslot_(set.history > 0 ? set.history + 1 : 0) {
        if (nslot_ > 0) {
            Wp_ = scratch(dk_);
            HW_ = scratch(nslot_ * dk_);
            GH_.assign(static_cast<std::size_t>(nslot_ * nslot_), 0.0);
            mark_.assign(static_cast<std::size_t>(sm.n), 0);
            vis_.resize(static_cast<std::size_t>(sm.n));
            pos_.resize(static_cast<std::size_t>(sm.n));
            col_.resize(static_cast<std::size_t>(3 * k_));
        }
    }

    CSPassResult run(CSState& st);

private:
    std::pair<double, i64> one_pass(i64 n_active, i64 track);
    double extrapolate(i64 n_vis, const i64* slots, i64 nd);
    double* hd(i64 slot, i64 q) { return HD_.get() + (slot * cap_ + q) * k_; }

    const R& x_;
    const CSSamples& sm_;
    const CSModel& md_;
    i64* order_;
    const i64 n_free_;
    const CSSettings& set_;
    const i64 k_, dk_;
    std::vector<double> G_, B_, D_, new_, delta_;
    std::vector<i64> changed_, tmp_;
    std::vector<unsigned char> smark_;
    std::vector<i64> gone_;
    // the subspace steps: nslot_ displacements of beta on the visited samples (HD_,
    // slot x cap_ x k) and of W (HW_, slot x d x k), their Gram matrix GH_, W before the
    // pass (Wp_), the visited samples in increasing order (vis_) and their positions
    const i64 nslot_;
    std::unique_ptr<double[]> Wp_, HW_, HD_;
    i64 cap_ = 0;
    std::vector<double> GH_, col_;
    std::vector<unsigned char> mark_;
    std::vector<i64> vis_, pos_;
};

// One pass over order[0, n_active) (already shuffled); track >= 0: every change of beta_i
// is also added to HD[track, pos[i]].  Returns (max violation, n_active after shrinking).
template <class R>
std::pair<double, i64> Passes<R>::one_pass(i64 n_active, i64 track) {
    const i64 k = k_;
    const std::int64_t* y = sm_.y;
    const double *C = sm_.C, *A = sm_.A, *b = md_.b;
    double *beta = sm_.beta, *W = md_.W, *s = md_.s;
    const double rho = set_.rho;
    const bool shrinking = set_.shrinking;
    double *G = G_.data(), *B = B_.data(), *D = D_.data(), *nw = new_.data(),
           *delta = delta_.data();
    i64* changed = changed_.data();
    i64* gone = gone_.data();
    i64* order = order_;
    double max_viol = 0.0;
    i64 kept = 0, n_gone = 0;
    for (i64 t = 0; t < n_active; ++t) {
        const i64 i = order[t];
        i64 na = sm_.n_cls[i];
        std::int32_t* ci = sm_.cls + i * k;
        row_gradient(x_, i, W, k, ci, na, G);
        const i64 yi = y[i];
        const double Ci = C[i];
        double* bi = beta + i * k;
        i64 ypos = -1;
        double maxG = -INF, minG = INF;
        for (i64 c = 0; c < na; ++c) {
            const i64 m = ci[c];
            double g = G[c] + b[m] + rho * s[m];
            double upper = 0.0;
            if (m != yi) {
                g += 1.0;
            } else {
                ypos = c;
                upper = Ci;
            }
            G[c] = g;
            if (g > maxG) maxG = g;
            if (bi[m] < upper && g < minG) minG = g;
        }
        if (shrinking) {
            // a class at its bound with G below the free minimum leaves (safely); the
            // sample leaves when one class is left.  Counted first: most samples of a full
            // pass leave whole (beta_i = 0), with no compaction of their class list
            i64 keep = 0;
            for (i64 c = 0; c < na; ++c) {
                const i64 m = ci[c];
                if (!(bi[m] == (m == yi ? Ci : 0.0) && G[c] < minG)) ++keep;
            }
            if (keep <= 1) {
                sm_.n_cls[i] = keep;
                gone[n_gone++] = i;
                continue;
            }
            if (keep < na) {
                i64 w = 0;
                ypos = -1;
                for (i64 c = 0; c < na; ++c) {
                    const i64 m = ci[c];
                    if (!(bi[m] == (m == yi ? Ci : 0.0) && G[c] < minG)) {
                        ci[w] = static_cast<std::int32_t>(m);
                        G[w] = G[c];
                        if (m == yi) ypos = w;
                        ++w;
                    }
                }
                na = keep;
                sm_.n_cls[i] = na;
            }
        }
        order[kept++] = i;      // the visit order kept (kept <= t: order[t] is read)
        const double viol = maxG - minG;
        if (viol > max_viol) max_viol = viol;
        if (viol <= 1e-14 * (1.0 + std::fabs(maxG))) continue;
        const double Ai = A[i];
        for (i64 c = 0; c < na; ++c) B[c] = G[c] - Ai * bi[ci[c]];
        sub_problem(Ai, Ci, ypos, B, na, D, nw);
        i64 nch = 0;
        double* hdi = track >= 0 ? hd(track, pos_[i]) : nullptr;
        for (i64 c = 0; c < na; ++c) {
            const i64 m = ci[c];
            const double d = nw[c] - bi[m];
            if (d != 0.0) {
                bi[m] = nw[c];
                changed[nch] = m;
                delta[nch] = d;
                ++nch;
                s[m] += d;
                if (hdi) hdi[m] += d;
            }
        }
        if (nch > 0) row_update(x_, i, W, k, changed, delta, nch);
    }
    for (i64 t = 0; t < n_gone; ++t) order[kept + t] = gone[t];
    return {max_viol, kept};
}

// One exact step in the span of the last nd passes' displacements (slot slots[a] the
// displacement a passes back, a = 0 the pass just made: its beta part accumulated by the
// pass, its W part W - Wp); returns its size.
//
// The dual on beta + sum_a t_a D_a is a quadratic in t whose curvature is the Gram matrix
// of the W displacements (plus rho ||sum_i D_i||^2 with intercepts) and whose slope is
// <W, .> less the label terms, so the minimizer costs one sweep over W (the Gram of the
// older displacements, GH, is carried along), no pass over the data.  A direction may move
// only free variables: a sample whose displaced variable sits at its bound leaves that
// direction (and its x_i term its W displacement).  The step is then shortened to stay in
// the box (a convex quadratic decreases all the way to its minimizer, so any such step
// descends) and to at most `reach` times the norm of the pass's W displacement.  The
// current slot's displacement absorbs the step, and its Gram entries are updated.
template <class R>
double Passes<R>::extrapolate(i64 n_vis, const i64* slots, i64 nd) {
    const i64 k = k_, dk = dk_;
    const std::int64_t* y = sm_.y;
    const double *C = sm_.C, *b = md_.b;
    double *beta = sm_.beta, *W = md_.W, *s = md_.s;
    const double rho = set_.rho;
    const i64* vis = vis_.data();
    double* HW = HW_.get();
    double* Wp = Wp_.get();
    double* GH = GH_.data();
    const i64 ns = nslot_;
    i64* changed = changed_.data();
    double* delta = delta_.data();
    const i64 cur = slots[0];
    double* col = col_.data();
    std::fill(col, col + nd * k, 0.0);
    double lin[3] = {0.0, 0.0, 0.0};
    bool dirty = false;
    for (i64 q = 0; q < n_vis; ++q) {
        const i64 i = vis[q];
        const i64 yi = y[i];
        const double Ci = C[i];
        const double* bi = beta + i * k;
        for (i64 a = 0; a < nd; ++a) {
            double* dq = hd(slots[a], q);
            bool bad = false;
            for (i64 m = 0; m < k; ++m)        // branch-free: most samples have no such entry
                bad |= (dq[m] != 0.0) & (bi[m] >= (m == yi ? Ci : 0.0));
            if (!bad) {
                lin[a] += dq[yi];
                for (i64 m = 0; m < k; ++m) col[a * k + m] += dq[m];
                continue;
            }
            i64 nch = 0;
            for (i64 m = 0; m < k; ++m) {
                if (dq[m] != 0.0) {
                    changed[nch] = m;
                    // the pass's own move goes into Wp (W - Wp then omits it); an older one
                    // is taken out of its W displacement
                    delta[nch] = a == 0 ? dq[m] : -dq[m];
                    ++nch;
                }
                dq[m] = 0.0;
            }
            row_update(x_, i, a == 0 ? Wp : HW + slots[a] * dk, k, changed, delta, nch);
            if (a > 0) dirty = true;
        }
    }
    double* u = HW + cur * dk;
    const double* h1 = HW + (nd > 1 ? slots[1] : cur) * dk;
    const double* h2 = HW + (nd > 2 ? slots[2] : cur) * dk;
    if (dirty)
        for (i64 a = 1; a < nd; ++a) {
            const double* ha = HW + slots[a] * dk;
            for (i64 c = 1; c <= a; ++c) {
                const double* hc = HW + slots[c] * dk;
                double v = 0.0;
#pragma omp simd reduction(+ : v)
                for (i64 e = 0; e < dk; ++e) v += ha[e] * hc[e];
                GH[slots[a] * ns + slots[c]] = v;
                GH[slots[c] * ns + slots[a]] = v;
            }
        }
    // u = W - Wp and its inner products (those with h1, h2 only where they are older
    // displacements: nd > 1, nd > 2)
    double uu = 0.0, wu = 0.0, uh1 = 0.0, uh2 = 0.0, wh1 = 0.0, wh2 = 0.0;
    if (nd == 1) {
#pragma omp simd reduction(+ : uu, wu)
        for (i64 e = 0; e < dk; ++e) {
            const double ue = W[e] - Wp[e], we = W[e];
            u[e] = ue;
            uu += ue * ue;
            wu += we * ue;
        }
    } else if (nd == 2) {
#pragma omp simd reduction(+ : uu, wu, uh1, wh1)
        for (i64 e = 0; e < dk; ++e) {
            const double ue = W[e] - Wp[e], we = W[e];
            u[e] = ue;
            uu += ue * ue;
            wu += we * ue;
            uh1 += ue * h1[e];
            wh1 += we * h1[e];
        }
    } else {
#pragma omp simd reduction(+ : uu, wu, uh1, wh1, uh2, wh2)
        for (i64 e = 0; e < dk; ++e) {
            const double ue = W[e] - Wp[e], we = W[e];
            u[e] = ue;
            uu += ue * ue;
            wu += we * ue;
            uh1 += ue * h1[e];
            wh1 += we * h1[e];
            uh2 += ue * h2[e];
            wh2 += we * h2[e];
        }
    }
    double Hw[3][3] = {};                      // the W part of the curvature
    Hw[0][0] = uu;
    const double wh[3] = {wu, wh1, wh2};
    const double uh[3] = {uu, uh1, uh2};
    for (i64 a = 1; a < nd; ++a) {
        Hw[0][a] = uh[a];
        Hw[a][0] = uh[a];
        for (i64 c = 1; c < nd; ++c) Hw[a][c] = GH[slots[a] * ns + slots[c]];
    }
    double H[3][3] = {};
    double g[3] = {0.0, 0.0, 0.0};
    for (i64 a = 0; a < nd; ++a) {
        double v = wh[a] - lin[a];
        for (i64 m = 0; m < k; ++m) v += (b[m] + rho * s[m]) * col[a * k + m];
        g[a] = v;
        for (i64 c = 0; c < nd; ++c) {
            double h = Hw[a][c];
            for (i64 m = 0; m < k; ++m) h += rho * col[a * k + m] * col[c * k + m];
            H[a][c] = h;
        }
    }
    const i64 nd_all = nd;
    GH[cur * ns + cur] = uu;       // the Gram entries of the pass's displacement (no step)
    for (i64 a = 1; a < nd_all; ++a) {
        GH[cur * ns + slots[a]] = uh[a];
        GH[slots[a] * ns + cur] = uh[a];
    }
    double tau[3] = {0.0, 0.0, 0.0};
    while (nd > 0 && !small_solve(H, g, nd, tau)) --nd;   // dependent: drop the oldest
    if (nd == 0) return 0.0;
    // no longer in W than `reach` times the pass's own move: a long step along a flat
    // direction of a degenerate dual lowers the objective by a rounding-size amount and
    // moves every margin by that much
    double step2 = 0.0;
    for (i64 a = 0; a < nd; ++a)
        for (i64 c = 0; c < nd; ++c) step2 += tau[a] * Hw[a][c] * tau[c];
    double alpha = 1.0;
    const double reach = set_.reach;
    if (step2 > reach * reach * uu) alpha = reach * std::sqrt(uu / step2);
    // the longest step that stays in the box
    double c0 = tau[0];
    double c1 = nd > 1 ? tau[1] : 0.0;
    double c2 = nd > 2 ? tau[2] : 0.0;
    double* D0 = hd(cur, 0);
    const double* D1 = hd(nd > 1 ? slots[1] : cur, 0);
    const double* D2 = hd(nd > 2 ? slots[2] : cur, 0);
    for (i64 q = 0; q < n_vis; ++q) {
        const i64 i = vis[q];
        const i64 yi = y[i];
        const double Ci = C[i];
        const double* bi = beta + i * k;
        const i64 o = q * k;
        for (i64 m = 0; m < k; ++m) {
            const double v = c0 * D0[o + m] + c1 * D1[o + m] + c2 * D2[o + m];
            const double room = (m == yi ? Ci : 0.0) - bi[m];
            // room / v < alpha without a division in the common case
            if (v > 0.0 && room < alpha * v) alpha = room / v;
        }
    }
    if (!(alpha > 0.0)) return 0.0;
    for (i64 q = 0; q < n_vis; ++q) {
        const i64 i = vis[q];
        const i64 yi = y[i];
        const double Ci = C[i];
        double* bi = beta + i * k;
        const i64 o = q * k;
        for (i64 m = 0; m < k; ++m) {      // branch-free: v = 0 leaves beta_im <= its bound
            const double v = alpha * (c0 * D0[o + m] + c1 * D1[o + m] + c2 * D2[o + m]);
            const double upper = m == yi ? Ci : 0.0;
            const double nb = bi[m] + v;
            bi[m] = nb < upper ? nb : upper;
            D0[o + m] += v;
        }
    }
    for (i64 m = 0; m < k; ++m) {
        double v = 0.0;
        for (i64 a = 0; a < nd; ++a) v += tau[a] * col[a * k + m];
        s[m] += alpha * v;
    }
    c0 *= alpha;
    c1 *= alpha;
    c2 *= alpha;
    if (nd == 1) {
        for (i64 e = 0; e < dk; ++e) {
            const double v = c0 * u[e];
            W[e] += v;
            u[e] += v;
        }
    } else {
        // h1, h2 are other slots than u's here (h2 is u's only with c2 = 0, read first)
        for (i64 e = 0; e < dk; ++e) {
            const double v = c0 * u[e] + c1 * h1[e] + c2 * h2[e];
            W[e] += v;
            u[e] += v;
        }
    }
    // the Gram entries of the current slot, now u + sum_a c_a h_a
    double coef[3] = {0.0, 0.0, 0.0};
    for (i64 a = 0; a < nd; ++a) coef[a] = alpha * tau[a];
    coef[0] += 1.0;
    for (i64 c = 1; c < nd_all; ++c) {
        double v = 0.0;
        for (i64 a = 0; a < nd; ++a) v += coef[a] * Hw[a][c];
        GH[cur * ns + slots[c]] = v;
        GH[slots[c] * ns + cur] = v;
    }
    double v = 0.0;
    for (i64 a = 0; a < nd; ++a)
        for (i64 c = 0; c < nd; ++c) v += coef[a] * Hw[a][c] * coef[c];
    GH[cur * ns + cur] = v;
    return alpha;
}

// Passes until a full pass has violation <= eps, or max_passes (crammer_singer.hpp).
//
// With history > 0 every pass over the shrunk set is followed by a subspace step on its
// displacement and up to `history` earlier ones (kept while the passes visit the same
// samples: cleared by a restore or when a sample is shrunk), until a pass's violation
// exceeds `guard` times the smallest one since the last restore (plain passes from then
// on: a degenerate dual near the rounding floor of its objective, where the steps move
// the margins by more than they gain), or `patience` passes in a row leave that smallest
// one unchanged (a pass and a step that undo each other).  A step is taken only while
// n_features <= `width` times the nonzeros of the visited samples.
template <class R>
CSPassResult Passes<R>::run(CSState& st) {
    const i64 n = sm_.n, k = k_;
    double* W = md_.W;
    i64* order = order_;
    double eps_shrink = std::max(st.eps_shrink, set_.eps);
    i64 n_active = st.n_active;
    bool full = st.full;
    double viol = INF;
    i64 restores = 0;
    i64 slots[3] = {0, 0, 0};
    i64 n_hist = 0;            // displacements kept (on the samples order[0, n_active))
    i64 head = 0;
    double best = INF;         // the smallest violation of a pass over the shrunk set
    i64 since = 0;             // passes over the shrunk set since it was last lowered
    bool stalled = false;
    for (i64 it = 0; it < set_.max_passes; ++it) {
        shuffle(order, n_active, st.rng, set_.block, tmp_.data(), smark_.data(),
                static_cast<i64>(smark_.size()));
        const i64 n_vis = n_active;
        bool step = nslot_ > 0 && !full && !stalled;
        if (step) {
            i64 nnz = 0;
            for (i64 t = 0; t < n_active; ++t) nnz += x_.hi(order[t]) - x_.lo(order[t]);
            step = static_cast<double>(x_.d) <= set_.width * static_cast<double>(nnz);
        }
        i64 track = -1;
        if (step) {
            // the visited samples in increasing order: the steps' sweeps then read beta and
            // the displacements as streams, not one cache miss per sample
            track = head;
            if (n_vis > cap_) {     // only with no history: the set changed
                HD_ = scratch(nslot_ * n_vis * k);
                cap_ = n_vis;
            }
            for (i64 t = 0; t < n_vis; ++t) mark_[order[t]] = 1;
            i64 q = 0;
            for (i64 i = 0; i < n; ++i)
                if (mark_[i]) {
                    mark_[i] = 0;
                    vis_[q] = i;
                    pos_[i] = q;
                    std::fill(hd(head, q), hd(head, q) + k, 0.0);
                    ++q;
                }
            std::copy(W, W + dk_, Wp_.get());
        }
        const auto pass = one_pass(n_active, track);
        viol = pass.first;
        n_active = pass.second;
        if (nslot_ > 0 && !full) {
            // the steps must not make the passes' violation grow: on a degenerate dual,
            // near the rounding floor of its objective, they can; plain passes from then on
            if (viol > set_.guard * best) stalled = true;
            if (viol < best) {
                best = viol;
                since = 0;
            } else if (++since > set_.patience) {
                stalled = true;     // steps that undo the passes (a cycle)
            }
        }
        if (step) {
            for (i64 a = 0; a <= n_hist; ++a) slots[a] = ((head - a) % nslot_ + nslot_) % nslot_;
            extrapolate(n_vis, slots, n_hist + 1);
            head = (head + 1) % nslot_;
            n_hist = n_active == n_vis ? std::min(n_hist + 1, set_.history) : 0;
        } else {
            n_hist = 0;
        }
        if (viol <= eps_shrink) {
            if (full && viol <= set_.eps) {
                st.n_active = n_active;
                st.eps_shrink = set_.decay * eps_shrink;
                st.full = false;
                return {it + 1, viol, true, restores};
            }
            eps_shrink = std::max(set_.decay * eps_shrink, set_.eps);
            if (full) {
                // a full pass has just checked every variable: its own shrinking stands,
                // and a restore would repeat it
                full = false;
            } else {
                ++restores;
                restore(order, n_free_, sm_.cls, sm_.n_cls, k);
                n_active = n_free_;
                best = INF;
                since = 0;
                full = true;
            }
        } else {
            full = false;
        }
    }
    st.n_active = n_active;
    st.eps_shrink = eps_shrink;
    st.full = full;
    return {set_.max_passes, viol, false, restores};
}

}  // namespace

CSPassResult cs_passes(const LinearData& data, const CSSamples& samples, const CSModel& model,
                       std::int64_t* order, std::int64_t n_free, CSState& state,
                       const CSSettings& settings) {
    return visit_rows(data, [&](const auto& x) {
        Passes<std::decay_t<decltype(x)>> p(x, samples, model, order, n_free, settings);
        return p.run(state);
    });
}

void cs_weights(const LinearData& data, const double* beta, std::int64_t k, double* W) {
    visit_rows(data, [&](const auto& x) {
        using R = std::decay_t<decltype(x)>;
        std::fill(W, W + x.d * k, 0.0);
        for (i64 i = 0; i < x.n; ++i) {
            const double* bi = beta + i * k;
            const i64 lo = x.lo(i), hi = x.hi(i);
            for (i64 p = lo; p < hi; ++p) {
                const double v = x.data[p];
                if constexpr (R::dense)
                    if (v == 0.0) continue;
                double* row = W + x.column(p, lo) * k;
                for (i64 m = 0; m < k; ++m) row[m] += v * bi[m];
            }
        }
    });
}

CSObjectives cs_objectives(const LinearData& data, const std::int64_t* y, const double* C,
                           const double* beta, std::int64_t k, const double* W,
                           const double* b) {
    return visit_rows(data, [&](const auto& x) {
        std::vector<double> G(static_cast<std::size_t>(k));
        std::vector<std::int32_t> cls(static_cast<std::size_t>(k));
        for (i64 m = 0; m < k; ++m) cls[m] = static_cast<std::int32_t>(m);
        double loss = 0.0, lin = 0.0, max_viol = 0.0;
        for (i64 i = 0; i < x.n; ++i) {
            const double* bi = beta + i * k;
            const i64 yi = y[i];
            lin += bi[yi];
            if (C[i] <= 0.0) continue;
            row_gradient(x, i, W, k, cls.data(), k, G.data());
            double maxG = -INF, minG = INF;
            for (i64 m = 0; m < k; ++m) {
                G[m] += b[m];
                if (m != yi) G[m] += 1.0;
                if (G[m] > maxG) maxG = G[m];
                const double upper = m == yi ? C[i] : 0.0;
                if (bi[m] < upper && G[m] < minG) minG = G[m];
            }
            loss += C[i] * (maxG - G[yi]);
            if (maxG - minG > max_viol) max_viol = maxG - minG;
        }
        double reg = 0.0;
        const i64 dk = x.d * k;
#pragma omp simd reduction(+ : reg)
        for (i64 e = 0; e < dk; ++e) reg += W[e] * W[e];
        reg *= 0.5;
        return CSObjectives{reg + loss, lin - reg, max_viol};
    });
}

void cs_shuffle(std::int64_t* order, std::int64_t n, std::int64_t block, std::uint64_t& rng,
                std::int64_t n_samples) {
    std::vector<i64> tmp(static_cast<std::size_t>(block > 1 ? 2 * n : 0));
    std::vector<unsigned char> mark(static_cast<std::size_t>(block > 1 ? n_samples : 0), 0);
    shuffle(order, n, rng, block, tmp.data(), mark.data(), static_cast<i64>(mark.size()));
}

}  // namespace margin_opt
