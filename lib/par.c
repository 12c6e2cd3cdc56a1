/*
 * par: a job is a counter of chunks, tagged with the job's number in its
 * top 32 bits, so a worker that saw an old job can never take a chunk of
 * a new one: it claims chunk i of job g by compare-and-swap from (g, i)
 * to (g, i + 1), and the job's function and context it read are g's
 * while chunk i < n of g is unclaimed (the next job is set up only once
 * all of g's chunks are done). See par.h.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "par.h"

#define SPIN_NS 100000		/* a worker's spin after a job */

static struct {
	_Atomic uint64_t next;		/* job << 32 | next chunk */
	_Atomic int64_t done;		/* chunks finished */
	_Atomic int64_t n;
	_Atomic int threads;
	_Atomic(par_fn) fn;
	void *_Atomic ctx;
	_Atomic uint32_t job;		/* the current job's number */
	_Atomic int sleepers;
	_Atomic int busy;		/* a caller owns the pool */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int nworkers;			/* under lock */
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
};

static _Thread_local int in_job;

static inline void
relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static int64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Take and run chunks of job g until none is left; w is the taker. */
static void
take_chunks(uint32_t g, int w)
{
	uint64_t v = atomic_load_explicit(&pool.next, memory_order_acquire);

	for (;;) {
		int64_t i = (int64_t)(v & 0xffffffffu), n;
		par_fn fn;
		void *ctx;

		if ((uint32_t)(v >> 32) != g)
			return;
		n = atomic_load_explicit(&pool.n, memory_order_relaxed);
		fn = atomic_load_explicit(&pool.fn, memory_order_relaxed);
		ctx = atomic_load_explicit(&pool.ctx, memory_order_relaxed);
		if (i >= n || w >= atomic_load_explicit(&pool.threads,
		    memory_order_relaxed))
			return;
		if (!atomic_compare_exchange_weak_explicit(&pool.next, &v,
		    v + 1, memory_order_acq_rel, memory_order_acquire))
			continue;
		fn(ctx, i, w);
		atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
		v = atomic_load_explicit(&pool.next, memory_order_acquire);
	}
}

/* Wait until the job number is no longer seen: spin, then sleep. */
static uint32_t
await_job(uint32_t seen)
{
	int64_t t0 = now_ns();
	uint32_t g;

	for (int k = 1;; k++) {
		if ((g = atomic_load(&pool.job)) != seen)
			return g;
		relax();
		if (k % 64 == 0 && now_ns() - t0 > SPIN_NS)
			break;
	}
	pthread_mutex_lock(&pool.lock);
	atomic_fetch_add(&pool.sleepers, 1);
	while ((g = atomic_load(&pool.job)) == seen)
		pthread_cond_wait(&pool.wake, &pool.lock);
	atomic_fetch_sub(&pool.sleepers, 1);
	pthread_mutex_unlock(&pool.lock);
	return g;
}

static void *
worker(void *arg)
{
	int w = (int)(intptr_t)arg;
	uint32_t seen = atomic_load(&pool.job);

	in_job = 1;	/* a chunk's own par_for runs on its thread */
	for (;;) {
		seen = await_job(seen);
		take_chunks(seen, w);
	}
	return NULL;
}

/* Start workers up to threads - 1 of them; fewer if the system refuses. */
static void
grow(int threads)
{
	pthread_attr_t at;

	if (threads > PAR_MAX_THREADS)
		threads = PAR_MAX_THREADS;
	pthread_mutex_lock(&pool.lock);
	if (pool.nworkers < threads - 1 && pthread_attr_init(&at) == 0) {
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		while (pool.nworkers < threads - 1) {
			pthread_t t;

			if (pthread_create(&t, &at, worker,
			    (void *)(intptr_t)(pool.nworkers + 1)) != 0)
				break;
			pool.nworkers++;
		}
		pthread_attr_destroy(&at);
	}
	pthread_mutex_unlock(&pool.lock);
}

static void
serial(int64_t n, par_fn fn, void *ctx)
{
	for (int64_t i = 0; i < n; i++)
		fn(ctx, i, 0);
}

void
par_for(int64_t n, int threads, par_fn fn, void *ctx)
{
	int expect = 0;
	uint32_t g;

	if (n <= 1 || threads <= 1 || in_job || n > INT32_MAX ||
	    !atomic_compare_exchange_strong(&pool.busy, &expect, 1)) {
		serial(n, fn, ctx);
		return;
	}
	if (threads > PAR_MAX_THREADS)
		threads = PAR_MAX_THREADS;
	grow(threads);
	g = atomic_load_explicit(&pool.job, memory_order_relaxed) + 1;
	atomic_store_explicit(&pool.n, n, memory_order_relaxed);
	atomic_store_explicit(&pool.fn, fn, memory_order_relaxed);
	atomic_store_explicit(&pool.ctx, ctx, memory_order_relaxed);
	atomic_store_explicit(&pool.threads, threads, memory_order_relaxed);
	atomic_store_explicit(&pool.done, 0, memory_order_relaxed);
	atomic_store_explicit(&pool.next, (uint64_t)g << 32,
	    memory_order_release);
	atomic_store(&pool.job, g);
	if (atomic_load(&pool.sleepers) > 0) {
		pthread_mutex_lock(&pool.lock);
		pthread_cond_broadcast(&pool.wake);
		pthread_mutex_unlock(&pool.lock);
	}
	in_job = 1;
	take_chunks(g, 0);
	in_job = 0;
	/* Only chunks a worker has begun are left. */
	for (int k = 1; atomic_load_explicit(&pool.done,
	    memory_order_acquire) < n; k++)
		if (k % 1024 == 0)
			sched_yield();	/* its thread may want our CPU */
		else
			relax();
	atomic_store(&pool.busy, 0);
}

struct range_job {
	par_range_fn fn;
	void *ctx;
	int64_t n, parts;
};

static void
range_chunk(void *ctx, int64_t k, int w)
{
	const struct range_job *j = ctx;

	j->fn(j->ctx, j->n * k / j->parts, j->n * (k + 1) / j->parts, w);
}

void
par_range(int64_t n, int threads, par_range_fn fn, void *ctx)
{
	struct range_job j = { fn, ctx, n, 4 * (int64_t)threads };

	if (n <= 0)
		return;
	if (threads <= 1 || n == 1 || in_job) {
		fn(ctx, 0, n, 0);
		return;
	}
	if (j.parts > n)
		j.parts = n;
	par_for(j.parts, threads, range_chunk, &j);
}

int
par_in_job(void)
{
	return in_job;
}
