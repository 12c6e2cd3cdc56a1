/*
 * interp: run an ONNX model's main graph on the CPU.
 *
 * interp_new() checks that every node has a kernel (listing all that are
 * missing, naming node and op), decodes the constant tensors once, and
 * plans the run: topological order, and for each value the step after
 * which nothing reads it, so its memory is freed as early as possible and
 * peak memory follows the live set. Dynamic dimensions are taken from the
 * actual inputs at run time.
 *
 * The observe callback sees every tensor a node of the main graph
 * produces (and the graph inputs), before it can be freed; it must not
 * keep the pointer. A non-zero return stops the run with that error.
 *
 * Without an observer, chains of elementwise float nodes run in one pass
 * (fuse.h), QuantizeLinear -> DequantizeLinear pairs among them, and the
 * values between their links are never made; the outputs are bit for
 * bit the same. With an observer, they run so only when it takes chains
 * block by block (struct interp_chain_observer); else node by node,
 * each tensor observed whole. ONNXQ_NO_FUSE set in the environment when
 * the interpreter is made turns this off (for comparisons).
 */
#ifndef ONNXQ_INTERP_H
#define ONNXQ_INTERP_H

#include "err.h"
#include "fuse.h"
#include "model.h"
#include "tensor.h"

typedef int (*interp_observe_fn)(void *ctx, const char *name,
    const struct tensor *t, struct err *e);

/*
 * An observer that can take a fused chain's tensors block by block
 * (fuse_run_seen), so that the chain still runs in one pass and the
 * values between its links are never written out. All take the
 * observer's ctx. begin: the chain's outputs, link by link, are named
 * names[0..n-1], each of x's shape and type: 1 to see them so, 0 to
 * have the nodes run and observed one by one, -1 error. see: fuse.h,
 * blocks of `block` (<= FUSE_SEEN_MAX) values, threads t < max_threads.
 * done, after all blocks: 0, or 1 to have the nodes run and observed
 * one by one after all (the observer dropped what it saw), -1 error.
 * The tensors seen so are not shown to observe.
 */
struct interp_chain_observer {
	int (*begin)(void *ctx, const char *const *names, int n,
	    const struct tensor *x, struct err *e);
	fuse_see_fn see;
	int (*done)(void *ctx, struct err *e);
	int64_t block;
	int max_threads;
};

struct foldcache;

struct interp_opts {
	int threads;			/* 0 means 2 */
	interp_observe_fn observe;	/* may be NULL */
	void *observe_ctx;
	/* bytes all live tensors may take (tensor.h): 0 means
	 * $ONNXQ_MEM_LIMIT, else half the physical memory */
	uint64_t mem_limit;
	/*
	 * 1: also run once, when the graph is planned, every node of the
	 * main graph with one output whose inputs are all constant (the
	 * DequantizeLinear of each quantized weight, above all) and keep
	 * its output for the interpreter's life: runs that repeat the
	 * model many times save the work, for the memory of those values.
	 * Results are the same; the observer still sees every tensor.
	 */
	int fold_constant_nodes;
	/* with observe: how it takes fused chains; NULL: it does not */
	const struct interp_chain_observer *chain_observer;
	/*
	 * With fold_constant_nodes: values folded by earlier interpreters,
	 * taken (lent: the cache must outlive this interpreter) when a node
	 * and its inputs are the same, and given the new ones (foldcache.h);
	 * NULL: none. The cache owns every value folded and lends it: one
	 * interpreter at a time may use a cache (a later one that folds the
	 * same name otherwise frees what an earlier one still reads).
	 * The kernels keep there what they derive from those values
	 * (packed weights: foldcache_form()), for the next interpreter.
	 */
	struct foldcache *fold_cache;
};

struct interp;

/* m must outlive the interpreter. opts may be NULL. */
struct interp *interp_new(const struct model *m, const struct interp_opts *opts,
    struct err *e);
void interp_free(struct interp *ip);

/* Graph inputs that are not initializers, in order. */
int interp_ninputs(const struct interp *ip);
const char *interp_input_name(const struct interp *ip, int i);
/* Declared element type and shape (dims < 0 where dynamic); rank -1 if unknown. */
int interp_input_type(const struct interp *ip, int i, int *rank, int64_t *dims);
int interp_noutputs(const struct interp *ip);
const char *interp_output_name(const struct interp *ip, int i);

/*
 * Run once. inputs[i] is the i-th graph input (checked against the
 * declared type and static dims, naming the input on mismatch); outputs
 * (interp_noutputs() empty tensors) receive the graph outputs, which the
 * caller releases.
 */
