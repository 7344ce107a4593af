// The kernel engine's driver: expansions by blocks of queries and tiles of support
// vectors (kernel.hpp), and the choice of the inner loops' instruction-set build.

#include "kernel.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "blas.hpp"
#include "pool.hpp"

namespace margin_opt {

const BlockKernels& block_kernels_base();
#ifdef MO_HAVE_X86_LEVELS
const BlockKernels& block_kernels_v3();
const BlockKernels& block_kernels_v4();
#endif

// The highest level this CPU runs, or a lower one named by MARGIN_OPT_ISA ("base", "v3";
// read once: for testing each build on one machine, as numpy's NPY_DISABLE_CPU_FEATURES).
const BlockKernels& block_kernels() {
#ifdef MO_HAVE_X86_LEVELS
    static const BlockKernels& chosen = [] () -> const BlockKernels& {
        const char* env = std::getenv("MARGIN_OPT_ISA");
        const std::string cap = env ? env : "";
        __builtin_cpu_init();
        if (cap != "base" && cap != "v3" && __builtin_cpu_supports("x86-64-v4"))
            return block_kernels_v4();
        if (cap != "base" && __builtin_cpu_supports("x86-64-v3")) return block_kernels_v3();
        return block_kernels_base();
    }();
    return chosen;
#else
    return block_kernels_base();
#endif
}

double dense_d2(const double* x, const double* z, std::int64_t d) {
    double s = 0.0;
    for (std::int64_t f = 0; f < d; ++f) {
        const double t = x[f] - z[f];
        s += t * t;
    }
    return s;
}

// ||a - b||^2 of two sparse rows merged on their sorted column indices.
double sparse_d2(const RowsView& A, std::int64_t i, const RowsView& B, std::int64_t j) {
    std::int64_t p = A.indptr[i], pe = A.indptr[i + 1], q = B.indptr[j], qe = B.indptr[j + 1];
    double s = 0.0;
    while (p < pe || q < qe) {
        const std::int64_t fp = p < pe ? A.indices[p] : INT64_MAX;
        const std::int64_t fq = q < qe ? B.indices[q] : INT64_MAX;
        double t;
        if (fp == fq) {
            t = A.data[p++] - B.data[q++];
        } else if (fp < fq) {
            t = A.data[p++];
        } else {
            t = B.data[q++];
        }
        s += t * t;
    }
    return s;
}

void centre_rows(double* X, std::int64_t n, std::int64_t d) {
    if (n == 0) return;
    std::vector<double> mean(d, 0.0);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t f = 0; f < d; ++f) mean[f] += X[i * d + f];
    for (std::int64_t f = 0; f < d; ++f) mean[f] /= static_cast<double>(n);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t f = 0; f < d; ++f) X[i * d + f] -= mean[f];
}

namespace {

// One thread's share of expansion_values: blocks h, h + threads, ...
struct BlockRun {
    const KernelSpec& kernel;
    const RowsView& queries;
    const SupportView& support;
    const ExpansionView& ex;
    const Blocking& blocking;
    double* out;

    void operator()(int h) const {
        const BlockKernels& bk = block_kernels();
        const std::int64_t n = queries.n, d = queries.d, bq = blocking.block_rows;
        const std::int64_t tw = ex.tile_width, ncol = ex.ncol, ng = ex.ngroups;
        const bool sparse = queries.sparse;
        std::vector<double> Qb(sparse ? 1 : bq * d), sqq(bq), G(bq * ng * ncol), D(bq * tw);
        const std::int64_t nblocks = (n + bq - 1) / bq;
        for (std::int64_t blk = h; blk < nblocks; blk += blocking.threads) {
            const std::int64_t q0 = blk * bq, nb = std::min(bq, n - q0);
            prepare_queries(q0, nb, Qb.data(), sqq.data());
            std::fill(G.begin(), G.begin() + nb * ng * ncol, 0.0);
            for (std::int64_t t = 0; t < ex.ntiles; ++t) {
                const std::int64_t lo = ex.tiles[3 * t], hi = ex.tiles[3 * t + 1];
                const std::int64_t slot = ex.tiles[3 * t + 2], m = hi - lo;
                inner_products(bk, q0, nb, lo, m, Qb.data(), D.data());
                for (std::int64_t i = 0; i < nb; ++i)
                    kernel_values(bk, q0 + i, D.data() + i * m, lo, m, Qb.data() + i * d,
                                  sqq[i]);
                accumulate(bk, nb, lo, m, slot, D.data(), G.data());
            }
            combine(q0, nb, G.data());
        }
    }

