/*
 * calibpool: calibration batches on several workers. See calibpool.h.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "calibpool.h"
#include "tensor.h"

struct calibpool {
	const struct model *m;
	struct calibpool_opts o;
	int want;		/* workers wanted */
	int workers;		/* those of the last run */
	struct calib *c0;	/* worker 0's engine */
	uint64_t engine_bytes;	/* tensor memory one engine holds */
};

/* One run's shared state. */
struct run {
	struct calibpool *p;
	struct calib_data *d;
	const struct calibpool_batch *b;
	int nb;
	int next;		/* the next batch to take; atomic */
	pthread_mutex_t lock;	/* guards what follows */
	pthread_cond_t gate;	/* signalled once decided */
	int decided;		/* worker 0's first batch is done */
	int open;		/* then: workers 0 .. open - 1 work */
	int fail_at;		/* the first batch that failed; nb: none */
	struct err err;		/* its error */
	long done;		/* samples done */
};

struct worker {
	struct run *r;
	struct calib *c;	/* NULL: its engine could not be made */
	int index;
	pthread_t tid;
};

void
calibpool_opts_init(struct calibpool_opts *o)
{
	struct calib_opts co;

	calib_opts_init(&co);
	o->threads = co.threads;
	o->mbits = co.mbits;
	o->serial = 0;
	o->progress = NULL;
	o->progress_ctx = NULL;
}

/* An engine on one interpreter thread, or on the pool's threads. */
static struct calib *
engine_new(const struct calibpool *p, int one_thread, struct err *e)
{
	struct calib_opts co;

	calib_opts_init(&co);
	co.threads = one_thread ? 1 : p->o.threads;
	co.mbits = p->o.mbits;
	return calib_new(p->m, &co, e);
}

struct calibpool *
calibpool_new(const struct model *m, const struct calibpool_opts *o,
    struct err *e)
{
	struct calibpool *p;
	uint64_t live;

	if (!(p = calloc(1, sizeof *p))) {
		err_nomem(e);
		return NULL;
	}
	p->m = m;
	if (o)
		p->o = *o;
	else
		calibpool_opts_init(&p->o);
	p->want = p->o.threads > 0 ? p->o.threads : 2;
	if (p->o.serial || getenv("ONNXQ_CALIB_SERIAL"))
		p->want = 1;
	p->workers = 1;
	live = tensor_mem_live();
	if (!(p->c0 = engine_new(p, p->want > 1, e))) {
		free(p);
		return NULL;
	}
	if (tensor_mem_live() > live)
		p->engine_bytes = tensor_mem_live() - live;
	return p;
}

void
calibpool_free(struct calibpool *p)
{
	if (!p)
		return;
	calib_free(p->c0);
	free(p);
}

struct calib *
calibpool_engine(const struct calibpool *p)
{
	return p->c0;
}

int
calibpool_workers(const struct calibpool *p)
{
	return p->workers;
}

/* Load batch b of d and run it on c; errors name its first sample. */
static int
run_batch(struct calib *c, struct calib_data *d,
    const struct calibpool_batch *b, struct err *e)
{
	const struct interp *ip = calib_interp(c);
	size_t nin = (size_t)interp_ninputs(ip);
	struct tensor *in = calloc(nin + 1, sizeof *in);
	int r;

	if (!in)
		return err_nomem(e);
	if (calib_data_load(d, ip, b->first, b->n, in, e) < 0) {
		free(in);
		return -1;
	}
	if ((r = calib_run(c, in, e)) < 0) {
		if (b->n > 1)
			err_prefix(e, "%s (batch of %d)",
			    calib_data_name(d, b->first), b->n);
		else
			err_prefix(e, "%s", calib_data_name(d, b->first));
	}
	tensor_release_n(in, nin);
	free(in);
	return r;
}

/* Batch i done (or failed with e), under the lock. */
static void
batch_done(struct run *r, int i, const struct err *e)
{
	pthread_mutex_lock(&r->lock);
	if (e && i < r->fail_at) {
		r->fail_at = i;
		r->err = *e;
	} else if (!e) {
		r->done += r->b[i].n;
		if (r->p->o.progress)
			r->p->o.progress(r->p->o.progress_ctx, r->done);
	}
	pthread_mutex_unlock(&r->lock);
}

/* Take batches until none is left or one before them failed. */
static void
work(struct run *r, struct calib *c)
{
	struct err e;

	for (;;) {
		int i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED), stop;

		if (i >= r->nb)
			return;
		pthread_mutex_lock(&r->lock);
		stop = i > r->fail_at;
		pthread_mutex_unlock(&r->lock);
		if (stop)
			return;
		if (run_batch(c, r->d, &r->b[i], &e) < 0) {
			batch_done(r, i, &e);
			return;
		}
		batch_done(r, i, NULL);
	}
}

/*
 * A worker makes its engine while worker 0 runs the first batch, then
 * waits for the word on how many may work.
 */
static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	struct err e;
	int go;

	/* without an engine, the others take its batches */
	w->c = engine_new(r->p, 1, &e);
	pthread_mutex_lock(&r->lock);
	while (!r->decided)
		pthread_cond_wait(&r->gate, &r->lock);
	go = w->c && w->index < r->open;
	pthread_mutex_unlock(&r->lock);
	if (go)
		work(r, w->c);
	return NULL;
}