int interp_run(struct interp *ip, const struct tensor *inputs,
    struct tensor *outputs, struct err *e);

/*
 * Run once, reusing the values of an earlier run of a model that shares
 * nodes with this one: each node whose skip[i] is set (i: its index in
 * the graph's node list) is not run, and its outputs are what
 * cached(ctx, NAME) returns, kept alive by the caller through the run
 * (NULL for one that a node run reads is the error "node N (Op): no
 * cached value of NAME"; for a graph output, it comes back empty: the
 * caller skipped its node, not wanting it). The observer does not see
 * the skipped nodes' outputs.
 * Otherwise as interp_run(); skip NULL runs every node.
 */
typedef const struct tensor *(*interp_cached_fn)(void *ctx,
    const char *name);
int interp_run_skip(struct interp *ip, const struct tensor *inputs,
    const unsigned char *skip, interp_cached_fn cached, void *ctx,
    struct tensor *outputs, struct err *e);

/*
 * Run once as interp_run(), handing each value a node of the main graph
 * makes to keep(ctx, NAME, t) when the run is done with it (after its
 * last reader): keep may take the tensor (tensor_move) rather than copy
 * it; what it leaves is released. Graph outputs go to outputs instead.
 * Chains of elementwise nodes run one by one, so that each value is made.
 */
typedef void (*interp_keep_fn)(void *ctx, const char *name,
    struct tensor *t);
int interp_run_keep(struct interp *ip, const struct tensor *inputs,
    interp_keep_fn keep, void *ctx, struct tensor *outputs, struct err *e);

/*
 * Subgraphs, for the control-flow kernels (op_control.c). interp_new()
 * plans the graph attributes of every node (If branches, Loop and Scan
 * bodies, nested to any depth) once, with the node; the kernel finds
 * them in op_ctx.graphs and runs them as often as it needs. A subgraph
 * reads the values of enclosing graphs it names (outer scope) as they are
 * when its node runs. interp_ninputs(), interp_noutputs() and the names
 * work on a subgraph too; its tensors are not observed.
 *
 * Run subgraph sub on inputs[i] (interp_ninputs(sub) of them, not
 * checked against declared types); outputs as for interp_run().
 */
int interp_graph_run(struct interp *sub, const struct tensor *const *inputs,
    struct tensor *outputs, struct err *e);

/*
 * OpenMP worker threads that spin between kernels take the CPU from the
 * threads doing work when the machine is busy (a two-thread run on a
 * loaded two-core machine went from 115 ms to 650 ms). libgomp reads
 * its settings only at start-up, so a program calls this first thing in
 * main: unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set, it sets
 * GOMP_SPINCOUNT=10000 (spin briefly, then sleep: fully passive waiting
 * made det 1.5x slower on a quiet machine, since a sleeping worker takes
 * ~100 us to wake) and re-executes the program (/proc/self/exe) with the
 * same arguments. Returns only when it did not re-execute. The kernels
 * themselves run on par.h's pool, not OpenMP, but every program that
 * runs models calls it for the two settings below (the re-execution
 * costs about 10 ms).
 *
 * Likewise, unless GLIBC_TUNABLES is set, it sets it to
 * glibc.malloc.hugetlb=1: malloc then asks for transparent huge pages.
 * A program that makes and runs many models touches hundreds of MB of
 * fresh memory, and on a virtual machine the first touch of each 4 KiB
 * page can cost more than the work done in it (256 MiB took 1.4 s of
 * CPU, 0.1 s in huge pages; onnx-mixprec on PaddleOCR rec: 6-10% less
 * CPU, the same peak memory). Outputs do not change. And it keeps freed
 * memory in the heap from then on, as interp_new() does, so that what
 * the program frees before its first interpreter (a model read and
 * dropped) is not touched afresh again (rec: a tenth of the page
 * faults).
 *
 * And unless OPENBLAS_NUM_THREADS is set, it sets it to 1: OpenBLAS is
 * only called from one thread at a time, and the threads a pthread build
 * starts when it is loaded spin on sched_yield, whatever the program
 * does (onnx-verify on PaddleOCR rec, 32 lines: about 0.15 s of CPU a
 * run, on another core; with huge pages too, 1.75 s became 1.1-1.4 s,
 * the rest from fewer TLB misses and first touches). The library's own
 * constructor reads it before main() and before a preinit function runs,
 * so nothing short of a new start sets it.
 */
void interp_reexec_bounded_spin(char *const *argv);

#endif
