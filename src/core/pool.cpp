// The thread pool of parallel_for (pool.hpp).
//
// Workers are started on the first job that needs them and then kept, sleeping on a
// condition variable between jobs (no spinning: a busy machine loses no CPU to them).
// A fork leaves the child with only the forking thread: a pthread_atfork handler
// forgets the parent's workers there (their memory is leaked on purpose, the threads do
// not exist) and the child's first parallel job starts its own.

#include "pool.hpp"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace margin_opt {
namespace {

struct PoolState {
    std::mutex lock;                 // guards everything below
    std::condition_variable wake;    // workers wait here for a new generation
    std::condition_variable done;    // the caller waits here for remaining == 0
    std::vector<std::thread> workers;
    const std::function<void(int)>* job = nullptr;
    int nthr = 0;                    // the job's h range
    int remaining = 0;               // workers' h still running
    std::uint64_t generation = 0;
    bool busy = false;               // a caller holds the pool
};

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
    std::unique_lock<std::mutex> g(s->lock);
    for (;;) {
        s->wake.wait(g, [&] { return s->generation != seen; });
        seen = s->generation;
        const int h = index + 1;
        if (h >= s->nthr) continue;          // this job needs fewer threads
        const std::function<void(int)>* job = s->job;
        g.unlock();
        (*job)(h);
        g.lock();
        if (--s->remaining == 0) s->done.notify_one();
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
        s.remaining = nthr - 1;
        ++s.generation;
    }
    s.wake.notify_all();
    job(0);
    std::unique_lock<std::mutex> g(s.lock);
    s.done.wait(g, [&] { return s.remaining == 0; });
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