    // Dense: Qb = the queries less the support vectors' shift; sqq their squared norms.
    void prepare_queries(std::int64_t q0, std::int64_t nb, double* Qb, double* sqq) const {
        const std::int64_t d = queries.d;
        for (std::int64_t i = 0; i < nb; ++i) {
            double s = 0.0;
            if (queries.sparse) {
                for (std::int64_t p = queries.indptr[q0 + i]; p < queries.indptr[q0 + i + 1]; ++p)
                    s += queries.data[p] * queries.data[p];
            } else {
                const double* x = queries.X + (q0 + i) * d;
                double* qb = Qb + i * d;
                for (std::int64_t f = 0; f < d; ++f) {
                    const double v = x[f] - support.shift[f];
                    qb[f] = v;
                    s += v * v;
                }
            }
            sqq[i] = s;
        }
    }

    // D (nb x m) = inner products of the block's queries with support vectors lo .. lo+m.
    void inner_products(const BlockKernels& bk, std::int64_t q0, std::int64_t nb,
                        std::int64_t lo, std::int64_t m, const double* Qb, double* D) const {
        if (!queries.sparse) {
            const int d = static_cast<int>(queries.d);
            gemm_abt(static_cast<int>(nb), static_cast<int>(m), d, Qb, d,
                     support.rows.X + lo * queries.d, d, 0.0, D, static_cast<int>(m));
            return;
        }
        std::fill(D, D + nb * m, 0.0);
        for (std::int64_t i = 0; i < nb; ++i)
            bk.sparse_dots(D + i * m, m, support.transpose, support.rows.n, lo, queries.data,
                           queries.indices, queries.indptr[q0 + i], queries.indptr[q0 + i + 1]);
    }

    // b[k] = K(query r, support vector lo + k) from the inner products b[k].
    void kernel_values(const BlockKernels& bk, std::int64_t r, double* b, std::int64_t lo,
                       std::int64_t m, const double* qn, double sr) const {
        if (kernel.kind == K_RBF && bk.squared_distances(b, m, sr, support.sq + lo) > 0) {
            for (std::int64_t k = 0; k < m; ++k) {
                if (b[k] > GUARD * (sr + support.sq[lo + k])) continue;
                const std::int64_t c = lo + k;
                b[k] = queries.sparse ? sparse_d2(queries, r, support.rows, c)
                                      : dense_d2(qn, support.rows.X + c * queries.d, queries.d);
            }
        }
        bk.transform(b, m, kernel);
    }

    // G[i, slot, :] += D[i, :] W[lo:lo + m, :].
    void accumulate(const BlockKernels& bk, std::int64_t nb, std::int64_t lo, std::int64_t m,
                    std::int64_t slot, const double* D, double* G) const {
        const std::int64_t ncol = ex.ncol, stride = ex.ngroups * ncol;
        const double* W = ex.W + lo * ncol;
        if (ncol == 1) {
            for (std::int64_t i = 0; i < nb; ++i) G[i * stride + slot] += bk.dot(D + i * m, W, m);
            return;
        }
        gemm_ab(static_cast<int>(nb), static_cast<int>(ncol), static_cast<int>(m), D,
                static_cast<int>(m), W, static_cast<int>(ncol), 1.0, G + slot * ncol,
                static_cast<int>(stride));
    }

