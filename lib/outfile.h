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
 * Remove every temporary still open in this process; async-signal-safe, for
 * SIGINT/SIGTERM handlers (cmd/ installs them with outfile_cleanup_on_signals,
 * which leaves SIGINT, SIGTERM and SIGHUP alone when they were ignored at
 * start, as under nohup, and always catches SIGPIPE: after the cleanup the
 * program dies of the signal, quietly, as it would have without it).
 */
void outfile_cleanup_all(void);
void outfile_cleanup_on_signals(void);

#endif
