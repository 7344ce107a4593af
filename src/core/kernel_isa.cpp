// The engine's inner loops, compiled once per instruction-set level (CMakeLists.txt:
// baseline x86-64, x86-64-v3 with AVX2 and FMA, x86-64-v4 with AVX-512); kernel.cpp
// picks one at run time.  Each loop is branch-free so that the compiler vectorizes it.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernel.hpp"

#ifndef MO_ISA
#define MO_ISA base
#endif
#define MO_CAT2(a, b) a##b
#define MO_CAT(a, b) MO_CAT2(a, b)

namespace margin_opt {
namespace {

constexpr double LOG2E = 1.4426950408889634;
constexpr double LN2HI = 6.93147180369123816490e-01;
constexpr double LN2LO = 1.90821492927058770002e-10;
constexpr double ROUND = 6755399441055744.0;          // 1.5 * 2^52: round to an integer
constexpr std::int64_t ROUND_BITS = 0x4338000000000000;

// a[:n] = exp(a[:n]): Cody-Waite reduction by ln 2 and a degree-13 Taylor polynomial;
// relative error below 2e-16 on [-708, 709], about 3e-308 below -708.
void vexp(double* a, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
        double x = a[i];
        x = x < -708.0 ? -708.0 : x;
        x = x > 709.0 ? 709.0 : x;
        const double t = x * LOG2E + ROUND;           // round(x / ln 2) in t's low bits
        const double k = t - ROUND;
        const double r = (x - k * LN2HI) - k * LN2LO;
        const double p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
            1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
            1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
            1.0 / 479001600 + r * (1.0 / 6227020800)))))))))))));
        std::int64_t tb;
        std::memcpy(&tb, &t, 8);
        const std::int64_t sb = (tb - ROUND_BITS + 1023) << 52;   // 2^k
        double s;
        std::memcpy(&s, &sb, 8);
        a[i] = p * s;
    }
}

void transform(double* b, std::int64_t m, const KernelSpec& kernel) {
    const double g = kernel.gamma, c0 = kernel.coef0;
    switch (kernel.kind) {
        case K_RBF:
            for (std::int64_t k = 0; k < m; ++k) b[k] = -g * (b[k] > 0.0 ? b[k] : 0.0);
            vexp(b, m);
            break;
        case K_POLY:   // (g b + c0)^degree by repeated products, 64 entries at a time
            for (std::int64_t s = 0; s < m; s += 64) {
                const std::int64_t e = m - s < 64 ? m - s : 64;
                double z[64], v[64];
                for (std::int64_t k = 0; k < e; ++k) {
                    z[k] = g * b[s + k] + c0;
                    v[k] = 1.0;
                }
                for (int p = 0; p < kernel.degree; ++p)
                    for (std::int64_t k = 0; k < e; ++k) v[k] *= z[k];
                for (std::int64_t k = 0; k < e; ++k) b[s + k] = v[k];
            }
            break;
        case K_SIGMOID:
            for (std::int64_t k = 0; k < m; ++k) b[k] = std::tanh(g * b[k] + c0);
            break;
        default:
            break;
    }
}

std::int64_t squared_distances(double* b, std::int64_t m, double sr, const double* s) {
    std::int64_t nbad = 0;
    for (std::int64_t k = 0; k < m; ++k) {
        const double norms = sr + s[k];
        const double d2 = norms - 2.0 * b[k];
        nbad += d2 <= GUARD * norms;
        b[k] = d2;
    }
    return nbad;
}