    void combine(std::int64_t q0, std::int64_t nb, const double* G) const {
        const std::int64_t ncol = ex.ncol, stride = ex.ngroups * ncol;
        for (std::int64_t i = 0; i < nb; ++i) {
            const double* g = G + i * stride;
            double* o = out + (q0 + i) * ex.nfun;
            for (std::int64_t p = 0; p < ex.nfun; ++p) {
                double v = g[ex.a_slot[p] * ncol + ex.a_col[p]];
                if (ex.b_slot[p] >= 0) v += g[ex.b_slot[p] * ncol + ex.b_col[p]];
                o[p] = v + ex.intercept[p];
            }
        }
    }
};

}  // namespace

void kernel_matrix(const KernelSpec& kernel, const RowsView& rows, int threads, double* out) {
    const std::int64_t n = rows.n, d = rows.d;
    std::vector<double> Xc(rows.X, rows.X + n * d), sq(n, 0.0);
    if (kernel.kind == K_RBF) centre_rows(Xc.data(), n, d);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t f = 0; f < d; ++f) sq[i] += Xc[i * d + f] * Xc[i * d + f];
    constexpr std::int64_t B = 64;
    const std::int64_t nblocks = (n + B - 1) / B;
    // each block of rows: the products of whole rows (a narrower product may round
    // otherwise), the kernel's transform from the diagonal block on (the upper triangle,
    // mirrored below: each value transformed once); those columns start at a multiple of
    // B, so the vector loops' lanes fall on the same columns as over a whole row
    parallel_for(threads, [&](int h) {
        const BlockKernels& bk = block_kernels();
        for (std::int64_t blk = h; blk < nblocks; blk += threads) {
            const std::int64_t r0 = blk * B, nb = std::min(B, n - r0), w = n - r0;
            double* o = out + r0 * n + r0;
            if (d == 0) {
                for (std::int64_t i = 0; i < nb; ++i) std::fill(o + i * n, o + i * n + w, 0.0);
            } else {
                gemm_abt(static_cast<int>(nb), static_cast<int>(n), static_cast<int>(d),
                         Xc.data() + r0 * d, static_cast<int>(d), Xc.data(),
                         static_cast<int>(d), 0.0, out + r0 * n, static_cast<int>(n));
            }
            for (std::int64_t i = 0; i < nb; ++i) {
                double* b = o + i * n;
                const std::int64_t r = r0 + i;
                const double* s = sq.data() + r0;
                if (kernel.kind == K_RBF && bk.squared_distances(b, w, sq[r], s) > 0) {
                    for (std::int64_t k = 0; k < w; ++k)
                        if (b[k] <= GUARD * (sq[r] + s[k]))
                            b[k] = dense_d2(Xc.data() + r * d, Xc.data() + (r0 + k) * d, d);
                }
                bk.transform(b, w, kernel);
            }
        }
    });
    // exactly symmetric: the upper triangle mirrored (a block product may round
    // K[i, j] and K[j, i] apart)
    parallel_for(threads, [&](int h) {
        for (std::int64_t i = h; i < n; i += threads)
            for (std::int64_t j = 0; j < i; ++j) out[i * n + j] = out[j * n + i];
    });
}

void pair_block(const double* K, std::int64_t n, const BlockRuns& runs, double* out) {
    const std::int64_t m = runs.ni + runs.nj;
    for (std::int64_t a = 0; a < m; ++a) {
        const double* row = K + (a < runs.ni ? runs.i0 + a : runs.j0 + a - runs.ni) * n;
        std::copy(row + runs.i0, row + runs.i0 + runs.ni, out + a * m);
        std::copy(row + runs.j0, row + runs.j0 + runs.nj, out + a * m + runs.ni);
    }
}

