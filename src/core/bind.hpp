// Shared pieces of the core's Python face (nanobind): array types, argument checks and
// the linear solvers' data object.  Each binding file binds one concept
// (bindings.cpp: kernels and SMO; bind_linear.cpp; bind_crammer_singer.cpp).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "linear.hpp"

namespace margin_opt::bind {

namespace nb = nanobind;

using F64_1 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F64_2 = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using I32_1 = nb::ndarray<const std::int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using I64_1 = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using I64_2 = nb::ndarray<const std::int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Out1 = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Out2 = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using OutI64_1 = nb::ndarray<std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

inline void require(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
}
// The same for a literal message: nothing is built unless it fails (checks in O(nnz) loops).
inline void require(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
}

// X for the linear solvers (linear.hpp's LinearData) with the arrays it views kept
// alive: dense float64 rows, or CSR with int32 or int64 indices (checked once here:
// pointers from 0 to nnz, not decreasing; columns within [0, d)).
struct LinearX {
    F64_2 X;                                  // dense rows
    F64_1 data;                               // CSR
    nb::ndarray<nb::ndim<1>, nb::c_contig, nb::device::cpu> indices, indptr;
    LinearData view;
};

// The row indices rows[t] in [0, n) (a ValueError otherwise).
inline void check_rows(const LinearX& x, const std::int64_t* rows, std::int64_t m) {
    for (std::int64_t t = 0; t < m; ++t)
        require(rows[t] >= 0 && rows[t] < x.view.n, "a row index is outside X");
}

}  // namespace margin_opt::bind

void bind_linear(nanobind::module_& m);
void bind_crammer_singer(nanobind::module_& m);