// Four nonzeros per sweep over the tile (a quarter of the loads and stores of b), then
// the rest; each entry sums its products in the row's order.  T: the transpose's type
// (float where its values are all single-precision numbers: the same products in double,
// half the memory traffic).
template <class T>
void sparse_dots_t(double* b, std::int64_t m, const T* XT, std::int64_t ld, std::int64_t lo,
                   const double* data, const std::int64_t* indices, std::int64_t q,
                   std::int64_t qe) {
    for (; q + 4 <= qe; q += 4) {
        const double v0 = data[q], v1 = data[q + 1], v2 = data[q + 2], v3 = data[q + 3];
        const T* x0 = XT + indices[q] * ld + lo;
        const T* x1 = XT + indices[q + 1] * ld + lo;
        const T* x2 = XT + indices[q + 2] * ld + lo;
        const T* x3 = XT + indices[q + 3] * ld + lo;
        for (std::int64_t k = 0; k < m; ++k)
            b[k] = (((b[k] + v0 * static_cast<double>(x0[k])) + v1 * static_cast<double>(x1[k])) +
                    v2 * static_cast<double>(x2[k])) + v3 * static_cast<double>(x3[k]);
    }
    for (; q < qe; ++q) {
        const double v = data[q];
        const T* x = XT + indices[q] * ld + lo;
        for (std::int64_t k = 0; k < m; ++k) b[k] += v * static_cast<double>(x[k]);
    }
}

void sparse_dots(double* b, std::int64_t m, const double* XT, std::int64_t ld, std::int64_t lo,
                 const double* data, const std::int64_t* indices, std::int64_t q,
                 std::int64_t qe) {
    sparse_dots_t(b, m, XT, ld, lo, data, indices, q, qe);
}

void sparse_dots_f32(double* b, std::int64_t m, const float* XT, std::int64_t ld,
                     std::int64_t lo, const double* data, const std::int64_t* indices,
                     std::int64_t q, std::int64_t qe) {
    sparse_dots_t(b, m, XT, ld, lo, data, indices, q, qe);
}

// Tile by tile of 512 entries (4 KB of b, in L1), four features per sweep over the tile
// (four streams of XT: what the prefetcher follows), the sums in the order of f.
void dense_dots(double* b, std::int64_t m, const double* XT, std::int64_t ld, std::int64_t lo,
                const double* x, std::int64_t d) {
    constexpr std::int64_t TILE = 512;
    for (std::int64_t s = 0; s < m; s += TILE) {
        const std::int64_t e = m - s < TILE ? m - s : TILE;
        double* bt = b + s;
        for (std::int64_t k = 0; k < e; ++k) bt[k] = 0.0;
        std::int64_t f = 0;
        for (; f + 4 <= d; f += 4) {
            const double v0 = x[f], v1 = x[f + 1], v2 = x[f + 2], v3 = x[f + 3];
            const double* x0 = XT + f * ld + lo + s;
            const double* x1 = x0 + ld;
            const double* x2 = x1 + ld;
            const double* x3 = x2 + ld;
            for (std::int64_t k = 0; k < e; ++k)
                bt[k] = (((bt[k] + v0 * x0[k]) + v1 * x1[k]) + v2 * x2[k]) + v3 * x3[k];
        }
        for (; f < d; ++f) {
            const double v = x[f];
            const double* xf = XT + f * ld + lo + s;
            for (std::int64_t k = 0; k < e; ++k) bt[k] += v * xf[k];
        }
    }
}