namespace {

// out[a * ldo + b] = K(row r0 + a, row c0 + b), a < nr, b < nc, of ck's rows: one product
// of the two runs of rows, then each row's distances (RBF, guarded) and transform.
void kernel_block(const ClassKernel& ck, std::int64_t r0, std::int64_t nr, std::int64_t c0,
                  std::int64_t nc, double* out, std::int64_t ldo) {
    if (nr == 0 || nc == 0) return;
    const std::int64_t d = ck.d;
    const double* X = ck.X.data();
    if (d == 0) {
        for (std::int64_t a = 0; a < nr; ++a) std::fill(out + a * ldo, out + a * ldo + nc, 0.0);
    } else {
        gemm_abt(static_cast<int>(nr), static_cast<int>(nc), static_cast<int>(d), X + r0 * d,
                 static_cast<int>(d), X + c0 * d, static_cast<int>(d), 0.0, out,
                 static_cast<int>(ldo));
    }
    const BlockKernels& bk = block_kernels();
    const double* s = ck.sq.data() + c0;
    for (std::int64_t a = 0; a < nr; ++a) {
        double* b = out + a * ldo;
        const std::int64_t r = r0 + a;
        if (ck.kernel.kind == K_RBF && bk.squared_distances(b, nc, ck.sq[r], s) > 0) {
            for (std::int64_t k = 0; k < nc; ++k)
                if (b[k] <= GUARD * (ck.sq[r] + s[k]))
                    b[k] = dense_d2(X + r * d, X + (c0 + k) * d, d);
        }
        bk.transform(b, nc, ck.kernel);
    }
}

}  // namespace

void class_kernel_init(ClassKernel& ck, const KernelSpec& kernel, const RowsView& rows,
                       const std::vector<std::int64_t>& sizes, int threads) {
    const std::int64_t n = rows.n, d = rows.d;
    ck.kernel = kernel;
    ck.n = n;
    ck.d = d;
    ck.X.assign(rows.X, rows.X + n * d);
    if (kernel.kind == K_RBF) centre_rows(ck.X.data(), n, d);
    ck.sq.assign(n, 0.0);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t f = 0; f < d; ++f) ck.sq[i] += ck.X[i * d + f] * ck.X[i * d + f];
    const auto k = static_cast<std::int64_t>(sizes.size());
    ck.size = sizes;
    ck.start.assign(k, 0);
    for (std::int64_t c = 1; c < k; ++c) ck.start[c] = ck.start[c - 1] + sizes[c - 1];
    ck.diag.assign(k, {});
    // allocated here, on the calling thread: a job on the pool's workers only computes
    // (an exception must not leave a worker)
    for (std::int64_t c = 0; c < k; ++c)
        ck.diag[c].resize(static_cast<std::size_t>(ck.size[c] * ck.size[c]));
    parallel_for(threads, [&](int h) {
        for (std::int64_t c = h; c < k; c += threads) {
            const std::int64_t nc = ck.size[c];
            std::vector<double>& D = ck.diag[c];
            kernel_block(ck, ck.start[c], nc, ck.start[c], nc, D.data(), nc);
            for (std::int64_t a = 0; a < nc; ++a)       // exactly symmetric: upper mirrored
                for (std::int64_t b = 0; b < a; ++b) D[a * nc + b] = D[b * nc + a];
        }
    });
}

void class_kernel_pair(const ClassKernel& ck, std::int64_t i, std::int64_t j, double* out) {
    const std::int64_t ni = ck.size[i], nj = ck.size[j], m = ni + nj;
    const double* Di = ck.diag[i].data();
    const double* Dj = ck.diag[j].data();
    for (std::int64_t a = 0; a < ni; ++a) std::copy(Di + a * ni, Di + (a + 1) * ni, out + a * m);
    for (std::int64_t a = 0; a < nj; ++a)
        std::copy(Dj + a * nj, Dj + (a + 1) * nj, out + (ni + a) * m + ni);
    kernel_block(ck, ck.start[i], ni, ck.start[j], nj, out + ni, m);
    for (std::int64_t a = 0; a < ni; ++a)               // K_ji = K_ij^T
        for (std::int64_t b = 0; b < nj; ++b) out[(ni + b) * m + a] = out[a * m + ni + b];
}

void expansion_values(const KernelSpec& kernel, const RowsView& queries,
                      const SupportView& support, const ExpansionView& ex,
                      const Blocking& blocking, double* out) {
    const BlockRun run{kernel, queries, support, ex, blocking, out};
    parallel_for(blocking.threads, [&run](int h) { run(h); });
}

}  // namespace margin_opt
