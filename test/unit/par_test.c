/*
 * par_test: lib/par.c runs every chunk exactly once, with worker indexes
 * below the thread count, over many jobs back to back (a late worker
 * must never take a chunk of the next job); one thread, one chunk and a
 * par_for inside a chunk run on the calling thread, in order.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "par.h"
#include "unit.h"

#define N 1000

struct count {
	_Atomic int hits[N];
	_Atomic int bad_worker;
	int threads;
	int job;
	_Atomic int wrong_job;
	int *job_of;		/* the job each chunk belongs to */
};

static void
count_chunk(void *ctx, int64_t i, int w)
{
	struct count *c = ctx;

	atomic_fetch_add(&c->hits[i], 1);
	if (w < 0 || w >= c->threads)
		atomic_fetch_add(&c->bad_worker, 1);
	if (c->job_of && c->job_of[i] != c->job)
		atomic_fetch_add(&c->wrong_job, 1);
}

static void
test_every_chunk_once(void)
{
	static struct count c;
	int ok = 1;

	for (int threads = 1; threads <= 4; threads++)
		for (int64_t n = 0; n <= 70; n += 7) {
			memset(&c, 0, sizeof c);
			c.threads = threads;
			par_for(n, threads, count_chunk, &c);
			for (int64_t i = 0; i < N; i++)
				ok &= atomic_load(&c.hits[i]) == (i < n);
			CHECK_EQ_INT(atomic_load(&c.bad_worker), 0);
		}
	CHECK(ok);
}

/* Jobs back to back, each with its own context: no chunk crosses over. */
static void
test_jobs_back_to_back(void)
{
	static struct count c[2];
	static int job_of[2][N];
	int ok = 1;

	for (int job = 0; job < 3000; job++) {
		struct count *cc = &c[job % 2];
		int64_t n = 1 + job % 37;

		memset(cc, 0, sizeof *cc);
		cc->threads = 2;
		cc->job = job;
		for (int64_t i = 0; i < n; i++)
			job_of[job % 2][i] = job;
		cc->job_of = job_of[job % 2];
		par_for(n, 2, count_chunk, cc);
		for (int64_t i = 0; i < n; i++)
			ok &= atomic_load(&cc->hits[i]) == 1;
		ok &= atomic_load(&cc->wrong_job) == 0;
		/* spoil the context: a late taker would be caught */
		for (int64_t i = 0; i < n; i++)
			job_of[job % 2][i] = -1;
	}
	CHECK(ok);
}

struct order {
	int64_t seen[64];
	int n;
	int nested_in_job;
};

static void
record_chunk(void *ctx, int64_t i, int w)
{
	struct order *o = ctx;

	(void)w;
	o->seen[o->n++] = i;
}

static void
nested_chunk(void *ctx, int64_t i, int w)
{
	struct order inner = { .n = 0 };
	int *ok = ctx;

	(void)i;
	if (!par_in_job())
		*ok = 0;
	/* on this thread, in order, w 0 */
	par_for(8, 2, record_chunk, &inner);
	for (int k = 0; k < 8; k++)
		if (inner.seen[k] != k)
			*ok = 0;
	if (inner.n != 8 || w < 0 || w > 1)
		*ok = 0;
}

static void
test_serial_cases(void)
{
	struct order o = { .n = 0 };
	int ok = 1;

	par_for(10, 1, record_chunk, &o);
	CHECK_EQ_INT(o.n, 10);
	for (int k = 0; k < 10; k++)
		ok &= o.seen[k] == k;
	CHECK(ok);
	CHECK(!par_in_job());
	par_for(16, 2, nested_chunk, &ok);
	CHECK(ok);
	CHECK(!par_in_job());
}

/* Two callers at once: one owns the pool, the other runs on its own. */
static void *
caller(void *arg)
{
	struct count *c = arg;

	for (int r = 0; r < 200; r++)
		par_for(N, 2, count_chunk, c);
	return NULL;
}

static void
test_two_callers(void)
{
	static struct count c[2];
	pthread_t t;
	int ok = 1;

	memset(c, 0, sizeof c);
	c[0].threads = c[1].threads = 2;
	REQUIRE(pthread_create(&t, NULL, caller, &c[0]) == 0);
	caller(&c[1]);
	pthread_join(t, NULL);
	for (int k = 0; k < 2; k++)
		for (int64_t i = 0; i < N; i++)
			ok &= atomic_load(&c[k].hits[i]) == 200;
	CHECK(ok);
}

UNIT_MAIN(test_every_chunk_once, test_jobs_back_to_back, test_serial_cases,
    test_two_callers)
