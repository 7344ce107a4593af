// The kernel engine: kernel values from inner products (one transform for every
// caller), and kernel expansions f(x) = sum_s W[s] K(x, s) + b evaluated by blocks.
#pragma once

#include <cstdint>
#include <vector>

namespace margin_opt {

enum KernelKind : int { K_LINEAR = 0, K_POLY = 1, K_RBF = 2, K_SIGMOID = 3 };

// RBF: where ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x.z is at most GUARD (||x||^2 + ||z||^2)
// the formula has lost its digits and the distance is recomputed coordinate by coordinate.
constexpr double GUARD = 1e-4;

struct KernelSpec {
    int kind = K_RBF;
    double gamma = 1.0;
    double coef0 = 0.0;
    int degree = 3;
};

// Rows of a data matrix, dense (row-major n x d) or CSR (sorted column indices).
struct RowsView {
    bool sparse = false;
    std::int64_t n = 0, d = 0;
    const double* X = nullptr;              // dense
    const double* data = nullptr;           // CSR
    const std::int64_t* indices = nullptr;
    const std::int64_t* indptr = nullptr;
};

// The support vectors of an expansion, prepared once: dense ones centred by `shift`
// (RBF; zeros otherwise) in `rows`; sparse ones as CSR in `rows` with their dense
// transpose `transpose` (d x n, row-major); `sq` their squared norms.
struct SupportView {
    RowsView rows;
    const double* transpose = nullptr;
    const double* shift = nullptr;           // dense only: what the queries are centred by
    const double* sq = nullptr;
};

// The functions f_p(x) = G[a_slot[p], a_col[p]](x) + G[b_slot[p], b_col[p]](x) + b_p, where
// G[g, j](x) = sum over the support vectors s of group g of W[s, j] K(x, s); `tiles` holds
// rows (lo, hi, group), each tile inside one group.
struct ExpansionView {
    const double* W = nullptr;               // (n_SV, ncol) row-major
    std::int64_t ncol = 1;
    std::int64_t ngroups = 1;
    const std::int64_t* tiles = nullptr;     // (ntiles, 3)
    std::int64_t ntiles = 0;
    std::int64_t tile_width = 1;             // the widest tile
    const std::int64_t* a_slot = nullptr;
    const std::int64_t* a_col = nullptr;
    const std::int64_t* b_slot = nullptr;    // -1: no second sum
    const std::int64_t* b_col = nullptr;
    const double* intercept = nullptr;
    std::int64_t nfun = 0;
};

// How the queries are split: blocks of `block_rows` queries dealt to `threads` threads.
struct Blocking {
    int threads = 1;
    std::int64_t block_rows = 128;
};

// out (n_queries x nfun, row-major) = the expansion's values at the queries.
void expansion_values(const KernelSpec& kernel, const RowsView& queries,
                      const SupportView& support, const ExpansionView& ex,
                      const Blocking& blocking, double* out);

// ||x - z||^2 of two dense rows of d values, coordinate by coordinate.
double dense_d2(const double* x, const double* z, std::int64_t d);
// ||a_i - b_j||^2 of two CSR rows merged on their sorted column indices.
double sparse_d2(const RowsView& A, std::int64_t i, const RowsView& B, std::int64_t j);
// X (n x d, row-major) less its column means: RBF distances are unchanged, and fewer
// digits cancel in ||x||^2 + ||z||^2 - 2 x.z.
void centre_rows(double* X, std::int64_t n, std::int64_t d);

// out (n x n, row-major, exactly symmetric) = K(x_i, x_j) of dense rows X (n x d;
// centred here for RBF), by blocks of rows dealt to `threads` threads.
void kernel_matrix(const KernelSpec& kernel, const RowsView& rows, int threads, double* out);

// Two runs of rows and columns of a matrix: [i0, i0 + ni) then [j0, j0 + nj).
struct BlockRuns {
    std::int64_t i0 = 0, ni = 0, j0 = 0, nj = 0;
};

// out (m x m, m = ni + nj, row-major) = K[r_a, r_b] for the rows r of `runs` of K
// (n x n, row-major): a one-vs-one pair's kernel block [[K_ii, K_ij], [K_ji, K_jj]] out
// of the shared matrix, exactly symmetric where K is.
void pair_block(const double* K, std::int64_t n, const BlockRuns& runs, double* out);

// The kernel values of dense training data grouped by class, for a one-vs-one fit's
// pairs (no n x n matrix): the rows (centred for RBF) and their squared norms, and each
// class's diagonal block K_cc computed once (exactly symmetric); a pair's off-diagonal
// block is computed by the pair (every value once over the fit).
struct ClassKernel {
    KernelSpec kernel;
    std::int64_t n = 0, d = 0;
    std::vector<double> X, sq;                       // n x d row-major; n
    std::vector<std::int64_t> start, size;           // each class's rows
    std::vector<std::vector<double>> diag;           // K_cc, size[c] x size[c]
};

// `ck` for dense rows grouped by class (class c: `sizes[c]` rows, in order), its
// diagonal blocks dealt to `threads` threads.
void class_kernel_init(ClassKernel& ck, const KernelSpec& kernel, const RowsView& rows,
                       const std::vector<std::int64_t>& sizes, int threads);

// out (m x m, m = size[i] + size[j], row-major, exactly symmetric) = the kernel matrix of
// class i's rows then class j's: K_ii, K_jj copied, K_ij computed and mirrored to K_ji.
void class_kernel_pair(const ClassKernel& ck, std::int64_t i, std::int64_t j, double* out);

// The per-instruction-set builds of the engine's inner loops (kernel.cpp compiled once
// per level, chosen at run time by the CPU's features).
struct BlockKernels {
    // b[k] = the kernel's value from b[k], k < m (inner products, or squared distances
    // for RBF).
    void (*transform)(double* b, std::int64_t m, const KernelSpec& kernel);
    // b[k] = sr + s[k] - 2 b[k]; returns how many are at most GUARD (sr + s[k]).
    std::int64_t (*squared_distances)(double* b, std::int64_t m, double sr, const double* s);
    // b[k] += sum over the nonzeros p in [q, qe) of data[p] XT[indices[p] * ld + lo + k].
    void (*sparse_dots)(double* b, std::int64_t m, const double* XT, std::int64_t ld,
                        std::int64_t lo, const double* data, const std::int64_t* indices,
                        std::int64_t q, std::int64_t qe);
    // sparse_dots on a single-precision transpose (each product formed in double).
    void (*sparse_dots_f32)(double* b, std::int64_t m, const float* XT, std::int64_t ld,
                            std::int64_t lo, const double* data, const std::int64_t* indices,
                            std::int64_t q, std::int64_t qe);
    // b[k] = sum over f < d of x[f] XT[f * ld + lo + k] (in the order of f), k < m.
    void (*dense_dots)(double* b, std::int64_t m, const double* XT, std::int64_t ld,
                       std::int64_t lo, const double* x, std::int64_t d);
    // sum_k a[k] b[k], k < m, in a fixed order of partial sums.
    double (*dot)(const double* a, const double* b, std::int64_t m);
    // SMO's passes (smo.cpp), over positions k < n, with F = y * gradient:
    // the largest -F[k] where up[k] (-inf where none).
    double (*up_max)(const double* F, const std::uint8_t* up, std::int64_t n);
    // obj[k] = -(gmax + F[k])^2 / max(QD[k] + qdi - 2 K[d[k]], TAU) where low[k] and
    // gmax + F[k] > 0, +inf elsewhere; returns the largest F[k] where low[k].
    double (*pair_objectives)(const double* F, const std::uint8_t* low, const double* QD,
                              const double* K, const std::int64_t* d, std::int64_t n,
                              double gmax, double qdi, double tau, double* obj);
    // the smallest v[k], k < n (+inf for n = 0).
    double (*min_value)(const double* v, std::int64_t n);
    // F[k] += ci Ki[d[k]] + cj Kj[d[k]]; returns up_max of the new F.
    double (*pair_update)(double* F, const double* Ki, const double* Kj, const std::int64_t* d,
                          std::int64_t n, double ci, double cj, const std::uint8_t* up);
    // The last k < n with ok[k] (every k where ok is null) and s * v[k] == value; -1: none.
    std::int64_t (*last_equal)(const double* v, double s, const std::uint8_t* ok,
                               std::int64_t n, double value);
    // F[k] += c K[d[k]].
    void (*axpy_gather)(double* F, const double* K, const std::int64_t* d, std::int64_t n,
                        double c);
    // K[d[k]] = b[k] (d without repeats).
    void (*scatter)(double* K, const std::int64_t* d, const double* b, std::int64_t n);
    const char* name;
};

const BlockKernels& block_kernels();

}  // namespace margin_opt
