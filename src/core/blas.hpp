// BLAS for the core: the dgemm that scipy ships (scipy.linalg.cython_blas), found once
// through its C-API capsule, so that the core links no BLAS of its own and runs on the
// BLAS (and the thread settings, threadpoolctl's) that numpy and scipy use.
#pragma once

namespace margin_opt {

using dgemm_t = void (*)(const char* transa, const char* transb, const int* m, const int* n,
                         const int* k, const double* alpha, const double* a, const int* lda,
                         const double* b, const int* ldb, const double* beta, double* c,
                         const int* ldc);

// The dgemm pointer; load_blas() must have succeeded first (with the GIL held).
dgemm_t dgemm();

// Finds scipy's dgemm (imports scipy.linalg.cython_blas); call with the GIL held.
// Throws std::runtime_error where scipy does not provide it.
void load_blas();

// C (row-major, rows x cols, leading dimension ldc) = alpha * A (rows x inner, lda) *
// B^T (B row-major cols x inner, ldb) + beta * C.
void gemm_abt(int rows, int cols, int inner, const double* A, int lda, const double* B,
              int ldb, double beta, double* C, int ldc);

// C (row-major, rows x cols, ldc) = A (rows x inner, lda) * B (inner x cols, ldb) + beta*C.
void gemm_ab(int rows, int cols, int inner, const double* A, int lda, const double* B, int ldb,
             double beta, double* C, int ldc);

}  // namespace margin_opt
