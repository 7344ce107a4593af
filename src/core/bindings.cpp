// margin_opt._core: the compiled core's Python face (nanobind).  Arrays are taken as
// they are (C-contiguous float64 / int64, read-only allowed, no copy); shapes and
// indices are checked here, before the GIL is released, so that a wrong argument is a
// ValueError and never a read out of bounds.

#include <array>
#include <cmath>
#include <memory>

#include "bind.hpp"
#include "blas.hpp"
#include "kernel.hpp"
#include "one_vs_one.hpp"
#include "pool.hpp"
#include "reading.hpp"
#include "smo.hpp"

namespace nb = nanobind;
using namespace nb::literals;
namespace mo = margin_opt;
using namespace mo::bind;

namespace {

// Rows of a data matrix (dense or CSR), holding the arrays it views.
struct Rows {
    F64_2 X;
    F64_1 data;
    I64_1 indices, indptr;
    mo::RowsView view;
};

Rows dense_rows(F64_2 X) {
    Rows r;
    r.X = X;
    r.view.sparse = false;
    r.view.n = static_cast<std::int64_t>(X.shape(0));
    r.view.d = static_cast<std::int64_t>(X.shape(1));
    r.view.X = X.data();
    return r;
}

Rows csr_rows(F64_1 data, I64_1 indices, I64_1 indptr, std::int64_t n_cols) {
    require(indptr.shape(0) >= 1, "indptr must have n_rows + 1 entries");
    require(data.shape(0) == indices.shape(0), "data and indices differ in length");
    const std::int64_t n = static_cast<std::int64_t>(indptr.shape(0)) - 1;
    const std::int64_t* p = indptr.data();
    require(p[0] == 0 && p[n] == static_cast<std::int64_t>(data.shape(0)),
            "indptr must run from 0 to nnz");
    const std::int64_t* ind = indices.data();
    for (std::int64_t i = 0; i < n; ++i) {
        require(p[i] <= p[i + 1] && p[i + 1] <= p[n], "indptr must not decrease");
        for (std::int64_t q = p[i]; q < p[i + 1]; ++q)
            require(ind[q] >= 0 && ind[q] < n_cols && (q == p[i] || ind[q - 1] < ind[q]),
                    "column indices must be sorted, unique and below n_cols");
    }
    Rows r;
    r.data = data;
    r.indices = indices;
    r.indptr = indptr;
    r.view.sparse = true;
    r.view.n = n;
    r.view.d = n_cols;
    r.view.data = data.data();
    r.view.indices = ind;
    r.view.indptr = p;
    return r;
}

// The support vectors of an expansion, prepared (kernel.hpp's SupportView).
struct Support {
    Rows rows;
    F64_1 sq, shift;
    F64_2 transpose;
    mo::SupportView view;
};

Support make_support(const Rows& rows, F64_1 sq, nb::object shift, nb::object transpose) {
    Support s;
    s.rows = rows;
    s.sq = sq;
    s.view.rows = rows.view;
    require(static_cast<std::int64_t>(sq.shape(0)) == rows.view.n,
            "sq must have one entry per support vector");
    s.view.sq = sq.data();
    if (!shift.is_none()) {
        s.shift = nb::cast<F64_1>(shift);
        require(static_cast<std::int64_t>(s.shift.shape(0)) == rows.view.d,
                "shift must have one entry per feature");
        s.view.shift = s.shift.data();
    }
    if (!transpose.is_none()) {
        s.transpose = nb::cast<F64_2>(transpose);
        require(static_cast<std::int64_t>(s.transpose.shape(0)) == rows.view.d &&
                    static_cast<std::int64_t>(s.transpose.shape(1)) == rows.view.n,
                "transpose must be of shape (n_features, n_SV)");
        s.view.transpose = s.transpose.data();
    }
    require(rows.view.sparse ? s.view.transpose != nullptr : s.view.shift != nullptr,
            "dense support vectors need shift; sparse ones their dense transpose");
    return s;
}

// A kernel expansion's coefficients and layout (kernel.hpp's ExpansionView).
struct Expansion {
    F64_2 W;
    I64_2 tiles;
    I64_1 a_slot, a_col, b_slot, b_col;
    F64_1 intercept;
    mo::ExpansionView view;
};

Expansion make_expansion(F64_2 W, I64_2 tiles, I64_1 a_slot, I64_1 a_col, I64_1 b_slot,
                         I64_1 b_col, F64_1 intercept, std::int64_t n_groups) {
    const std::int64_t nsv = W.shape(0), ncol = W.shape(1), nt = tiles.shape(0);
    const std::int64_t nfun = intercept.shape(0);
    require(tiles.shape(1) == 3, "tiles must be of shape (n_tiles, 3)");
    require(n_groups >= 1 && ncol >= 1, "n_groups and W's columns must be at least 1");
    std::int64_t tw = 1;
    for (std::int64_t t = 0; t < nt; ++t) {
        const std::int64_t lo = tiles(t, 0), hi = tiles(t, 1), g = tiles(t, 2);
        require(0 <= lo && lo < hi && hi <= nsv && 0 <= g && g < n_groups,
                "a tile is outside W's rows or its groups");
        tw = std::max(tw, hi - lo);
    }
    for (const I64_1* a : {&a_slot, &a_col, &b_slot, &b_col})
        require(static_cast<std::int64_t>(a->shape(0)) == nfun,
                "the slots and columns need one entry per function");
    for (std::int64_t p = 0; p < nfun; ++p) {
        require(0 <= a_slot(p) && a_slot(p) < n_groups && 0 <= a_col(p) && a_col(p) < ncol,
                "a_slot/a_col outside the groups");
        require(b_slot(p) < n_groups && (b_slot(p) < 0 || (0 <= b_col(p) && b_col(p) < ncol)),
                "b_slot/b_col outside the groups");
    }
    Expansion e{W, tiles, a_slot, a_col, b_slot, b_col, intercept, {}};
    e.view = mo::ExpansionView{W.data(), ncol, n_groups, tiles.data(), nt, tw, a_slot.data(),
                               a_col.data(), b_slot.data(), b_col.data(), intercept.data(), nfun};
    return e;
}

void expansion_values(const mo::KernelSpec& kernel, const Rows& queries, const Support& support,
                      const Expansion& ex, Out2 out, int threads, std::int64_t block_rows) {
    require(queries.view.d == support.view.rows.d, "queries and support vectors differ in width");
    require(queries.view.sparse == support.view.rows.sparse,
            "queries and support vectors must both be dense or both CSR");
    require(ex.view.W == nullptr || static_cast<std::int64_t>(ex.W.shape(0)) == support.view.rows.n,
            "W must have one row per support vector");
    require(static_cast<std::int64_t>(out.shape(0)) == queries.view.n &&
                static_cast<std::int64_t>(out.shape(1)) == ex.view.nfun,
            "out must be of shape (n_queries, n_functions)");
    require(threads >= 1 && block_rows >= 1, "threads and block_rows must be at least 1");
    require(queries.view.d < (1LL << 31) && ex.view.tile_width < (1LL << 31),
            "too many features for BLAS's int dimensions");
    mo::load_blas();
    mo::Blocking blocking{threads, block_rows};
    double* o = out.data();
    nb::gil_scoped_release release;
    mo::expansion_values(kernel, queries.view, support.view, ex.view, blocking, o);
}

// An SMO run (smo.hpp's Solver) with the data it reads kept alive.
struct SMORun {
    Rows rows;
    F64_2 gram;
    std::int64_t m = 0;
    std::unique_ptr<mo::Solver> solver;
};

void make_smo(SMORun* self, const mo::KernelSpec& kernel, nb::object rows, nb::object gram,
              F64_1 y, F64_1 p, F64_1 upper, I64_1 index, F64_1 alpha0, bool equality,
              double delta, const mo::SolverSettings& settings, double dense_budget) {
    new (self) SMORun();
    mo::KernelSource src;
    src.kernel = kernel;
    src.dense_budget = dense_budget;
    if (!gram.is_none()) {
        self->gram = nb::cast<F64_2>(gram);
        src.n = static_cast<std::int64_t>(self->gram.shape(0));
        require(static_cast<std::int64_t>(self->gram.shape(1)) == src.n,
                "the kernel matrix must be square");
        src.gram = self->gram.data();
    } else {
        require(!rows.is_none(), "give the data rows or a kernel matrix");
        self->rows = nb::cast<Rows>(rows);
        src.rows = self->rows.view;
        src.n = self->rows.view.n;
    }
    const std::int64_t m = static_cast<std::int64_t>(y.shape(0));
    require(m >= 1, "the dual QP has no variables");
    for (std::int64_t len : {static_cast<std::int64_t>(p.shape(0)),
                             static_cast<std::int64_t>(upper.shape(0)),
                             static_cast<std::int64_t>(index.shape(0)),
                             static_cast<std::int64_t>(alpha0.shape(0))})
        require(len == m, "y, p, upper, index and alpha0 must have one entry per variable");
    for (std::int64_t t = 0; t < m; ++t) {
        require(index(t) >= 0 && index(t) < src.n, "index must hold data rows in [0, n)");
        require(y(t) == 1.0 || y(t) == -1.0, "y must hold the signs +-1");
        require(alpha0(t) >= 0.0 && alpha0(t) <= upper(t), "alpha0 must lie in [0, upper]");
    }
    require(settings.threads >= 1, "threads must be at least 1");
    if (settings.two_equalities) {
        require(equality, "two_equalities (e'a held too) needs the equality y'a = delta");
        bool pos = false, neg = false;
        for (std::int64_t t = 0; t < m; ++t) (y(t) > 0 ? pos : neg) = true;
        require(pos && neg, "two_equalities needs variables of both signs of y");
    }
    mo::DualArrays qp;
    qp.m = m;
    qp.y = y.data();
    qp.p = p.data();
    qp.upper = upper.data();
    qp.index = index.data();
    qp.alpha0 = alpha0.data();
    qp.equality = equality;
    qp.delta = delta;
    self->m = m;
    if (src.gram == nullptr && !src.rows.sparse) mo::load_blas();
    nb::gil_scoped_release release;
    self->solver = std::make_unique<mo::Solver>(src, qp, settings);
}

int smo_run(SMORun& r, double tol, std::int64_t max_iter, std::int64_t stop_at,
            double then_tol, double min_work) {
    nb::gil_scoped_release release;
    return r.solver->run(tol, max_iter, stop_at, then_tol, min_work);
}

void smo_unshrink(SMORun& r) {
    nb::gil_scoped_release release;
    r.solver->unshrink();
}

void smo_assign_with_gradient(SMORun& r, I64_1 vars, F64_1 values, F64_1 dG) {
    const std::int64_t c = static_cast<std::int64_t>(vars.shape(0));
    require(static_cast<std::int64_t>(values.shape(0)) == c, "vars and values differ in length");
    require(static_cast<std::int64_t>(dG.shape(0)) == r.m, "dG must have one entry per variable");
    for (std::int64_t k = 0; k < c; ++k)
        require(vars(k) >= 0 && vars(k) < r.m, "vars must hold variables in [0, m)");
    nb::gil_scoped_release release;
    r.solver->assign_with_gradient(vars.data(), values.data(), c, dG.data());
}

void smo_q_block(SMORun& r, I64_1 rows, I64_1 cols, Out2 out) {
    const std::int64_t nr = rows.shape(0), nc = cols.shape(0);
    require(static_cast<std::int64_t>(out.shape(0)) == nr &&
                static_cast<std::int64_t>(out.shape(1)) == nc,
            "out must be of shape (len(rows), len(cols))");
    for (const I64_1* a : {&rows, &cols})
        for (std::int64_t k = 0; k < static_cast<std::int64_t>(a->shape(0)); ++k)
            require((*a)(k) >= 0 && (*a)(k) < r.m, "rows and cols must hold variables in [0, m)");
    double* o = out.data();
    nb::gil_scoped_release release;
    r.solver->q_block(rows.data(), nr, cols.data(), nc, o);
}

void smo_read(const SMORun& r, Out1 alpha, Out1 grad) {
    require(static_cast<std::int64_t>(alpha.shape(0)) == r.m &&
                static_cast<std::int64_t>(grad.shape(0)) == r.m,
            "alpha and grad must have one entry per variable");
    r.solver->read(alpha.data(), grad.data());
}

double smo_intercept(const SMORun& r) {
    require(r.solver->active_size() == r.m, "every variable must be active: unshrink() first");
    require(!r.solver->two_equalities(), "with two equalities the read-out is nu_rho()");
    return r.solver->intercept();
}

nb::tuple smo_nu_rho(const SMORun& r) {
    require(r.solver->active_size() == r.m, "every variable must be active: unshrink() first");
    require(r.solver->two_equalities(), "nu_rho() is the read-out of two equalities");
    const mo::NuReadout out = r.solver->nu_rho();
    return nb::make_tuple(out.rho, out.r);
}

double smo_relative_gap(const SMORun& r, double b, double c) {
    require(r.solver->active_size() == r.m, "every variable must be active: unshrink() first");
    require(c == 0.0 || r.solver->two_equalities(), "c (e'a's multiplier) needs two equalities");
    return r.solver->relative_gap(b, c);
}

void kernel_matrix(const mo::KernelSpec& kernel, const Rows& rows, Out2 out, int threads) {
    require(!rows.view.sparse, "kernel_matrix takes dense rows");
    require(static_cast<std::int64_t>(out.shape(0)) == rows.view.n &&
                static_cast<std::int64_t>(out.shape(1)) == rows.view.n,
            "out must be of shape (n, n)");
    require(threads >= 1, "threads must be at least 1");
    require(rows.view.n < (1LL << 31) && rows.view.d < (1LL << 31),
            "too many rows or features for BLAS's int dimensions");
    mo::load_blas();
    double* o = out.data();
    nb::gil_scoped_release release;
    mo::kernel_matrix(kernel, rows.view, threads, o);
}

void pair_block(F64_2 K, std::int64_t i0, std::int64_t ni, std::int64_t j0, std::int64_t nj,
                Out2 out) {
    const auto n = static_cast<std::int64_t>(K.shape(0));
    require(static_cast<std::int64_t>(K.shape(1)) == n, "K must be square");
    require(ni >= 0 && nj >= 0 && i0 >= 0 && j0 >= 0 && i0 <= n - ni && j0 <= n - nj,
            "the runs of rows must lie inside K");
    const std::int64_t m = ni + nj;
    require(static_cast<std::int64_t>(out.shape(0)) == m &&
                static_cast<std::int64_t>(out.shape(1)) == m,
            "out must be of shape (ni + nj, ni + nj)");
    const double* k = K.data();
    double* o = out.data();
    nb::gil_scoped_release release;
    mo::pair_block(k, n, mo::BlockRuns{i0, ni, j0, nj}, o);
}

// A one-vs-one fit's class-grouped kernel values (kernel.hpp's ClassKernel).
struct ClassKernelObj {
    mo::ClassKernel ck;
};

void make_class_kernel(ClassKernelObj* self, const mo::KernelSpec& kernel, const Rows& rows,
                       I64_1 sizes, int threads) {
    require(!rows.view.sparse, "ClassKernel takes dense rows");
    require(threads >= 1, "threads must be at least 1");
    require(rows.view.n < (1LL << 31) && rows.view.d < (1LL << 31),
            "too many rows or features for BLAS's int dimensions");
    std::vector<std::int64_t> sz(sizes.data(), sizes.data() + sizes.shape(0));
    std::int64_t total = 0;
    for (const std::int64_t s : sz) {
        require(s >= 0 && s <= rows.view.n - total, "the class sizes must add up to the rows");
        total += s;
    }
    require(total == rows.view.n, "the class sizes must add up to the rows");
    mo::load_blas();
    new (self) ClassKernelObj();
    nb::gil_scoped_release release;
    mo::class_kernel_init(self->ck, kernel, rows.view, sz, threads);
}

void class_kernel_pair(const ClassKernelObj& self, std::int64_t i, std::int64_t j, Out2 out) {
    const auto k = static_cast<std::int64_t>(self.ck.size.size());
    require(i >= 0 && i < k && j >= 0 && j < k, "a class index is out of range");
    const std::int64_t m = self.ck.size[i] + self.ck.size[j];
    require(static_cast<std::int64_t>(out.shape(0)) == m &&
                static_cast<std::int64_t>(out.shape(1)) == m,
            "out must be of shape (n_i + n_j, n_i + n_j)");
    double* o = out.data();
    nb::gil_scoped_release release;
    mo::class_kernel_pair(self.ck, i, j, o);
}

// A one-vs-one fit's pairs and their answers (one_vs_one.hpp), with what the blocks
// read kept alive.
struct PairBatchObj {
    mo::PairBatch batch;
    nb::object classes;
    F64_2 K;
};

void make_pair_batch(PairBatchObj* self, nb::object classes, nb::object K, I64_1 sizes,
                     I64_2 pairs, F64_1 upper, I64_2 limits) {
    new (self) PairBatchObj();
    mo::PairBatch& b = self->batch;
    b.blocks.size.assign(sizes.data(), sizes.data() + sizes.shape(0));
    const auto k = static_cast<std::int64_t>(b.blocks.size.size());
    std::int64_t n = 0;
    for (const std::int64_t s : b.blocks.size) {
        require(s >= 0, "the class sizes must not be negative");
        b.blocks.start.push_back(n);
        n += s;
    }
    b.blocks.n = n;
    if (!classes.is_none()) {
        const ClassKernelObj& ck = nb::cast<const ClassKernelObj&>(classes);
        require(ck.ck.size == b.blocks.size, "sizes must be the ClassKernel's class sizes");
        self->classes = classes;
        b.blocks.classes = &ck.ck;
    } else {
        require(!K.is_none(), "give a ClassKernel or the kernel matrix K");
        self->K = nb::cast<F64_2>(K);
        require(static_cast<std::int64_t>(self->K.shape(0)) == n &&
                    static_cast<std::int64_t>(self->K.shape(1)) == n,
                "K must be of shape (n, n), n the sum of the class sizes");
        b.blocks.K = self->K.data();
    }
    require(static_cast<std::int64_t>(upper.shape(0)) == n, "upper must have one entry per row");
    for (std::int64_t r = 0; r < n; ++r)
        require(std::isfinite(upper(r)) && upper(r) >= 0.0, "upper must be finite and >= 0");
    b.upper.assign(upper.data(), upper.data() + n);
    require(pairs.shape(1) == 2, "pairs must be of shape (count, 2)");
    const auto count = static_cast<std::int64_t>(pairs.shape(0));
    b.offset.assign(1, 0);
    for (std::int64_t q = 0; q < count; ++q) {
        const std::int64_t i = pairs(q, 0), j = pairs(q, 1);
        require(i >= 0 && i < k && j >= 0 && j < k && i != j,
                "pairs must hold two different classes in [0, n_classes)");
        b.pairs.push_back(i);
        b.pairs.push_back(j);
        b.offset.push_back(b.offset.back() + b.blocks.size[i] + b.blocks.size[j]);
    }
    require(static_cast<std::int64_t>(limits.shape(0)) == count &&
                static_cast<std::int64_t>(limits.shape(1)) == mo::PAIR_LIMITS,
            "limits must be of shape (count, 2): max_iter and stall_window");
    for (std::int64_t q = 0; q < count; ++q) {
        require(limits(q, 0) >= 1 && limits(q, 1) >= 1, "the limits must be at least 1");
        b.limits.push_back(limits(q, 0));
        b.limits.push_back(limits(q, 1));
    }
    const auto total = static_cast<std::size_t>(b.offset.back());
    for (auto* v : {&b.alpha, &b.grad, &b.decision, &b.xi}) v->assign(total, 0.0);
    b.num.assign(static_cast<std::size_t>(count * mo::READING_SIZE), 0.0);
    b.stats.assign(static_cast<std::size_t>(count * mo::PAIR_STATS), 0.0);
}

void pair_batch_solve(PairBatchObj& self, std::int64_t first, std::int64_t last,
                      const mo::SolverSettings& settings, const mo::PairStopping& stop,
                      nb::object reading, int threads) {
    require(first >= 0 && first <= last && last <= self.batch.count(),
            "first and last must satisfy 0 <= first <= last <= count");
    require(threads >= 1, "threads must be at least 1");
    require(!settings.two_equalities, "the one-vs-one pairs have one equality each");
    mo::ReadingTolerances tols;
    const bool read = !reading.is_none();
    if (read) {
        const nb::tuple t = nb::cast<nb::tuple>(reading);
        require(t.size() == 3, "reading must be (tol, tau, sv_threshold)");
        tols.tol = nb::cast<double>(t[0]);
        tols.tau = nb::cast<double>(t[1]);
        tols.sv_threshold = nb::cast<double>(t[2]);
    }
    if (self.batch.blocks.classes != nullptr) mo::load_blas();
    nb::gil_scoped_release release;
    mo::solve_pairs(self.batch, first, last, settings, stop, read ? &tols : nullptr, threads);
}

// A read-only NumPy view of one of the batch's arrays (the batch kept alive by it).
template <std::size_t D>
nb::ndarray<nb::numpy, const double, nb::ndim<D>> batch_view(const std::vector<double>& v,
                                                             std::array<std::size_t, D> shape) {
    return nb::ndarray<nb::numpy, const double, nb::ndim<D>>(v.data(), D, shape.data(),
                                                             nb::handle());
}

// One of the batch's concatenated answers (alpha, grad, decision, xi) as a view.
template <std::vector<double> mo::PairBatch::*field>
nb::ndarray<nb::numpy, const double, nb::ndim<1>> answer_view(const PairBatchObj& s) {
    const std::vector<double>& v = s.batch.*field;
    return batch_view<1>(v, {v.size()});
}

void dual_qp_reading(F64_2 K, F64_1 y, F64_1 p, F64_1 up, F64_1 alpha, double b, double tol,
                     double tau, double sv_threshold, Out1 decision, Out1 xi, Out1 num) {
    const auto m = static_cast<std::int64_t>(y.shape(0));
    require(static_cast<std::int64_t>(K.shape(0)) == m &&
                static_cast<std::int64_t>(K.shape(1)) == m,
            "K must be of shape (m, m), m = len(y)");
    for (const auto* v : {&p, &up, &alpha})
        require(static_cast<std::int64_t>(v->shape(0)) == m, "p, up and alpha must have m values");
    require(static_cast<std::int64_t>(decision.shape(0)) == m &&
                static_cast<std::int64_t>(xi.shape(0)) == m,
            "decision and xi must have m values");
    require(static_cast<std::int64_t>(num.shape(0)) == mo::READING_SIZE,
            "num must have " + std::to_string(mo::READING_SIZE) + " values");
    const mo::DualAnswer qp{K.data(), m, y.data(), p.data(), up.data(), alpha.data(), b};
    const mo::ReadingTolerances tols{tol, tau, sv_threshold};
    const mo::DualReading out{decision.data(), xi.data(), num.data()};
    nb::gil_scoped_release release;
    mo::dual_qp_reading(qp, tols, out);
}

}  // namespace

