/*
 * outfile: write an output file atomically. The data goes to a temporary
 * file beside the target; outfile_commit() flushes, fsyncs and renames it
 * into place, outfile_abort() removes it. So an interrupted or failing
 * program never leaves a partial file where a good one was, and writing
 * over one's own input works. Path "-" means stdout (commit checks the
 * final flush; abort does nothing). An existing target that is not a
 * regular file (a device, a FIFO) is written directly, never replaced.
 */
#ifndef ONNXQ_OUTFILE_H
#define ONNXQ_OUTFILE_H

#include <stdio.h>

#include "err.h"

struct outfile;

struct outfile *outfile_open(const char *path, struct err *e);
FILE *outfile_fp(struct outfile *o);
/* Finish and rename; frees o whatever the result. */
int outfile_commit(struct outfile *o, struct err *e);
/* Discard; frees o. NULL is fine. */
void outfile_abort(struct outfile *o);

/*
 * A file of a name of its own beside path, for the second file of a pair
 * (a model's external data): "DIR/BASE.XXXXXX" followed by suffix, made
 * new (BASE is path's last component, cut so the name fits in 255
 * bytes). It is written in place, and stays a temporary (removed by
 * outfile_abort and by the signal handler) until outfile_commit_pair.
 */
struct outfile *outfile_open_unique(const char *path, const char *suffix,
    struct err *e);
/* The file o writes: the temporary of outfile_open_unique's. */
const char *outfile_name(const struct outfile *o);
/*
 * Commit the pair: data (from outfile_open_unique) flushed and synced,
 * then o renamed into place, and only then data no longer a temporary;
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE are held over the rename, so an
 * interruption leaves o's target as it was with data removed, or the new
 * pair whole. Frees both; on failure both are removed.
 */
int outfile_commit_pair(struct outfile *o, struct outfile *data,
    struct err *e);
/*
 * Remove every temporary still open in this process; async-signal-safe, for
 * SIGINT/SIGTERM handlers (cmd/ installs them with outfile_cleanup_on_signals,
 * which leaves SIGINT, SIGTERM and SIGHUP alone when they were ignored at
 * start, as under nohup, and always catches SIGPIPE: after the cleanup the
 * program dies of the signal, quietly, as it would have without it).
 */
void outfile_cleanup_all(void);
void outfile_cleanup_on_signals(void);

#endif