/* Workers whose engines fit beside what is live now. */
static int
workers_for_engines(const struct calibpool *p, int want)
{
	uint64_t limit = tensor_mem_limit(), live = tensor_mem_live();
	uint64_t room = limit > live ? limit - live : 0;
	int n = 1;

	while (n < want && room >= p->engine_bytes) {
		room -= p->engine_bytes;
		n++;
	}
	return n;
}

/*
 * How many workers memory allows, once the first batch took peak bytes
 * of tensors at the most: each must have room for twice that, and each
 * but worker 0 for its engine, beside what is live now.
 */
static int
workers_for_memory(const struct calibpool *p, uint64_t peak, int want)
{
	uint64_t limit = tensor_mem_limit(), live = tensor_mem_live();
	uint64_t room, per = p->engine_bytes + 2 * peak;
	int n = 1;

	if (limit == UINT64_MAX)
		return want;
	room = limit > live ? limit - live : 0;
	room = room > 2 * peak ? room - 2 * peak : 0;
	while (n < want && (per == 0 || room >= per)) {
		room -= per;
		n++;
	}
	return n;
}

/*
 * When one worker is to run the batches after all (one batch, or memory
 * for one), it runs them on an engine with the pool's threads, worker
 * 0's statistics so far merged into it.
 */
static int
go_serial(struct calibpool *p, struct err *e)
{
	struct calib *c;

	if (p->want == 1 || !(c = engine_new(p, 0, e)))
		return 0;	/* worker 0's engine does it */
	p->want = 1;
	if (calib_merge(c, p->c0, e) < 0) {
		calib_free(c);
		return -1;
	}
	calib_free(p->c0);
	p->c0 = c;
	return 0;
}

/* Open the gate to workers 0 .. open - 1; the others go. */
static void
decide(struct run *r, int open)
{
	pthread_mutex_lock(&r->lock);
	r->decided = 1;
	r->open = open;
	pthread_cond_broadcast(&r->gate);
	pthread_mutex_unlock(&r->lock);
}

/*
 * Free the engines of workers 1 .. n - 1 (joined); with add, the
 * statistics of those that worked are added to worker 0's first.
 */
static int
merge(struct run *r, struct worker *w, int n, int add, struct err *e)
{
	int rc = 0;

	/* in worker order: the merge is exact, so any order would do */
	for (int i = 1; i < n; i++) {
		if (add && rc == 0 && w[i].c && i < r->open) {
			rc = calib_merge(r->p->c0, w[i].c, e);
			r->p->workers++;
		}
		calib_free(w[i].c);
	}
	return rc;
}

/* Workers 1 .. n - 1 told to go, joined and their engines freed. */
static void
dismiss(struct run *r, struct worker *w, int n)
{
	for (int i = 1; i < n; i++)
		pthread_join(w[i].tid, NULL);
	merge(r, w, n, 0, NULL);
}

int
calibpool_run(struct calibpool *p, struct calib_data *d,
    const struct calibpool_batch *b, int nb, struct err *e)
{
	struct run r = { .p = p, .d = d, .b = b, .nb = nb, .fail_at = nb };
	struct worker *w = NULL;
	int n, open, rc = -1;

	p->workers = 1;
	if (nb < 1)
		return 0;
	if (nb == 1 && go_serial(p, e) < 0)
		return -1;
	if (pthread_mutex_init(&r.lock, NULL) != 0)
		return err_set(e, "cannot make a lock");
	if (pthread_cond_init(&r.gate, NULL) != 0) {
		pthread_mutex_destroy(&r.lock);
		return err_set(e, "cannot make a lock");
	}
	n = workers_for_engines(p, p->want < nb ? p->want : nb);
	if (n > 1 && !(w = calloc((size_t)n, sizeof *w)))
		n = 1;
#ifdef __GLIBC__
	/*
	 * A thread of its own gets a malloc arena of its own, whose heaps
	 * are unmapped whenever they empty: each run of a worker would then
	 * fault in its tensors' memory afresh (det: three times the page
	 * faults of a serial run). In the main arena they stay (interp.c's
	 * mallopt); its lock is taken a few thousand times a run.
	 */
	if (n > 1)
		mallopt(M_ARENA_MAX, 1);
#endif
	/* their engines are made while worker 0 runs the first batch */
	for (int i = 1; i < n; i++) {
		w[i].r = &r;
		w[i].index = i;
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]) != 0) {
			n = i;	/* the workers so far share its batches */
			break;
		}
	}
	tensor_mem_thread_mark();
	if (run_batch(p->c0, d, &b[0], e) < 0) {
		decide(&r, 0);
		dismiss(&r, w, n);
		goto out;
	}
	r.done = b[0].n;
	if (p->o.progress)
		p->o.progress(p->o.progress_ctx, r.done);
	r.next = 1;
	open = n > 1 ? workers_for_memory(p, tensor_mem_thread_peak(), n) : 1;
	decide(&r, open);
	if (open == 1) {
		dismiss(&r, w, n);
		n = 1;
		if (go_serial(p, e) < 0)
			goto out;
	}
	work(&r, p->c0);
	for (int i = 1; i < n; i++)
		pthread_join(w[i].tid, NULL);
	if (r.fail_at < nb)
		*e = r.err;
	else
		rc = 0;
	if (merge(&r, w, n, rc == 0, e) < 0)
		rc = -1;
out:
	pthread_cond_destroy(&r.gate);
	pthread_mutex_destroy(&r.lock);
	free(w);
	return rc;
}
