// margin_opt._core: the Crammer-Singer sequential dual method (crammer_singer.hpp).
// Shapes, labels, class lists and the visit set are checked at every call, before the GIL
// is released: a wrong argument is a ValueError, never a read out of bounds.
#include <algorithm>
#include <string>
#include <vector>

#include "bind.hpp"
#include "crammer_singer.hpp"

namespace nb = nanobind;
using namespace nb::literals;
namespace mo = margin_opt;
using namespace mo::bind;

namespace {

using OutI32_2 = nb::ndarray<std::int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// The per-sample arrays (mo::CSSamples), kept alive: y (n,) int64, C and A (n,) float64,
// beta (n, k) float64, cls (n, k) int32 and n_cls (n,) int64, the last three written by
// the passes (taken as they are: no conversion, so that the writes reach the caller).
struct Samples {
    I64_1 y;
    F64_1 C, A;
    Out2 beta;
    OutI32_2 cls;
    OutI64_1 n_cls;
    mo::CSSamples view;
};

std::int64_t len(std::size_t v) { return static_cast<std::int64_t>(v); }

void make_samples(Samples* self, I64_1 y, F64_1 C, F64_1 A, Out2 beta, OutI32_2 cls,
                  OutI64_1 n_cls) {
    const std::int64_t n = len(beta.shape(0)), k = len(beta.shape(1));
    require(k >= 1 && k < (std::int64_t(1) << 31), "beta must have 1 to 2^31 - 1 columns");
    require(len(y.shape(0)) == n && len(C.shape(0)) == n && len(A.shape(0)) == n &&
                len(n_cls.shape(0)) == n,
            "y, C, A and n_cls must have one entry per row of beta");
    require(len(cls.shape(0)) == n && len(cls.shape(1)) == k,
            "cls must have the shape of beta");
    Samples* s = new (self) Samples{y, C, A, beta, cls, n_cls, {}};
    s->view = mo::CSSamples{s->y.data(), s->C.data(), s->A.data(), s->beta.data(),
                            s->cls.data(), s->n_cls.data(), n, k};
}

// The labels in [0, k); with the class lists too: n_cls[i] in [0, k] and the first
// n_cls[i] entries of cls[i] in [0, k).
void check_samples(const mo::CSSamples& v, bool classes) {
    const std::int64_t k = v.k;
    for (std::int64_t i = 0; i < v.n; ++i) {
        require(v.y[i] >= 0 && v.y[i] < k, "a label is outside [0, n_classes)");
        if (!classes) continue;
        const std::int64_t na = v.n_cls[i];
        require(na >= 0 && na <= k, "n_cls has an entry outside [0, n_classes]");
        const std::int32_t* c = v.cls + i * k;
        for (std::int64_t t = 0; t < na; ++t)
            require(c[t] >= 0 && c[t] < k, "cls has an active class outside [0, n_classes)");
    }
}

void check_model(const LinearX& x, std::int64_t n, std::int64_t k, std::size_t W0,
                 std::size_t W1) {
    require(x.view.n == n, "X and the samples differ in their number of rows");
    require(len(W0) == x.view.d && len(W1) == k, "W must be of shape (n_features, n_classes)");
}

mo::CSPassResult passes(const LinearX& x, Samples& smp, Out2 W, F64_1 b, Out1 s,
                        OutI64_1 order, mo::CSState& state, const mo::CSSettings& set) {
    const mo::CSSamples& v = smp.view;
    const std::int64_t n = v.n, k = v.k;
    check_model(x, n, k, W.shape(0), W.shape(1));
    require(len(b.shape(0)) == k && len(s.shape(0)) == k, "b and s must have n_classes entries");
    check_samples(v, true);
    const std::int64_t n_free = len(order.shape(0));
    require(n_free <= n, "order has more entries than samples");
    std::vector<unsigned char> seen(static_cast<std::size_t>(n), 0);
    const std::int64_t* o = order.data();
    for (std::int64_t t = 0; t < n_free; ++t) {
        require(o[t] >= 0 && o[t] < n, "order has an entry outside [0, n_samples)");
        require(!seen[o[t]], "order has a repeated entry");
        seen[o[t]] = 1;
    }
    require(state.n_active >= 0 && state.n_active <= n_free,
            "state.n_active must be in [0, len(order)]");
    require(set.block >= 1, "settings.block must be >= 1");
    mo::CSSettings run = set;                 // a block beyond the samples: one block (no
    run.block = std::min(run.block, std::max<std::int64_t>(1, n_free));   // overflow)
    require(set.history >= 0 && set.history <= 2, "settings.history must be 0, 1 or 2");
    require(set.max_passes >= 0 && set.patience >= 0,
            "settings.max_passes and settings.patience must be >= 0");
    const mo::CSModel model{W.data(), b.data(), s.data()};
    std::int64_t* ord = order.data();
    nb::gil_scoped_release release;
    return mo::cs_passes(x.view, v, model, ord, n_free, state, run);
}

void weights(const LinearX& x, F64_2 beta, Out2 W) {
    const std::int64_t k = len(beta.shape(1));
    check_model(x, len(beta.shape(0)), k, W.shape(0), W.shape(1));
    const double* bt = beta.data();
    double* w = W.data();
    nb::gil_scoped_release release;
    mo::cs_weights(x.view, bt, k, w);
}

nb::tuple objectives(const LinearX& x, I64_1 y, F64_1 C, F64_2 beta, F64_2 W, F64_1 b) {
    const std::int64_t n = len(beta.shape(0)), k = len(beta.shape(1));
    check_model(x, n, k, W.shape(0), W.shape(1));
    require(len(y.shape(0)) == n && len(C.shape(0)) == n,
            "y and C must have one entry per row of beta");
    require(len(b.shape(0)) == k, "b must have n_classes entries");
    mo::CSSamples v;
    v.y = y.data();
    v.n = n;
    v.k = k;
    check_samples(v, false);
    mo::CSObjectives r;
    {
        nb::gil_scoped_release release;
        r = mo::cs_objectives(x.view, y.data(), C.data(), beta.data(), k, W.data(), b.data());
    }
    return nb::make_tuple(r.primal, r.dual, r.violation);
}

void shuffle(OutI64_1 order, std::int64_t n, std::int64_t block, mo::CSState& state,
             std::int64_t n_samples) {
    require(0 <= n && n <= len(order.shape(0)), "n must be in [0, len(order)]");
    require(block >= 1, "block must be >= 1");
    block = std::min(block, std::max<std::int64_t>(1, n));   // beyond n: one block
    const std::int64_t* o = order.data();
    for (std::int64_t t = 0; t < n; ++t)
        require(o[t] >= 0 && o[t] < n_samples, "order has an entry outside [0, n_samples)");
    mo::cs_shuffle(order.data(), n, block, state.rng, n_samples);
}

}  // namespace

