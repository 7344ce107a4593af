// margin_opt._core: the linear solvers' data and dual coordinate descent (linear.hpp).
// Shapes, row indices and spans are checked before the GIL is released.
#include <cmath>
#include <string>
#include <utility>

#include "bind.hpp"

namespace nb = nanobind;
using namespace nb::literals;
namespace mo = margin_opt;
using namespace mo::bind;

namespace {

using AnyI1 = nb::ndarray<nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using NpF1 = nb::ndarray<nb::numpy, double, nb::ndim<1>>;
using NpF2 = nb::ndarray<nb::numpy, double, nb::ndim<2>>;

NpF1 new_vector(std::size_t n) {
    double* buf = new double[n > 0 ? n : 1]();
    nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    return NpF1(buf, {n}, owner);
}

NpF2 new_matrix(std::size_t r, std::size_t c) {
    double* buf = new double[r * c > 0 ? r * c : 1]();
    nb::capsule owner(buf, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    return NpF2(buf, {r, c}, owner);
}

// The arrays are taken as they are (bound with noconvert: a converted temporary would be
// freed when the call returns) and kept in the LinearX.
LinearX dense_x(F64_2 X) {
    LinearX x;
    x.X = X;
    x.view.dense = true;
    x.view.data = X.data();
    x.view.n = static_cast<std::int64_t>(X.shape(0));
    x.view.d = static_cast<std::int64_t>(X.shape(1));
    return x;
}

template <class I>
void check_csr(const I* ind, const I* p, std::int64_t n, std::int64_t nnz, std::int64_t d) {
    require(p[0] == 0 && static_cast<std::int64_t>(p[n]) == nnz, "indptr must run from 0 to nnz");
    for (std::int64_t r = 0; r < n; ++r) {
        require(p[r] <= p[r + 1] && p[r + 1] <= nnz, "indptr must not decrease");
        for (std::int64_t k = p[r]; k < p[r + 1]; ++k)
            require(ind[k] >= 0 && ind[k] < d && (k == p[r] || ind[k - 1] < ind[k]),
                    "column indices must be sorted, unique and below n_cols");
    }
}

LinearX csr_x(F64_1 v, AnyI1 ind, AnyI1 ptr, std::int64_t d) {
    const bool wide = ind.dtype() == nb::dtype<std::int64_t>();
    require(wide || ind.dtype() == nb::dtype<std::int32_t>(),
            "indices must be int32 or int64");
    require(ptr.dtype() == ind.dtype(), "indptr must have the dtype of indices");
    require(ptr.shape(0) >= 1, "indptr must have n_rows + 1 entries");
    require(ind.shape(0) == v.shape(0), "data and indices differ in length");
    require(d >= 0, "n_cols must be >= 0");
    const std::int64_t n = static_cast<std::int64_t>(ptr.shape(0)) - 1;
    const std::int64_t nnz = static_cast<std::int64_t>(v.shape(0));
    if (wide)
        check_csr(static_cast<const std::int64_t*>(ind.data()),
                  static_cast<const std::int64_t*>(ptr.data()), n, nnz, d);
    else
        check_csr(static_cast<const std::int32_t*>(ind.data()),
                  static_cast<const std::int32_t*>(ptr.data()), n, nnz, d);
    LinearX x;
    x.data = v;
    x.indices = ind;
    x.indptr = ptr;
    x.view = mo::LinearData{false, wide, v.data(), ind.data(), ptr.data(), n, d};
    return x;
}

// The extent of x's data (the spans' upper limit).
std::int64_t data_size(const LinearX& x) {
    if (x.view.dense) return x.view.n * x.view.d;
    return mo::visit_rows(x.view, [](const auto& r) -> std::int64_t {
        if constexpr (std::decay_t<decltype(r)>::dense)
            return 0;
        else
            return static_cast<std::int64_t>(r.indptr[r.n]);
    });
}

void check_vector(std::size_t size, std::int64_t want, const char* name) {
    require(static_cast<std::int64_t>(size) == want,
            std::string(name) + " has the wrong length");
}

NpF1 row_norms(const LinearX& x) {
    NpF1 out = new_vector(static_cast<std::size_t>(x.view.n));
    double* o = out.data();
    nb::gil_scoped_release release;
    mo::row_norms(x.view, o);
    return out;
}

NpF1 weights(const LinearX& x, I64_1 rows, F64_1 coef) {
    const std::int64_t m = static_cast<std::int64_t>(rows.shape(0));
    check_vector(coef.shape(0), m, "coef");
    check_rows(x, rows.data(), m);
    NpF1 w = new_vector(static_cast<std::size_t>(x.view.d));
    double* o = w.data();
    nb::gil_scoped_release release;
    mo::weights(x.view, rows.data(), coef.data(), m, o);
    return w;
}

NpF1 decision(const LinearX& x, nb::object rows, F64_1 w) {
    check_vector(w.shape(0), x.view.d, "w");
    const std::int64_t* r = nullptr;
    std::int64_t m = x.view.n;
    I64_1 keep;
    if (!rows.is_none()) {
        keep = nb::cast<I64_1>(rows);
        r = keep.data();
        m = static_cast<std::int64_t>(keep.shape(0));
        check_rows(x, r, m);
    }
    NpF1 out = new_vector(static_cast<std::size_t>(m));
    double* o = out.data();
    nb::gil_scoped_release release;
    mo::decision_rows(x.view, r, m, w.data(), o);
    return out;
}

NpF2 gram(const LinearX& x, I64_1 rows) {
    const std::int64_t m = static_cast<std::int64_t>(rows.shape(0));
    check_rows(x, rows.data(), m);
    NpF2 G = new_matrix(static_cast<std::size_t>(m), static_cast<std::size_t>(m));
    double* o = G.data();
    nb::gil_scoped_release release;
    mo::gram_rows(x.view, rows.data(), m, o);
    return G;
}

void add_hessian(const LinearX& x, I64_1 rows, F64_1 coef, Out2 H) {
    const std::int64_t m = static_cast<std::int64_t>(rows.shape(0));
    check_vector(coef.shape(0), m, "coef");
    check_rows(x, rows.data(), m);
    require(static_cast<std::int64_t>(H.shape(0)) == x.view.d + 1 &&
                static_cast<std::int64_t>(H.shape(1)) == x.view.d + 1,
            "H must be of shape (n_features + 1, n_features + 1)");
    double* h = H.data();
    nb::gil_scoped_release release;
    mo::add_hessian(x.view, rows.data(), coef.data(), m, h);
}

// An epoch's arrays, checked: span (m, 2) within x's data (a dense span one row wide),
// rec (m, REC_WIDTH), value (m,), w (d,), order a permutation's entries in [0, m).
mo::EpochArrays epoch_arrays(const LinearX& x, I64_2 span, F64_2 rec, Out1 value, Out1 w,
                             OutI64_1 order, std::int64_t active) {
    const std::int64_t m = static_cast<std::int64_t>(value.shape(0));
    require(static_cast<std::int64_t>(span.shape(0)) == m && span.shape(1) == 2,
            "span must be of shape (n_variables, 2)");
    require(static_cast<std::int64_t>(rec.shape(0)) == m && rec.shape(1) == mo::REC_WIDTH,
            "rec must be of shape (n_variables, 5)");
    check_vector(order.shape(0), m, "order");
    check_vector(w.shape(0), x.view.d, "w");
    require(0 <= active && active <= m, "active must be in [0, n_variables]");
    const std::int64_t size = data_size(x);
    const std::int64_t* s = span.data();
    for (std::int64_t t = 0; t < m; ++t) {
        const std::int64_t lo = s[2 * t], hi = s[2 * t + 1];
        require(0 <= lo && lo <= hi && hi <= size && (!x.view.dense || hi - lo == x.view.d),
                "a span is outside X's data");
        require(order.data()[t] >= 0 && order.data()[t] < m, "order has an entry outside [0, m)");
    }
    return mo::EpochArrays{s, rec.data(), value.data(), w.data(), order.data(), m};
}

nb::tuple run_epoch(bool tube, const LinearX& x, I64_2 span, F64_2 rec, Out1 value, Out1 w,
                    OutI64_1 order, std::int64_t active, mo::CDState& state, bool equality,
                    double delta) {
    const mo::EpochArrays v = epoch_arrays(x, span, rec, value, w, order, active);
    mo::EpochResult r;
    {
        nb::gil_scoped_release release;
        r = tube ? mo::epoch_tube(x.view, v, active, state, equality, delta)
                 : mo::epoch_margin(x.view, v, active, state, equality, delta);
    }
    return nb::make_tuple(r.active, r.pg_max, r.pg_min);
}

double l1_squared_hinge(const LinearX& cols, F64_1 y, F64_1 C, F64_1 col_sq, Out1 w,
                        Out1 margin, OutI64_1 order, mo::L1State& state, double eps,
                        std::int64_t max_passes) {
    const std::int64_t d = cols.view.n, n = cols.view.d;
    check_vector(y.shape(0), n, "y");
    check_vector(C.shape(0), n, "C");
    check_vector(margin.shape(0), n, "margin");
    check_vector(col_sq.shape(0), d, "col_sq");
    check_vector(w.shape(0), d, "w");
    check_vector(order.shape(0), d, "order");
    require(state.active >= -1 && state.active <= d, "state.active must be in [-1, d]");
    for (std::int64_t j = 0; j < d; ++j)
        require(order.data()[j] >= 0 && order.data()[j] < d, "order has an entry outside [0, d)");
    for (std::int64_t i = 0; i < n; ++i)
        require(C(i) >= 0.0 && std::isfinite(C(i)), "C must be finite and >= 0");
    require(eps > 0.0, "eps must be > 0");
    const mo::L1Arrays a{y.data(), C.data(), col_sq.data(), w.data(), margin.data(), order.data()};
    nb::gil_scoped_release release;
    return mo::l1_squared_hinge(cols.view, a, state, eps, max_passes);
}

}  // namespace

void bind_linear(nb::module_& m) {
    nb::class_<LinearX>(m, "LinearX",
                        "X for the linear solvers: dense float64 rows or CSR with int32 or "
                        "int64 indices (a view: the arrays are kept alive, not copied).")
        .def_static("dense", &dense_x, "X"_a.noconvert(),
                    "Dense rows: X of shape (n, d), C-ordered float64 (not converted).")
        .def_static("csr", &csr_x, "data"_a.noconvert(), "indices"_a.noconvert(),
                    "indptr"_a.noconvert(), "n_cols"_a,
                    "CSR rows: float64 data, int32 or int64 indices and indptr (sorted).")
        .def_prop_ro("n", [](const LinearX& x) { return x.view.n; })
        .def_prop_ro("d", [](const LinearX& x) { return x.view.d; })
        .def_prop_ro("is_dense", [](const LinearX& x) { return x.view.dense; })
        .def_prop_ro("nnz", &data_size)
        .def_prop_ro("index_bits",
                     [](const LinearX& x) { return x.view.dense ? 0 : (x.view.wide ? 64 : 32); },
                     "The width of the CSR indices (0 for dense rows).")
        .def("row_norms", &row_norms, "||x_r||^2 of every row, shape (n,).")
        .def("weights", &weights, "rows"_a, "coef"_a, "w = sum_t coef[t] x_{rows[t]}, shape (d,).")
        .def("decision", &decision, "rows"_a.none(), "w"_a,
             "x_{rows[t]} . w, shape (len(rows),); rows None: every row.")
        .def("gram", &gram, "rows"_a, "X_R X_R^T of the rows R, shape (len(R), len(R)).")
        .def("add_hessian", &add_hessian, "rows"_a, "coef"_a, "H"_a.noconvert(),
             "H += sum_t coef[t] [x; 1][x; 1]^T over x = x_{rows[t]} (upper triangle and the "
             "last column).")
        .def("epoch_margin",
             [](const LinearX& x, I64_2 span, F64_2 rec, Out1 alpha, Out1 w, OutI64_1 order,
                std::int64_t active, mo::CDState& state, bool equality, double delta) {
                 return run_epoch(false, x, span, rec, alpha, w, order, active, state, equality,
                                  delta);
             },
             "span"_a, "rec"_a, "alpha"_a.noconvert(), "w"_a.noconvert(), "order"_a.noconvert(),
             "active"_a, "state"_a, "equality"_a,
             "delta"_a,
             "One epoch of liblinear's dual CD over standard-form variables; rec[t] = (y, p, "
             "u, D, Q_tt + D). Returns (active, PG_max, PG_min).")
        .def("epoch_tube",
             [](const LinearX& x, I64_2 span, F64_2 rec, Out1 beta, Out1 w, OutI64_1 order,
                std::int64_t active, mo::CDState& state, bool equality, double delta) {
                 return run_epoch(true, x, span, rec, beta, w, order, active, state, equality,
                                  delta);
             },
             "span"_a, "rec"_a, "beta"_a.noconvert(), "w"_a.noconvert(), "order"_a.noconvert(),
             "active"_a, "state"_a, "equality"_a,
             "delta"_a,
             "One epoch of Ho and Lin's dual CD for eps-SVR in beta = a - a_hat; rec[i] = (z, "
             "eps, u, D, ||x||^2 + D). Returns (active, largest violation, 0).");

    nb::class_<mo::CDState>(m, "CDState",
                            "A coordinate-descent run's state between epochs: the previous "
                            "epoch's projected-gradient bounds (shrinking), the intercept's "
                            "multiplier lam and penalty rho (b = lam + rho (sum - delta)), the "
                            "running sum (y^T alpha or sum beta) and the generator's state.")
        .def(nb::init<>())
        .def_rw("pg_max_old", &mo::CDState::pg_max_old)
        .def_rw("pg_min_old", &mo::CDState::pg_min_old)
        .def_rw("lam", &mo::CDState::lam)
        .def_rw("rho", &mo::CDState::rho)
        .def_rw("sum", &mo::CDState::sum)
        .def_rw("rng", &mo::CDState::rng);
    m.attr("REC_WIDTH") = mo::REC_WIDTH;
    nb::class_<mo::L1State>(m, "L1State",
                            "An L1-regularized run's state between calls: passes, the last "
                            "pass's largest violation (shrinking), the first pass's summed "
                            "violation, the active features and the generator's state.")
        .def(nb::init<>())
        .def_rw("passes", &mo::L1State::passes)
        .def_rw("gmax_old", &mo::L1State::gmax_old)
        .def_rw("gnorm1_init", &mo::L1State::gnorm1_init)
        .def_rw("active", &mo::L1State::active)
        .def_rw("rng", &mo::L1State::rng);
    m.def("l1_squared_hinge", &l1_squared_hinge, "cols"_a, "y"_a, "C"_a, "col_sq"_a,
          "w"_a.noconvert(), "margin"_a.noconvert(), "order"_a.noconvert(), "state"_a, "eps"_a,
          "max_passes"_a,
          "liblinear's -s 5 (CDN) on min ||w||_1 + sum C_i max(0, 1 - y_i w.x_i)^2, X's "
          "columns the rows of cols; margin = 1 - y X w kept with w. Returns the last pass's "
          "summed violation.");
    m.def(
        "huber_line_step",
        [](F64_1 t, F64_1 dm, F64_1 c, double h, double lin, double ss, double scale) {
            const std::int64_t n = static_cast<std::int64_t>(t.shape(0));
            check_vector(dm.shape(0), n, "dm");
            check_vector(c.shape(0), n, "c");
            require(h > 0.0, "h must be > 0");
            const mo::LineStep r =
                mo::huber_line_step(t.data(), dm.data(), c.data(), n, h, lin, ss, scale);
            return nb::make_tuple(r.theta, r.exact);
        },
        "t"_a, "dm"_a, "c"_a, "h"_a, "lin"_a, "ss"_a, "scale"_a,
        "The Huber primal's exact line search: (theta, whether theta = 1 is exact).");
}
