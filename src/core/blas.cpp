#include "blas.hpp"

#include <Python.h>

#include <stdexcept>

namespace margin_opt {
namespace {
dgemm_t dgemm_ptr = nullptr;
}

dgemm_t dgemm() { return dgemm_ptr; }

void load_blas() {
    if (dgemm_ptr != nullptr) return;
    PyObject* mod = PyImport_ImportModule("scipy.linalg.cython_blas");
    if (mod == nullptr) {
        PyErr_Clear();
        throw std::runtime_error("margin_opt's core needs scipy.linalg.cython_blas (scipy >= 1.10)");
    }
    PyObject* capi = PyObject_GetAttrString(mod, "__pyx_capi__");
    PyObject* cap = capi ? PyDict_GetItemString(capi, "dgemm") : nullptr;   // borrowed
    void* p = cap ? PyCapsule_GetPointer(cap, PyCapsule_GetName(cap)) : nullptr;
    Py_XDECREF(capi);
    Py_DECREF(mod);
    if (p == nullptr) {
        PyErr_Clear();
        throw std::runtime_error("scipy.linalg.cython_blas has no dgemm capsule");
    }
    dgemm_ptr = reinterpret_cast<dgemm_t>(p);
}

// Row-major products through the column-major dgemm: a row-major M (r x c, ld) is the
// column-major M^T (c x r, ld), so C^T = B A^T (gemm_abt) and C^T = B^T A^T (gemm_ab).
void gemm_abt(int rows, int cols, int inner, const double* A, int lda, const double* B,
              int ldb, double beta, double* C, int ldc) {
    const double one = 1.0;
    dgemm_ptr("T", "N", &cols, &rows, &inner, &one, B, &ldb, A, &lda, &beta, C, &ldc);
}

void gemm_ab(int rows, int cols, int inner, const double* A, int lda, const double* B, int ldb,
             double beta, double* C, int ldc) {
    const double one = 1.0;
    dgemm_ptr("N", "N", &cols, &rows, &inner, &one, B, &ldb, A, &lda, &beta, C, &ldc);
}

}  // namespace margin_opt