void bind_crammer_singer(nb::module_& m) {
    nb::class_<Samples>(m, "CSSamples",
                        "The Crammer-Singer passes' per-sample arrays (views, kept alive): "
                        "labels y (n,) int64, weights C and curvatures A = ||x||^2 + rho (n,) "
                        "float64, beta (n, k) float64, the active classes cls (n, k) int32 "
                        "and their count n_cls (n,) int64 (beta, cls, n_cls written).")
        .def("__init__", &make_samples, "y"_a, "C"_a, "A"_a, "beta"_a.noconvert(),
             "cls"_a.noconvert(), "n_cls"_a.noconvert())
        .def_prop_ro("n", [](const Samples& s) { return s.view.n; })
        .def_prop_ro("k", [](const Samples& s) { return s.view.k; });

    nb::class_<mo::CSState>(m, "CSState",
                            "The Crammer-Singer passes' state between calls: order[:n_active] "
                            "the samples not shrunk, full (no shrinking since the last "
                            "restore), the shrinking tolerance and the order's generator.")
        .def(
            "__init__",
            [](mo::CSState* st, std::int64_t n_active, double eps_shrink, bool full,
               std::uint64_t rng) { new (st) mo::CSState{n_active, eps_shrink, full, rng}; },
            "n_active"_a = 0, "eps_shrink"_a = 1.0, "full"_a = true, "rng"_a = 1)
        .def_rw("n_active", &mo::CSState::n_active)
        .def_rw("eps_shrink", &mo::CSState::eps_shrink)
        .def_rw("full", &mo::CSState::full)
        .def_rw("rng", &mo::CSState::rng);

    nb::class_<mo::CSSettings>(m, "CSSettings",
                               "One call of the Crammer-Singer passes: rho (intercepts' "
                               "penalty), shrinking, eps (stop: a full pass's violation), "
                               "decay (of the shrinking tolerance), max_passes, block (the "
                               "order's), history (subspace steps: 0, 1 or 2), reach, guard, "
                               "width, patience.")
        .def(
            "__init__",
            [](mo::CSSettings* st, double rho, bool shrinking, double eps, double decay,
               std::int64_t max_passes, std::int64_t block, std::int64_t history, double reach,
               double guard, double width, std::int64_t patience) {
                new (st) mo::CSSettings{rho,   shrinking, eps,   decay, max_passes, block,
                                        history, reach,   guard, width, patience};
            },
            "rho"_a = 0.0, "shrinking"_a = true, "eps"_a = 1e-3, "decay"_a = 0.5,
            "max_passes"_a = 1, "block"_a = 16, "history"_a = 0, "reach"_a = 2.0,
            "guard"_a = 4.0, "width"_a = 1.0, "patience"_a = 20)
        .def_rw("rho", &mo::CSSettings::rho)
        .def_rw("shrinking", &mo::CSSettings::shrinking)
        .def_rw("eps", &mo::CSSettings::eps)
        .def_rw("decay", &mo::CSSettings::decay)
        .def_rw("max_passes", &mo::CSSettings::max_passes)
        .def_rw("block", &mo::CSSettings::block)
        .def_rw("history", &mo::CSSettings::history)
        .def_rw("reach", &mo::CSSettings::reach)
        .def_rw("guard", &mo::CSSettings::guard)
        .def_rw("width", &mo::CSSettings::width)
        .def_rw("patience", &mo::CSSettings::patience);

    nb::class_<mo::CSPassResult>(m, "CSPassResult",
                                 "What a call of the passes leaves: passes made, the last "
                                 "pass's violation, converged (a full pass met eps), restores.")
        .def_ro("passes", &mo::CSPassResult::passes)
        .def_ro("violation", &mo::CSPassResult::violation)
        .def_ro("converged", &mo::CSPassResult::converged)
        .def_ro("restores", &mo::CSPassResult::restores);

    m.def("cs_passes", &passes, "X"_a, "samples"_a, "W"_a.noconvert(), "b"_a,
          "s"_a.noconvert(), "order"_a.noconvert(), "state"_a, "settings"_a,
          "Crammer-Singer passes over order[:state.n_active] (order[:] the samples that "
          "move) until a full pass has violation <= settings.eps, or settings.max_passes; "
          "beta, cls, n_cls, W (n_features, k), s (k,), order and state are updated.");
    m.def("cs_weights", &weights, "X"_a, "beta"_a, "W"_a.noconvert(),
          "W = X^T beta, shape (n_features, k) (W overwritten).");
    m.def("cs_objectives", &objectives, "X"_a, "y"_a, "C"_a, "beta"_a, "W"_a, "b"_a,
          "(primal, dual, max violation) of the Crammer-Singer dual at (W, b, beta).");
    m.def("cs_shuffle", &shuffle, "order"_a.noconvert(), "n"_a, "block"_a, "state"_a,
          "n_samples"_a,
          "The passes' random order of order[:n] (entries in [0, n_samples)) by blocks of "
          "`block` consecutive sorted entries (1: uniform), from state.rng.");
}
