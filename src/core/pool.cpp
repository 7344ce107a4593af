// The thread pool of parallel_for (pool.hpp).
//
// Workers are started on the first job that needs them and then kept. After a job a
// worker watches for the next one for SPIN_NS (SMO asks for a split kernel row every
// ~0.1 ms: a sleep and a wake per row cost ~25 % of a9a's run), then sleeps on a
// condition variable (a busy machine loses no more than that to it); the caller waits
// for the workers' shares the same way.
// A fork leaves the child with only the forking thread: a pthread_atfork handler
// forgets the parent's workers there (their memory is leaked on purpose, the threads do
// not exist) and the child's first parallel job starts its own.

#include "pool.hpp"

#include <pthread.h>

#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace margin_opt {
namespace {

// How long a worker (or the caller) watches for the next job (its share's end) before
// it sleeps.
constexpr std::int64_t SPIN_NS = 50000;

struct PoolState {
    std::mutex lock;                 // guards the fields below, and the changes of the atomics
    std::condition_variable wake;    // workers wait here for a new generation
    std::condition_variable done;    // the caller waits here for remaining == 0
    std::vector<std::thread> workers;
    const std::function<void(int)>* job = nullptr;
    int nthr = 0;                    // the job's h range
    std::atomic<int> remaining{0};   // workers' h still running
    std::atomic<std::uint64_t> generation{0};
    bool busy = false;               // a caller holds the pool
};

// Watches `ready` for SPIN_NS; true where it became true.
template <class Ready>
bool spin_until(Ready ready) {
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0;; ++k) {
        if (ready()) return true;
        _mm_pause();
        if ((k & 63) == 63 && std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start).count() > SPIN_NS)
            return ready();
    }
}

PoolState* state = nullptr;          // created on first use; replaced in a forked child
std::mutex create_lock;
std::once_flag atfork_once;

void forget_after_fork() {
    // The child has one thread: the parent's workers and any lock they held are gone.
    state = nullptr;
    new (&create_lock) std::mutex();
}

PoolState& get_state() {
    std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, forget_after_fork); });
    std::lock_guard<std::mutex> g(create_lock);
    if (state == nullptr) state = new PoolState();   // never deleted (see forget_after_fork)
    return *state;
}

void worker_main(PoolState* s, int index) {
    std::uint64_t seen = 0;
    for (;;) {
        const auto fresh = [&] { return s->generation.load(std::memory_order_acquire) != seen; };
        if (!spin_until(fresh)) {
            std::unique_lock<std::mutex> g(s->lock);
            s->wake.wait(g, fresh);
        }
        const std::function<void(int)>* job;
        int nthr;
        {
            std::lock_guard<std::mutex> g(s->lock);
            seen = s->generation.load(std::memory_order_acquire);
            job = s->job;
            nthr = s->nthr;
        }
        const int h = index + 1;
        if (h >= nthr || job == nullptr) continue;   // this job needs fewer threads
        (*job)(h);
        if (s->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            { std::lock_guard<std::mutex> g(s->lock); }
            s->done.notify_one();
        }
    }
}

}  // namespace

void parallel_for(int nthr, const std::function<void(int)>& job) {
    if (nthr <= 1) {
        job(0);
        return;
    }
    PoolState& s = get_state();
    {
        std::unique_lock<std::mutex> g(s.lock);
        if (s.busy) {                          // another caller's job: run ours here
            g.unlock();
            for (int h = 0; h < nthr; ++h) job(h);
            return;
        }
        s.busy = true;
        while (static_cast<int>(s.workers.size()) < nthr - 1) {
            const int index = static_cast<int>(s.workers.size());
            s.workers.emplace_back(worker_main, &s, index);
            s.workers.back().detach();
        }
        s.job = &job;
        s.nthr = nthr;
        s.remaining.store(nthr - 1, std::memory_order_relaxed);
        s.generation.fetch_add(1, std::memory_order_release);
    }
    s.wake.notify_all();
    job(0);
    const auto finished = [&] { return s.remaining.load(std::memory_order_acquire) == 0; };
    std::unique_lock<std::mutex> g(s.lock, std::defer_lock);
    if (!spin_until(finished)) {
        g.lock();
        s.done.wait(g, finished);
    } else {
        g.lock();
    }
    s.job = nullptr;
    s.busy = false;
}

int pool_workers() {
    std::lock_guard<std::mutex> g(create_lock);
    if (state == nullptr) return 0;
    std::lock_guard<std::mutex> g2(state->lock);
    return static_cast<int>(state->workers.size());
}

}  // namespace margin_opt