NB_MODULE(_core, m) {
    m.doc() = "margin_opt's compiled core (C++17, nanobind): the kernel engine and its pool, "
              "SMO, the linear solvers.";
    bind_linear(m);
    bind_crammer_singer(m);

    nb::class_<mo::KernelSpec>(m, "KernelSpec", "A named kernel: kind (0 linear, 1 poly, "
                               "2 rbf, 3 sigmoid), gamma, coef0, degree.")
        .def("__init__", [](mo::KernelSpec* k, int kind, double gamma, double coef0, int degree) {
                 require(kind >= mo::K_LINEAR && kind <= mo::K_SIGMOID, "unknown kernel kind");
                 require(degree >= 0, "degree must be at least 0");
                 new (k) mo::KernelSpec{kind, gamma, coef0, degree};
             }, "kind"_a, "gamma"_a, "coef0"_a, "degree"_a)
        .def_ro("kind", &mo::KernelSpec::kind)
        .def_ro("gamma", &mo::KernelSpec::gamma)
        .def_ro("coef0", &mo::KernelSpec::coef0)
        .def_ro("degree", &mo::KernelSpec::degree);

    nb::class_<Rows>(m, "Rows", "Rows of a data matrix, dense or CSR (a view: the arrays "
                     "are held, not copied).")
        .def_static("dense", &dense_rows, "X"_a)
        .def_static("csr", &csr_rows, "data"_a, "indices"_a, "indptr"_a, "n_cols"_a)
        .def_prop_ro("shape", [](const Rows& r) { return nb::make_tuple(r.view.n, r.view.d); })
        .def_prop_ro("sparse", [](const Rows& r) { return r.view.sparse; });

    nb::class_<Support>(m, "Support", "Prepared support vectors: rows (centred by shift when "
                        "dense), squared norms, the dense transpose of CSR rows.")
        .def(nb::new_(&make_support), "rows"_a, "sq"_a, "shift"_a = nb::none(),
             "transpose"_a = nb::none());

    nb::class_<Expansion>(m, "Expansion", "Coefficients and layout of a kernel expansion.")
        .def(nb::new_(&make_expansion), "W"_a, "tiles"_a, "a_slot"_a, "a_col"_a, "b_slot"_a,
             "b_col"_a, "intercept"_a, "n_groups"_a);

    m.def("expansion_values", &expansion_values, "kernel"_a, "queries"_a, "support"_a,
          "expansion"_a, "out"_a.noconvert(), "threads"_a, "block_rows"_a,
          "out = the expansion's values at the queries, by blocks over `threads` threads.");
    nb::class_<mo::SolverSettings>(m, "SolverSettings", "What an SMO run does: second_order "
                                   "(WSS 2), shrinking, cache_bytes, threads, alpha_cap, "
                                   "stall_window, two_equalities (LIBSVM's Solver_NU: "
                                   "e'a held too).")
        .def(nb::init<>())
        .def_rw("second_order", &mo::SolverSettings::second_order)
        .def_rw("shrinking", &mo::SolverSettings::shrinking)
        .def_rw("cache_bytes", &mo::SolverSettings::cache_bytes)
        .def_rw("threads", &mo::SolverSettings::threads)
        .def_rw("alpha_cap", &mo::SolverSettings::alpha_cap)
        .def_rw("stall_window", &mo::SolverSettings::stall_window)
        .def_rw("two_equalities", &mo::SolverSettings::two_equalities);

    nb::class_<SMORun>(m, "SMO", "LIBSVM's SMO on the standard dual QP (smo.hpp).")
        .def("__init__", &make_smo, "kernel"_a, "rows"_a.none(), "gram"_a.none(), "y"_a, "p"_a,
             "upper"_a, "index"_a, "alpha0"_a, "equality"_a, "delta"_a, "settings"_a,
             "dense_budget"_a)
        .def("run", &smo_run, "tol"_a, "max_iter"_a, "stop_at"_a, "then_tol"_a = -1.0,
             "min_work"_a = 0.0,
             "Iterate to m - M <= tol, or to stop_at / max_iter iterations; a RunCode. "
             "Where tol is reached with less work than min_work, on to then_tol.")
        .def("unshrink", &smo_unshrink, "Every variable active, its gradient exact.")
        .def("assign_with_gradient", &smo_assign_with_gradient, "vars"_a, "values"_a, "dG"_a,
             "a[vars] = values with the gradient's change dG = Q[:, vars] (values - a[vars]).")
        .def("q_block", &smo_q_block, "rows"_a, "cols"_a, "out"_a.noconvert(), "out = Q[rows, cols].")
        .def("read", &smo_read, "alpha"_a.noconvert(), "grad"_a.noconvert(),
             "a and the gradient, in variable order.")
        .def("intercept", &smo_intercept,
             "LIBSVM's b = -rho from the free variables' gradient (after unshrink()).")
        .def("nu_rho", &smo_nu_rho,
             "Two equalities: (rho, r) of LIBSVM's Solver_NU::calculate_rho (after "
             "unshrink()); y'a's multiplier is b = -rho, e'a's is -r.")
        .def("relative_gap", &smo_relative_gap, "b"_a, "c"_a = 0.0,
             "|P - D| / max(|P|, |D|) at intercept b (and, with two equalities, e'a's "
             "multiplier c), from the gradient (after unshrink()).")
        .def("set_threads", [](SMORun& r, int t) { r.solver->set_threads(t); }, "threads"_a)
        .def("reset_progress", [](SMORun& r) { r.solver->reset_progress(); })
        .def_prop_ro("iterations", [](const SMORun& r) { return r.solver->counters().iterations; })
        .def_prop_ro("reconstructions",
                     [](const SMORun& r) { return r.solver->counters().reconstructions; })
        .def_prop_ro("shrinks", [](const SMORun& r) { return r.solver->counters().shrinks; })
        .def_prop_ro("active_sum", [](const SMORun& r) { return r.solver->counters().active_sum; })
        .def_prop_ro("last_gap", [](const SMORun& r) { return r.solver->counters().last_gap; })
        .def_prop_ro("active_size", [](const SMORun& r) { return r.solver->active_size(); })
        .def_prop_ro("hits", [](const SMORun& r) { return r.solver->hits(); })
        .def_prop_ro("misses", [](const SMORun& r) { return r.solver->misses(); })
        .def_prop_ro("recuts", [](const SMORun& r) { return r.solver->recuts(); })
        .def_prop_ro("layout", [](const SMORun& r) { return r.solver->layout(); });
    m.attr("R_OPTIMAL") = static_cast<int>(mo::R_OPTIMAL);
    m.attr("R_MAX_ITER") = static_cast<int>(mo::R_MAX_ITER);
    m.attr("R_CHUNK") = static_cast<int>(mo::R_CHUNK);
    m.attr("R_STALLED") = static_cast<int>(mo::R_STALLED);
    m.attr("R_CAP") = static_cast<int>(mo::R_CAP);
    m.def("kernel_matrix", &kernel_matrix, "kernel"_a, "rows"_a, "out"_a.noconvert(), "threads"_a,
          "out = the n x n kernel matrix of dense rows (RBF centred first).");
    m.def("pair_block", &pair_block, "K"_a, "i0"_a, "ni"_a, "j0"_a, "nj"_a, "out"_a.noconvert(),
          "out = K's rows and columns [i0, i0 + ni) then [j0, j0 + nj) (a one-vs-one "
          "pair's block of the shared kernel matrix).");
    nb::class_<ClassKernelObj>(m, "ClassKernel",
                               "Dense training rows grouped by class for a one-vs-one fit: "
                               "each class's kernel block computed once, a pair's block on "
                               "demand.")
        .def("__init__", &make_class_kernel, "kernel"_a, "rows"_a, "sizes"_a, "threads"_a)
        .def("pair", &class_kernel_pair, "i"_a, "j"_a, "out"_a.noconvert(),
             "out = the kernel matrix of class i's rows then class j's (exactly symmetric; "
             "the GIL released).");
    nb::class_<mo::PairStopping>(m, "PairStopping", "A one-vs-one pair's first stop: phase, "
                                 "tol, gap_tol (< 0: none), min_work, and the gap test's tightening "
                                 "(tol_floor, gap_aim, shrink_min, shrink_max).")
        .def(nb::init<>())
        .def_rw("phase", &mo::PairStopping::phase)
        .def_rw("tol", &mo::PairStopping::tol)
        .def_rw("gap_tol", &mo::PairStopping::gap_tol)
        .def_rw("min_work", &mo::PairStopping::min_work)
        .def_rw("tol_floor", &mo::PairStopping::tol_floor)
        .def_rw("gap_aim", &mo::PairStopping::gap_aim)
        .def_rw("shrink_min", &mo::PairStopping::shrink_min)
        .def_rw("shrink_max", &mo::PairStopping::shrink_max);
    nb::class_<PairBatchObj>(m, "PairBatch",
                             "A one-vs-one fit's pairs solved on the core's threads "
                             "(one_vs_one.hpp); answers concatenated in pair order.")
        .def("__init__", &make_pair_batch, "classes"_a.none(), "K"_a.none(), "sizes"_a,
             "pairs"_a, "upper"_a, "limits"_a)
        .def("solve", &pair_batch_solve, "first"_a, "last"_a, "settings"_a, "stopping"_a,
             "reading"_a.none(), "threads"_a,
             "Solves pairs [first, last); reading: (tol, tau, sv_threshold) or None.")
        .def_prop_ro("offset", [](const PairBatchObj& s) {
            return nb::ndarray<nb::numpy, const std::int64_t, nb::ndim<1>>(
                s.batch.offset.data(), {s.batch.offset.size()}, nb::handle());
        }, nb::rv_policy::reference_internal)
        .def_prop_ro("alpha", &answer_view<&mo::PairBatch::alpha>, nb::rv_policy::reference_internal)
        .def_prop_ro("grad", &answer_view<&mo::PairBatch::grad>, nb::rv_policy::reference_internal)
        .def_prop_ro("decision", &answer_view<&mo::PairBatch::decision>,
                     nb::rv_policy::reference_internal)
        .def_prop_ro("xi", &answer_view<&mo::PairBatch::xi>, nb::rv_policy::reference_internal)
        .def_prop_ro("num", [](const PairBatchObj& s) {
            return batch_view<2>(s.batch.num, {static_cast<std::size_t>(s.batch.count()),
                                               static_cast<std::size_t>(mo::READING_SIZE)});
        }, nb::rv_policy::reference_internal)
        .def_prop_ro("stats", [](const PairBatchObj& s) {
            return batch_view<2>(s.batch.stats, {static_cast<std::size_t>(s.batch.count()),
                                                 static_cast<std::size_t>(mo::PAIR_STATS)});
        }, nb::rv_policy::reference_internal);
    static_assert(mo::PAIR_STATS == 9, "PAIR_STATS names one column each");
    m.attr("PAIR_STATS") = nb::make_tuple("settled", "code", "iterations", "last_gap", "b",
                                          "rel_gap", "hits", "reconstructions", "active_sum");
    m.def("dual_qp_reading", &dual_qp_reading, "K"_a, "y"_a, "p"_a, "up"_a, "alpha"_a, "b"_a,
          "tol"_a, "tau"_a, "sv_threshold"_a, "decision"_a.noconvert(), "xi"_a.noconvert(),
          "num"_a.noconvert(),
          "A C-SVC dual's certificate numbers at (alpha, b): decision, xi and num written "
          "(margin_opt.kkt.dual_qp_reading).");
    m.attr("READING_SIZE") = mo::READING_SIZE;
    m.attr("ROW_SPLIT_MIN") = mo::ROW_SPLIT_MIN;
    m.def("pool_workers", &mo::pool_workers, "Worker threads alive in the core's pool.");
    m.def("instruction_set", [] { return mo::block_kernels().name; },
          "The instruction-set build of the kernel loops this CPU runs.");
}
