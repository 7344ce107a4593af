// SMO's classes (smo.hpp): KernelItems, RowCache, QRows, Solver.

#include "smo.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "blas.hpp"
#include "pool.hpp"

namespace margin_opt {

namespace {

// Inner product of two sorted sparse rows.
double sparse_dot(const RowsView& A, std::int64_t i, std::int64_t j) {
    std::int64_t p = A.indptr[i], pe = A.indptr[i + 1], q = A.indptr[j], qe = A.indptr[j + 1];
    double s = 0.0;
    while (p < pe && q < qe) {
        const std::int64_t fp = A.indices[p], fq = A.indices[q];
        if (fp == fq) {
            s += A.data[p++] * A.data[q++];
        } else if (fp < fq) {
            ++p;
        } else {
            ++q;
        }
    }
    return s;
}

double sparse_sq(const RowsView& A, std::int64_t i) {
    double s = 0.0;
    for (std::int64_t p = A.indptr[i]; p < A.indptr[i + 1]; ++p) s += A.data[p] * A.data[p];
    return s;
}

}  // namespace

// ------------------------------------------------------------------ KernelItems

KernelItems::KernelItems(const KernelSource& src)
    : kernel_(src.kernel), rows_(src.rows), gram_(src.gram), n_(src.n), d_(src.rows.d) {
    if (gram_ != nullptr) {
        layout_ = GRAM;
        return;
    }
    sq_.assign(n_, 0.0);
    if (!rows_.sparse) {
        // a private copy, centred for RBF (distances are unchanged, and fewer digits
        // cancel in ||x||^2 + ||z||^2 - 2 x.z), and its transpose: a row of K as d sweeps
        // along it (vectorized along the row, no packing of a matrix product per row)
        layout_ = DENSE;
        X_.assign(rows_.X, rows_.X + n_ * d_);
        if (kernel_.kind == K_RBF) centre_rows(X_.data(), n_, d_);
        XT_.resize(static_cast<std::size_t>(d_ * n_));
        for (std::int64_t i = 0; i < n_; ++i) {
            double s = 0.0;
            for (std::int64_t f = 0; f < d_; ++f) {
                const double v = X_[i * d_ + f];
                s += v * v;
                XT_[f * n_ + i] = v;
            }
            sq_[i] = s;
        }
        return;
    }
    for (std::int64_t i = 0; i < n_; ++i) sq_[i] = sparse_sq(rows_, i);
    if (static_cast<double>(d_) * static_cast<double>(n_) * 8.0 <= src.dense_budget) {
        layout_ = SPARSE_T;                 // K's rows as sums of the transpose's rows
        const std::int64_t nnz = rows_.indptr[n_];
        bool fits_float = static_cast<double>(d_) * static_cast<double>(n_) * 8.0 >=
                          NARROW_MIN_BYTES;
        for (std::int64_t p = 0; fits_float && p < nnz; ++p)
            fits_float = static_cast<double>(static_cast<float>(rows_.data[p])) == rows_.data[p];
        narrow_ = fits_float;
        if (narrow_) {
            XTf_.assign(static_cast<std::size_t>(d_ * n_), 0.0f);
            for (std::int64_t i = 0; i < n_; ++i)
                for (std::int64_t p = rows_.indptr[i]; p < rows_.indptr[i + 1]; ++p)
                    XTf_[rows_.indices[p] * n_ + i] = static_cast<float>(rows_.data[p]);
        } else {
            XT_.assign(static_cast<std::size_t>(d_ * n_), 0.0);
            for (std::int64_t i = 0; i < n_; ++i)
                for (std::int64_t p = rows_.indptr[i]; p < rows_.indptr[i + 1]; ++p)
                    XT_[rows_.indices[p] * n_ + i] = rows_.data[p];
        }
    } else {
        layout_ = SPARSE;
    }
}

const char* KernelItems::layout() const {
    switch (layout_) {
        case DENSE: return "dense";
        case SPARSE_T: return narrow_ ? "sparse-transpose-f32" : "sparse-transpose";
        case SPARSE: return "sparse";
        default: return "matrix";
    }
}

std::vector<double> KernelItems::diagonal() const {
    std::vector<double> diag(n_);
    if (layout_ == GRAM) {
        for (std::int64_t i = 0; i < n_; ++i) diag[i] = gram_[i * n_ + i];
        return diag;
    }
    if (kernel_.kind == K_RBF) {
        std::fill(diag.begin(), diag.end(), 1.0);
        return diag;
    }
    diag = sq_;
    block_kernels().transform(diag.data(), n_, kernel_);
    return diag;
}

double KernelItems::direct_d2(std::int64_t a, std::int64_t b) const {
    if (layout_ == DENSE) return dense_d2(X_.data() + a * d_, X_.data() + b * d_, d_);
    return sparse_d2(rows_, a, rows_, b);
}

void KernelItems::range(std::int64_t r, const double* XT, const float* XTf, std::int64_t ld,
                        const double* sq, const std::int64_t* rows, std::int64_t lo,
                        std::int64_t hi, double* out) const {
    if (hi <= lo) return;
    if (layout_ == GRAM) {
        const double* g = gram_ + r * n_;
        if (rows == nullptr) {
            std::copy(g + lo, g + hi, out + lo);
        } else {
            for (std::int64_t k = lo; k < hi; ++k) out[k] = g[rows[k]];
        }
        return;
    }
    // tile by tile of ROW_TILE entries: the tile's inner products, distances and kernel
    // values while it is in L1
    const BlockKernels& bk = block_kernels();
    for (std::int64_t t0 = lo; t0 < hi; t0 += ROW_TILE) {
        const std::int64_t m = std::min(ROW_TILE, hi - t0);
        double* b = out + t0;
        switch (layout_) {
            case DENSE:
                bk.dense_dots(b, m, XT, ld, t0, X_.data() + r * d_, d_);
                break;
            case SPARSE_T:
                std::fill(b, b + m, 0.0);
                if (narrow_) {
                    bk.sparse_dots_f32(b, m, XTf, ld, t0, rows_.data, rows_.indices,
                                       rows_.indptr[r], rows_.indptr[r + 1]);
                } else {
                    bk.sparse_dots(b, m, XT, ld, t0, rows_.data, rows_.indices,
                                   rows_.indptr[r], rows_.indptr[r + 1]);
                }
                break;
            default:
                for (std::int64_t k = 0; k < m; ++k)
                    b[k] = sparse_dot(rows_, r, rows == nullptr ? t0 + k : rows[t0 + k]);
                break;
        }
        if (kernel_.kind == K_RBF) {
            const double sr = sq_[r];
            if (bk.squared_distances(b, m, sr, sq + t0) > 0) {
                for (std::int64_t k = 0; k < m; ++k)
                    if (b[k] <= GUARD * (sr + sq[t0 + k]))
                        b[k] = direct_d2(r, rows == nullptr ? t0 + k : rows[t0 + k]);
            }
        }
        bk.transform(b, m, kernel_);
    }
}

void KernelItems::split(std::int64_t r, const double* XT, const float* XTf, std::int64_t ld,
                        const double* sq, const std::int64_t* rows, std::int64_t count,
                        double* out, int threads) const {
    if (threads <= 1 || count < ROW_SPLIT_MIN) {
        range(r, XT, XTf, ld, sq, rows, 0, count, out);
        return;
    }
    // equal shares, each a multiple of 8 entries (whole vectors)
    const std::int64_t share = ((count + threads - 1) / threads + 7) / 8 * 8;
    parallel_for(threads, [&](int h) {
        const std::int64_t a = h * share, e = std::min(count, a + share);
        if (a < e) range(r, XT, XTf, ld, sq, rows, a, e, out);
    });
}

void KernelItems::whole_row(std::int64_t r, double* out, int threads) const {
    split(r, XT_.data(), XTf_.data(), n_, sq_.data(), nullptr, n_, out, threads);
}

void KernelItems::gather(const std::int64_t* rows, std::int64_t count, Columns* cols) const {
    cols->rows.assign(rows, rows + count);
    cols->count = count;
    if (narrow_) {
        cols->XTf.resize(static_cast<std::size_t>(d_ * count));
        for (std::int64_t f = 0; f < d_; ++f) {
            const float* src = XTf_.data() + f * n_;
            float* dst = cols->XTf.data() + f * count;
            for (std::int64_t k = 0; k < count; ++k) dst[k] = src[rows[k]];
        }
    } else if (layout_ == DENSE || layout_ == SPARSE_T) {
        cols->XT.resize(static_cast<std::size_t>(d_ * count));
        for (std::int64_t f = 0; f < d_; ++f) {
            const double* src = XT_.data() + f * n_;
            double* dst = cols->XT.data() + f * count;
            for (std::int64_t k = 0; k < count; ++k) dst[k] = src[rows[k]];
        }
    }
    if (!sq_.empty()) {
        cols->sq.resize(count);
        for (std::int64_t k = 0; k < count; ++k) cols->sq[k] = sq_[rows[k]];
    }
}

void KernelItems::row_on(std::int64_t r, const Columns& cols, double* out, int threads) const {
    split(r, cols.XT.data(), cols.XTf.data(), cols.count, cols.sq.data(), cols.rows.data(),
          cols.count, out, threads);
}

// ------------------------------------------------------------------ RowCache

RowCache::RowCache(std::int64_t n_keys, std::int64_t row_len, double budget_bytes)
    : rows_(static_cast<std::size_t>(n_keys)), row_len_(row_len), budget_(budget_bytes) {
    set_capacity();
}

void RowCache::set_capacity() {
    // at least two rows (a pair step holds two)
    const double fit = budget_ / (8.0 * static_cast<double>(std::max<std::int64_t>(row_len_, 1)));
    capacity_ = std::max<std::int64_t>(2, static_cast<std::int64_t>(std::min(fit, 1e15)));
}

void RowCache::unlink(std::int64_t k) {
    Entry& e = rows_[k];
    if (e.prev >= 0) rows_[e.prev].next = e.next; else head_ = e.next;
    if (e.next >= 0) rows_[e.next].prev = e.prev; else tail_ = e.prev;
    e.prev = e.next = -1;
}

void RowCache::push_back(std::int64_t k) {
    Entry& e = rows_[k];
    e.prev = tail_;
    e.next = -1;
    if (tail_ >= 0) rows_[tail_].next = k; else head_ = k;
    tail_ = k;
}

double* RowCache::get(std::int64_t key, std::int64_t** valid) {
    Entry& e = rows_[key];
    if (e.data) {
        unlink(key);
    } else {
        if (used_ >= capacity_) {               // the least recently used row gives its memory
            const std::int64_t old = head_;
            unlink(old);
            e.data = std::move(rows_[old].data);
            rows_[old].valid = NONE;
        } else {
            e.data.reset(new double[static_cast<std::size_t>(row_len_)]);
            ++used_;
        }
        e.valid = NONE;
    }
    push_back(key);
    *valid = &e.valid;
    return e.data.get();
}

template <class Keep>
void RowCache::recut(std::int64_t new_len, const std::int64_t* from, Keep keep,
                     std::int64_t valid_as) {
    ++recuts;
    row_len_ = new_len;
    set_capacity();
    std::int64_t kept = 0;
    // from the most recently used down: what fits the new capacity is kept
    for (std::int64_t h = tail_; h >= 0;) {
        Entry& e = rows_[h];
        const std::int64_t prev = e.prev;
        if (from != nullptr && kept < capacity_ && keep(e.valid)) {
            std::unique_ptr<double[]> packed(new double[static_cast<std::size_t>(new_len)]);
            for (std::int64_t s = 0; s < new_len; ++s) packed[s] = e.data[from[s]];
            e.data = std::move(packed);
            e.valid = valid_as;
            ++kept;
        } else {
            unlink(h);
            e.data.reset();
            e.valid = NONE;
        }
        h = prev;
    }
    used_ = kept;
}

// ------------------------------------------------------------------ QRows


QRows::QRows(const KernelSource& src, const DualArrays& qp, double cache_bytes)
    : m_(qp.m),
      n_(src.n),
      items_(src),
      cache_(src.n, src.n, cache_bytes),
      y_(qp.y, qp.y + qp.m),
      data_at_(qp.index, qp.index + qp.m),
      slot_at_(qp.index, qp.index + qp.m),
      width_(src.n) {
    const std::vector<double> kd = items_.diagonal();
    QD_.resize(qp.m);
    for (std::int64_t t = 0; t < qp.m; ++t) QD_[t] = kd[data_at_[t]];
    span_.resize(qp.m);
    buf_.resize(std::max(qp.m, src.n));
    {
        slot_of_.assign(n_, -1);
        for (std::int64_t r = 0; r < n_; ++r) slot_of_[r] = r;
    }
}

RowRef QRows::row(std::int64_t t, std::int64_t active, bool full, int threads) {
    const std::int64_t r = data_at_[t];
    // a given kernel matrix: its rows are read in place, never copied into the cache
    if (const double* g = items_.given_row(r)) {
        ++cache_.hits;
        return RowRef{g, data_at_.data()};
    }
    if (full && width_ < n_) {              // packed: a whole row, in data order, uncached
        items_.whole_row(r, buf_.data(), threads);
        ++cache_.misses;
        return RowRef{buf_.data(), data_at_.data()};
    }
    std::int64_t* valid = nullptr;
    double* k = cache_.get(r, &valid);
    if (*valid == RowCache::FULL || (!full && *valid == generation_)) {
        ++cache_.hits;
        return RowRef{k, slot_at_.data()};
    }
    ++cache_.misses;
    // a whole row where asked, or where the active set is most of the data (it stays
    // valid when the active set grows again): in data order, in place
    if (width_ == n_ && (full || 8 * active > WHOLE_ROW_EIGHTHS * n_)) {
        items_.whole_row(r, k, threads);
        *valid = RowCache::FULL;
        return RowRef{k, slot_at_.data()};
    }
    // the active positions only, from their columns copied contiguous, to their slots
    if (active_cols_.stamp != stamp_ || active_cols_.count != active || active_cols_.lo != 0) {
        items_.gather(data_at_.data(), active, &active_cols_);
        active_cols_.stamp = stamp_;
        active_cols_.lo = 0;
    }
    items_.row_on(r, active_cols_, buf_.data(), threads);
    block_kernels().scatter(k, slot_at_.data(), buf_.data(), active);
    *valid = generation_;
    return RowRef{k, slot_at_.data()};
}

void QRows::shrunk(std::int64_t active, std::int64_t n_free) {
    // packing pays where the rows SMO keeps asking for (the free variables') do not fit
    // whole; otherwise it would only cost the whole rows of the G_bar updates
    if (10 * active > REPACK_TENTHS * width_ || active < 2 || n_free <= cache_.capacity() ||
        items_.given_row(0) != nullptr)
        return;
    // the new slots: the active positions' data rows, in position order
    std::vector<std::int64_t> from(active);
    for (std::int64_t s = 0; s < active; ++s) from[s] = slot_of_[data_at_[s]];
    const std::int64_t gen = generation_;
    cache_.recut(active, from.data(),
                 [gen](std::int64_t v) { return v == RowCache::FULL || v == gen; }, gen);
    std::fill(slot_of_.begin(), slot_of_.end(), -1);
    for (std::int64_t s = 0; s < active; ++s) {
        slot_of_[data_at_[s]] = s;
        slot_at_[s] = s;
    }
    for (std::int64_t s = active; s < m_; ++s) slot_at_[s] = 0;   // never read while shrunk
    width_ = active;
}

void QRows::new_generation() {
    ++generation_;
    if (width_ == n_) return;
    // back to whole rows in data order: the packed rows cannot serve every position
    cache_.recut(n_, nullptr, [](std::int64_t) { return false; }, RowCache::NONE);
    for (std::int64_t r = 0; r < n_; ++r) slot_of_[r] = r;
    for (std::int64_t s = 0; s < m_; ++s) slot_at_[s] = data_at_[s];
    width_ = n_;
}

const double* QRows::span(std::int64_t t, std::int64_t lo, std::int64_t hi, int threads) {
    if (span_cols_.stamp != stamp_ || span_cols_.lo != lo || span_cols_.count != hi - lo) {
        items_.gather(data_at_.data() + lo, hi - lo, &span_cols_);
        span_cols_.stamp = stamp_;
        span_cols_.lo = lo;
    }
    items_.row_on(data_at_[t], span_cols_, span_.data() + lo, threads);
    return span_.data();
}

void QRows::swap(std::int64_t i, std::int64_t j) {
    ++stamp_;                               // the active columns' copy is out of date
    std::swap(y_[i], y_[j]);
    std::swap(QD_[i], QD_[j]);
    std::swap(data_at_[i], data_at_[j]);
    std::swap(slot_at_[i], slot_at_[j]);
}

// ------------------------------------------------------------------ Solver

Solver::Solver(const KernelSource& src, const DualArrays& qp, const SolverSettings& settings)
    : settings_(settings),
      Q_(src, qp, settings.cache_bytes),
      m_(qp.m),
      equality_(qp.equality),
      delta_(qp.equality ? qp.delta : 0.0),
      two_eq_(settings.two_equalities && qp.equality),
      y_(nullptr),
      QD_(nullptr),
      index_(qp.index, qp.index + qp.m),
      alpha_(qp.alpha0, qp.alpha0 + qp.m),
      F_(qp.m),
      F_bar_(qp.m, 0.0),
      p_(qp.p, qp.p + qp.m),
      yp_(qp.m),
      obj_(qp.m),
      up_(qp.m),
      low_(qp.m),
      upper_(qp.upper, qp.upper + qp.m),
      var_of_(qp.m),
      pos_of_(qp.m),
      active_(qp.m),
      shrink_counter_(std::min<std::int64_t>(qp.m, 1000) + 1) {
    y_ = Q_.y();
    QD_ = Q_.diagonal();
    for (std::int64_t t = 0; t < m_; ++t) var_of_[t] = pos_of_[t] = t;
    settings_.shrinking = settings_.shrinking && equality_;
    if (two_eq_) {
        for (std::int64_t t = 0; t < m_; ++t) delta2_ += alpha_[t];
        for (auto* mask : {&signs_.up_pos, &signs_.low_pos, &signs_.up_neg, &signs_.low_neg})
            mask->assign(static_cast<std::size_t>(m_), 0);
    }
    initial_gradient();
}

// F[s] += c y_t K(t, s) for every position s, and F_bar likewise with bar_c (y_s G_s
// moves by y_s Q[t, s] c = y_t K(t, s) c).
void Solver::add_row(std::int64_t t, double c, bool to_bar, double bar_c) {
    if (c != 0.0) fresh_ = false;
    const RowRef q = row(t, true);
    const BlockKernels& bk = block_kernels();
    if (c != 0.0) bk.axpy_gather(F_.data(), q.K, q.at, m_, c * y_[t]);
    if (to_bar) bk.axpy_gather(F_bar_.data(), q.K, q.at, m_, bar_c * y_[t]);
}

void Solver::set_status(std::int64_t t) {
    const bool at_upper = alpha_[t] >= upper_[t], at_lower = alpha_[t] <= 0.0;
    up_[t] = y_[t] > 0 ? !at_upper : !at_lower;
    low_[t] = y_[t] > 0 ? !at_lower : !at_upper;
    if (two_eq_) {
        const bool pos = y_[t] > 0;
        signs_.up_pos[t] = pos && up_[t];
        signs_.low_pos[t] = pos && low_[t];
        signs_.up_neg[t] = !pos && up_[t];
        signs_.low_neg[t] = !pos && low_[t];
    }
}

void Solver::initial_gradient() {
    for (std::int64_t t = 0; t < m_; ++t) {
        yp_[t] = y_[t] * p_[t];
        F_[t] = yp_[t];
        set_status(t);
    }
    for (std::int64_t t = 0; t < m_; ++t)
        if (!is_lower(t)) add_row(t, alpha_[t], is_upper(t), upper_[t]);
}

bool Solver::progress(double gap) {
    const std::int64_t it = counters_.iterations;
    if (gap <= 0.5 * mark_gap_) {
        mark_gap_ = gap;
        mark_iter_ = it;
        return true;
    }
    return it - mark_iter_ <= settings_.stall_window;
}

bool Solver::select_pair(double tol, std::int64_t* out_i, std::int64_t* out_j) {
    // one candidate over every variable; with two equalities (LIBSVM's Solver_NU) one per
    // sign of y, so that the pair step keeps y'a and e'a, the larger decrease taken, and
    // optimal where neither sign's m - M exceeds tol
    Candidate c, neg;
    if (two_eq_) {
        select_within(signs_.up_pos.data(), signs_.low_pos.data(), nullptr, &c);
        select_within(signs_.up_neg.data(), signs_.low_neg.data(), nullptr, &neg);
    } else {
        // the largest -F over I_up: from the last pair update where nothing moved since
        select_within(up_.data(), low_.data(), fresh_ ? &fresh_max_ : nullptr, &c);
    }
    const double gap = std::max(c.gap, neg.gap);
    counters_.last_gap = gap > 0.0 ? gap : 0.0;
    // LIBSVM scans j upwards with <=: of equal objectives, the later position
    if (neg.j >= 0 && (c.j < 0 || neg.obj < c.obj || (neg.obj == c.obj && neg.j > c.j))) c = neg;
    if (!(gap > tol) || c.j < 0) return true;
    *out_i = c.i;
    *out_j = c.j;
    return false;
}

void Solver::select_within(const std::uint8_t* up, const std::uint8_t* low,
                           const double* known_gmax, Candidate* c) {
    const BlockKernels& bk = block_kernels();
    const std::int64_t n = active_;
    const double* F = F_.data();
    const double gmax = known_gmax != nullptr ? *known_gmax : bk.up_max(F, up, n);
    // the last of the largest (LIBSVM's >=)
    c->i = gmax > -INFINITY ? bk.last_equal(F, -1.0, up, n, gmax) : -1;
    if (c->i < 0) return;
    const RowRef Ki = row(c->i);
    const double gmax2 = bk.pair_objectives(F, low, QD_, Ki.K, Ki.at, n, gmax, QD_[c->i],
                                            TAU, obj_.data());
    c->gap = gmax + gmax2;
    if (settings_.second_order) {
        c->obj = bk.min_value(obj_.data(), n);
        if (c->obj < INFINITY) c->j = bk.last_equal(obj_.data(), 1.0, nullptr, n, c->obj);
    } else {
        c->obj = -c->gap;                   // the maximal violating pair: the larger gap
        c->j = bk.last_equal(F, 1.0, low, n, gmax2);
    }
}

bool Solver::update_pair(std::int64_t i, std::int64_t j) {
    const std::int64_t n = active_;
    const RowRef Ki = row(i);
    const RowRef Kj = row(j);            // the same map as Ki's (both on the active set)
    const double* QD = QD_;
    const double* y = y_;
    const std::int64_t* d = Ki.at;
    const double Ci = upper_[i], Cj = upper_[j];
    const double old_i = alpha_[i], old_j = alpha_[j];
    const double Gi = y[i] * F_[i], Gj = y[j] * F_[j];
    double quad = QD[i] + QD[j] - 2.0 * Ki.K[d[j]];
    if (quad <= 0.0) quad = TAU;
    double ai = old_i, aj = old_j;
    if (y[i] != y[j]) {
        const double delta = (-Gi - Gj) / quad;
        const double diff = ai - aj;
        ai += delta;
        aj += delta;
        if (diff > 0.0) {
            if (aj < 0.0) { aj = 0.0; ai = diff; }
        } else if (ai < 0.0) {
            ai = 0.0;
            aj = -diff;
        }
        if (diff > Ci - Cj) {
            if (ai > Ci) { ai = Ci; aj = Ci - diff; }
        } else if (aj > Cj) {
            aj = Cj;
            ai = Cj + diff;
        }
    } else {
        const double delta = (Gi - Gj) / quad;
        const double sum = ai + aj;
        ai -= delta;
        aj += delta;
        if (sum > Ci) {
            if (ai > Ci) { ai = Ci; aj = sum - Ci; }
        } else if (aj < 0.0) {
            aj = 0.0;
            ai = sum;
        }
        if (sum > Cj) {
            if (aj > Cj) { aj = Cj; ai = sum - Cj; }
        } else if (ai < 0.0) {
            ai = 0.0;
            aj = sum;
        }
    }
    const bool ui = is_upper(i), uj = is_upper(j);
    alpha_[i] = ai;
    alpha_[j] = aj;
    set_status(i);
    set_status(j);
    fresh_max_ = block_kernels().pair_update(F_.data(), Ki.K, Kj.K, d, n, (ai - old_i) * y[i],
                                             (aj - old_j) * y[j], up_.data());
    fresh_ = true;
    if (ui != is_upper(i)) add_row(i, 0.0, true, ui ? -Ci : Ci);
    if (uj != is_upper(j)) add_row(j, 0.0, true, uj ? -Cj : Cj);
    return ai <= settings_.alpha_cap && aj <= settings_.alpha_cap;
}

bool Solver::be_shrunk(std::int64_t t, const Extremes& e) const {
    // LIBSVM's rule with F = yG: e.up the largest -F over I_up, e.low the largest F over I_low
    const double f = F_[t];
    if (is_upper(t)) return y_[t] > 0 ? -f > e.up : f > e.low;
    if (is_lower(t)) return y_[t] > 0 ? f > e.low : -f > e.up;
    return false;
}

void Solver::shrink() {
    fresh_ = false;
    // the largest -F over I_up and F over I_low: of every variable, or (two equalities,
    // Solver_NU's rule) of each sign of y, each variable compared with its own sign's
    Extremes pos, neg;
    auto extremes = [&](std::int64_t t) -> Extremes& { return two_eq_ && y_[t] < 0 ? neg : pos; };
    for (std::int64_t t = 0; t < active_; ++t) {
        Extremes& e = extremes(t);
        if (up_[t]) e.up = std::max(e.up, -F_[t]);
        if (low_[t]) e.low = std::max(e.low, F_[t]);
    }
    ++counters_.shrinks;
    for (std::int64_t t = 0; t < active_; ++t) {
        if (!be_shrunk(t, extremes(t))) continue;
        --active_;
        while (active_ > t) {
            if (!be_shrunk(active_, extremes(active_))) {
                swap(t, active_);
                break;
            }
            --active_;
        }
    }
    std::int64_t n_free = 0;
    for (std::int64_t t = 0; t < active_; ++t) n_free += !is_upper(t) && !is_lower(t);
    Q_.shrunk(active_, n_free);
}

void Solver::swap(std::int64_t i, std::int64_t j) {
    if (i == j) return;
    fresh_ = false;
    Q_.swap(i, j);
    std::swap(alpha_[i], alpha_[j]);
    std::swap(F_[i], F_[j]);
    std::swap(F_bar_[i], F_bar_[j]);
    std::swap(p_[i], p_[j]);
    std::swap(yp_[i], yp_[j]);
    std::swap(up_[i], up_[j]);
    std::swap(low_[i], low_[j]);
    std::swap(upper_[i], upper_[j]);
    if (two_eq_)
        for (auto* mask : {&signs_.up_pos, &signs_.low_pos, &signs_.up_neg, &signs_.low_neg})
            std::swap((*mask)[i], (*mask)[j]);
    std::swap(var_of_[i], var_of_[j]);
    pos_of_[var_of_[i]] = i;
    pos_of_[var_of_[j]] = j;
}

void Solver::reconstruct() {
    if (active_ == m_) return;
    fresh_ = false;
    ++counters_.reconstructions;
    for (std::int64_t t = active_; t < m_; ++t) F_[t] = F_bar_[t] + yp_[t];
    std::int64_t nfree = 0;
    for (std::int64_t t = 0; t < active_; ++t) nfree += !is_upper(t) && !is_lower(t);
    const double* y = y_;
    if (static_cast<double>(nfree) * static_cast<double>(m_) >
        2.0 * static_cast<double>(active_) * static_cast<double>(m_ - active_)) {
        // the shrunk rows on the active positions
        for (std::int64_t i = active_; i < m_; ++i) {
            const RowRef q = row(i);
            double s = 0.0;
            for (std::int64_t t = 0; t < active_; ++t)
                if (!is_upper(t) && !is_lower(t)) s += alpha_[t] * y[t] * q.K[q.at[t]];
            F_[i] += s;
        }
    } else {
        // the free rows on the shrunk positions (computed there only, not cached)
        for (std::int64_t t = 0; t < active_; ++t) {
            if (is_upper(t) || is_lower(t)) continue;
            const double* K = Q_.span(t, active_, m_, settings_.threads);
            const double a = alpha_[t] * y[t];
            for (std::int64_t k = active_; k < m_; ++k) F_[k] += a * K[k];
        }
    }
}

void Solver::unshrink() {
    if (active_ < m_) fresh_ = false;
    reconstruct();
    if (active_ < m_) Q_.new_generation();
    active_ = m_;
}

int Solver::run(double tol, std::int64_t max_iter, std::int64_t stop_at, double then_tol,
                double min_work) {
    // a run in chunks (callbacks, interruptions) goes on where the last chunk switched
    if (switched_from_ == tol && switched_to_ == then_tol) tol = then_tol;
    for (;;) {
        const int code = equality_ ? run_pairs(tol, max_iter, stop_at)
                                   : run_coordinate(tol, max_iter, stop_at);
        // a stop on the way (a polish's) that the work so far does not pay for: on to
        // then_tol in the same call
        if (code != R_OPTIMAL || !(then_tol >= 0.0 && then_tol < tol) ||
            counters_.active_sum >= min_work)
            return code;
        switched_from_ = tol;
        switched_to_ = then_tol;
        tol = then_tol;
    }
}

int Solver::run_pairs(double tol, std::int64_t max_iter, std::int64_t stop_at) {
    std::int64_t i = -1, j = -1;
    while (true) {
        if (counters_.iterations >= max_iter) return R_MAX_ITER;
        if (counters_.iterations >= stop_at) return R_CHUNK;
        if (settings_.shrinking && --shrink_counter_ == 0) {
            shrink_counter_ = std::min<std::int64_t>(m_, 1000);
            shrink();
        }
        if (select_pair(tol, &i, &j)) {
            unshrink();                     // optimal on the active set: all of them now
            if (select_pair(tol, &i, &j)) return R_OPTIMAL;
            shrink_counter_ = 1;
        }
        if (!progress(counters_.last_gap)) return R_STALLED;
        ++counters_.iterations;
        counters_.active_sum += static_cast<double>(active_);
        if (!update_pair(i, j)) return R_CAP;
    }
}

int Solver::run_coordinate(double tol, std::int64_t max_iter, std::int64_t stop_at) {
    // greedy coordinate descent: the variable whose exact step, clipped to the box,
    // decreases the dual most (second-order information, as WSS 2 for pairs; the
    // largest projected gradient stalls where Q_tt spans orders of magnitude); it stops
    // when the largest projected gradient is at most tol
    const double* QD = QD_;
    while (true) {
        if (counters_.iterations >= max_iter) return R_MAX_ITER;
        if (counters_.iterations >= stop_at) return R_CHUNK;
        std::int64_t best = -1;
        double vmax = 0.0, gain = 0.0;
        for (std::int64_t t = 0; t < m_; ++t) {
            const double g = y_[t] * F_[t];
            double v = 0.0;
            if (g < 0.0 && !is_upper(t)) v = -g;
            else if (g > 0.0 && !is_lower(t)) v = g;
            vmax = v > vmax ? v : vmax;
            if (v <= 0.0) continue;
            const double q = QD[t] > 0.0 ? QD[t] : TAU;
            const double a = std::min(upper_[t], std::max(0.0, alpha_[t] - g / q));
            const double d = a - alpha_[t];
            const double dec = -(g * d + 0.5 * q * d * d);
            if (dec > gain) {
                gain = dec;
                best = t;
            }
        }
        counters_.last_gap = vmax;
        if (vmax <= tol || best < 0) return R_OPTIMAL;
        if (!progress(vmax)) return R_STALLED;
        ++counters_.iterations;
        counters_.active_sum += static_cast<double>(m_);
        const double q = QD[best] > 0.0 ? QD[best] : TAU;
        const double g = y_[best] * F_[best];
        const double a = std::min(upper_[best], std::max(0.0, alpha_[best] - g / q));
        const double da = a - alpha_[best];
        alpha_[best] = a;
        set_status(best);
        add_row(best, da, false, 0.0);
        if (a > settings_.alpha_cap) return R_CAP;
    }
}

void Solver::assign_with_gradient(const std::int64_t* vars, const double* values,
                                  std::int64_t count, const double* dG) {
    unshrink();
    fresh_ = false;
    for (std::int64_t t = 0; t < m_; ++t) F_[t] += y_[t] * dG[var_of_[t]];
    for (std::int64_t k = 0; k < count; ++k) {
        const std::int64_t t = pos_of_[vars[k]];
        const bool was_upper = is_upper(t);
        alpha_[t] = values[k];
        set_status(t);
        if (was_upper != is_upper(t))       // G_bar: a whole row, for the few that cross C
            add_row(t, 0.0, true, was_upper ? -upper_[t] : upper_[t]);
    }
    reset_progress();
}

void Solver::q_block(const std::int64_t* rows, std::int64_t nr, const std::int64_t* cols,
                     std::int64_t nc, double* out) {
    for (std::int64_t r = 0; r < nr; ++r) {
        const std::int64_t v = rows[r];
        const RowRef q = row(pos_of_[v], true);
        const double yv = y_[pos_of_[v]];
        double* o = out + r * nc;
        for (std::int64_t c = 0; c < nc; ++c) {
            const std::int64_t t = pos_of_[cols[c]];
            o[c] = yv * y_[t] * q.K[q.at[t]];
        }
    }
}

double Solver::intercept() const {
    if (!equality_) return 0.0;
    double free_sum = 0.0, ub = INFINITY, lb = -INFINITY;
    std::int64_t n_free = 0;
    for (std::int64_t v = 0; v < m_; ++v) {
        const std::int64_t t = pos_of_[v];
        const double yG = F_[t];
        const bool upper = is_upper(t), lower = !upper && is_lower(t);
        if (!upper && !lower) {
            free_sum -= yG;
            ++n_free;
        } else if (upper == (y_[t] < 0.0)) {        // upper with y < 0, lower with y > 0
            ub = std::min(ub, yG);
        } else {
            lb = std::max(lb, yG);
        }
    }
    if (n_free > 0) return free_sum / static_cast<double>(n_free);
    // every b in [-ub, -lb] is optimal; where one end is infinite (every variable of one
    // kind at one bound: the one-class SVM at nu = 1) the finite end, not LIBSVM's inf
    if (!std::isfinite(ub)) return -lb;
    if (!std::isfinite(lb)) return -ub;
    return -(ub + lb) / 2.0;
}

NuReadout Solver::nu_rho() const {
    // per sign of y: the mean gradient over the free variables, else the midpoint of
    // [lb, ub] (the largest G at the upper bound, the smallest at zero; a zero bound
    // counts as the upper one, as LIBSVM's is_upper_bound is asked first)
    struct Level {
        double free_sum = 0.0, ub = INFINITY, lb = -INFINITY;
        std::int64_t n_free = 0;
        double value() const {
            if (n_free > 0) return free_sum / static_cast<double>(n_free);
            if (!std::isfinite(ub)) return lb;      // LIBSVM: (inf + lb) / 2 = inf
            if (!std::isfinite(lb)) return ub;
            return (ub + lb) / 2.0;
        }
    };
    Level pos, neg;
    for (std::int64_t v = 0; v < m_; ++v) {
        const std::int64_t t = pos_of_[v];
        const double G = y_[t] * F_[t];
        Level& s = y_[t] > 0 ? pos : neg;
        if (is_upper(t)) {
            s.lb = std::max(s.lb, G);
        } else if (is_lower(t)) {
            s.ub = std::min(s.ub, G);
        } else {
            s.free_sum += G;
            ++s.n_free;
        }
    }
    const double r1 = pos.value(), r2 = neg.value();
    return NuReadout{(r1 - r2) / 2.0, (r1 + r2) / 2.0};
}

double Solver::relative_gap(double b, double c) const {
    double quad = 0.0, lin = 0.0, slack = 0.0;
    for (std::int64_t v = 0; v < m_; ++v) {
        const std::int64_t t = pos_of_[v];
        const double g = y_[t] * F_[t];
        quad += alpha_[t] * (g - p_[t]);
        lin += p_[t] * alpha_[t];
        if (std::isfinite(upper_[t]) && upper_[t] > 0.0)
            slack += upper_[t] * std::min(g + y_[t] * b + c, 0.0);
    }
    const double P = 0.5 * quad - slack + delta_ * b + delta2_ * c;
    const double D = -(0.5 * quad + lin);
    const double scale = std::max({std::fabs(P), std::fabs(D), GAP_FLOOR});
    return std::fabs(P - D) / scale;
}

void Solver::read(double* alpha, double* grad) const {
    for (std::int64_t t = 0; t < m_; ++t) {
        alpha[var_of_[t]] = alpha_[t];
        grad[var_of_[t]] = y_[t] * F_[t];
    }
}

}  // namespace margin_opt