// sum_k a[k] b[k] in eight interleaved partial sums (independent chains, which the
// compiler vectorizes without reassociating), added in a fixed order.
double dot(const double* a, const double* b, std::int64_t m) {
    double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    std::int64_t k = 0;
    for (; k + 8 <= m; k += 8)
        for (int j = 0; j < 8; ++j) acc[j] += a[k + j] * b[k + j];
    for (int j = 0; k < m; ++k, ++j) acc[j] += a[k] * b[k];
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// SMO's passes: plain loops that `omp simd` (-fopenmp-simd: no OpenMP runtime) lets the
// compiler vectorize with their max / min reductions (no reassociation of sums).
double up_max(const double* __restrict F, const std::uint8_t* __restrict up, std::int64_t n) {
    double best = -INFINITY;
#pragma omp simd reduction(max : best)
    for (std::int64_t k = 0; k < n; ++k) {
        const double v = up[k] ? -F[k] : -INFINITY;
        best = best > v ? best : v;
    }
    return best;
}

double pair_objectives(const double* __restrict F, const std::uint8_t* __restrict low,
                       const double* __restrict QD, const double* __restrict K,
                       const std::int64_t* __restrict d, std::int64_t n, double gmax,
                       double qdi, double tau, double* __restrict obj) {
    double best = -INFINITY;
#pragma omp simd reduction(max : best)
    for (std::int64_t k = 0; k < n; ++k) {
        const double f = F[k];
        const bool ok = low[k] != 0;
        const double v = ok ? f : -INFINITY;
        best = best > v ? best : v;
        const double diff = gmax + f;
        double quad = qdi + QD[k] - 2.0 * K[d[k]];
        quad = quad > 0.0 ? quad : tau;
        const double o = -(diff * diff) / quad;
        obj[k] = (ok & (diff > 0.0)) ? o : INFINITY;
    }
    return best;
}

double min_value(const double* __restrict v, std::int64_t n) {
    double best = INFINITY;
#pragma omp simd reduction(min : best)
    for (std::int64_t k = 0; k < n; ++k) best = best < v[k] ? best : v[k];
    return best;
}

double pair_update(double* __restrict F, const double* __restrict Ki,
                   const double* __restrict Kj, const std::int64_t* __restrict d, std::int64_t n,
                   double ci, double cj, const std::uint8_t* __restrict up) {
    double best = -INFINITY;
#pragma omp simd reduction(max : best)
    for (std::int64_t k = 0; k < n; ++k) {
        const double f = F[k] + (ci * Ki[d[k]] + cj * Kj[d[k]]);
        F[k] = f;
        const double v = up[k] ? -f : -INFINITY;
        best = best > v ? best : v;
    }
    return best;
}

// Blocks of 64 from the end, each tested at once (a vectorized compare with an integer
// or-reduction: a bool one kept the loop scalar, 1.5-2x slower), then the one that
// holds a match searched entry by entry.
std::int64_t last_equal(const double* __restrict v, double s, const std::uint8_t* __restrict ok,
                        std::int64_t n, double value) {
    constexpr std::int64_t B = 64;
    std::int64_t hi = n;
    while (hi > 0) {
        const std::int64_t lo = hi > B ? hi - B : 0;
        int any = 0;
        if (ok != nullptr) {
#pragma omp simd reduction(| : any)
            for (std::int64_t k = lo; k < hi; ++k)
                any |= static_cast<int>(ok[k]) & static_cast<int>(s * v[k] == value);
        } else {
#pragma omp simd reduction(| : any)
            for (std::int64_t k = lo; k < hi; ++k) any |= static_cast<int>(s * v[k] == value);
        }
        if (any != 0)
            for (std::int64_t k = hi - 1; k >= lo; --k)
                if ((ok == nullptr || ok[k]) && s * v[k] == value) return k;
        hi = lo;
    }
    return -1;
}

void axpy_gather(double* __restrict F, const double* __restrict K,
                 const std::int64_t* __restrict d, std::int64_t n, double c) {
#pragma omp simd
    for (std::int64_t k = 0; k < n; ++k) F[k] += c * K[d[k]];
}

void scatter(double* __restrict K, const std::int64_t* __restrict d, const double* __restrict b,
             std::int64_t n) {
#pragma omp simd
    for (std::int64_t k = 0; k < n; ++k) K[d[k]] = b[k];
}

}  // namespace

#define MO_STR2(a) #a
#define MO_STR(a) MO_STR2(a)

const BlockKernels& MO_CAT(block_kernels_, MO_ISA)() {
    static const BlockKernels k{transform,     squared_distances, sparse_dots, sparse_dots_f32,
                                dense_dots,    dot,
                                up_max,        pair_objectives,   min_value,   pair_update,
                                last_equal,    axpy_gather,       scatter,     MO_STR(MO_ISA)};
    return k;
}

}  // namespace margin_opt
