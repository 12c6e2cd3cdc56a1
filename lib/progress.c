/*
 * progress: see progress.h.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define BAR 20
#define REDRAW 0.2	/* seconds between redraws */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
progress_wanted(FILE *fp, int quiet)
{
	const char *term = getenv("TERM");

	if (quiet || !fp || !isatty(fileno(fp)))
		return 0;
	return !term || strcmp(term, "dumb") != 0;
}

void
progress_init(struct progress *p, FILE *fp, int enabled, const char *prog,
    const char *unit, int64_t total)
{
	memset(p, 0, sizeof *p);
	p->fp = enabled ? fp : NULL;
	p->prog = prog;
	p->unit = unit;
	p->total = total;
	p->start = p->last = now();
}

/* "1:02:03" or "2:03" for a duration in seconds. */
static void
fmt_time(double s, char *buf, size_t size)
{
	long t = s < 0 ? 0 : s > 359999 ? 359999 : (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60,
		    t % 60);
	else
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

static void
draw(struct progress *p, double t)
{
	char line[256], bar[BAR + 1], eta[32];
	double el = t - p->start, rate = el > 0 ? (double)p->done / el : 0;
	int n = 0, len;

	if (p->total > 0) {
		int fill = (int)(BAR * (double)p->done / (double)p->total);

		if (fill > BAR)
			fill = BAR;
		memset(bar, '#', (size_t)fill);
		memset(bar + fill, '.', (size_t)(BAR - fill));
		bar[BAR] = '\0';
		n = snprintf(line, sizeof line, "%s: [%s] %lld/%lld %s",
		    p->prog, bar, (long long)p->done, (long long)p->total,
		    p->unit);
	} else
		n = snprintf(line, sizeof line, "%s: %lld %s", p->prog,
		    (long long)p->done, p->unit);
	if (n > 0 && (size_t)n < sizeof line && p->done > 0 && el > 0)
		n += snprintf(line + n, sizeof line - (size_t)n, "  %.3g/s",
		    rate);
	if (n > 0 && (size_t)n < sizeof line && p->total > 0 && rate > 0 &&
	    p->done < p->total) {
		fmt_time((double)(p->total - p->done) / rate, eta, sizeof eta);
		snprintf(line + n, sizeof line - (size_t)n, "  eta %s", eta);
	}
	len = (int)strlen(line);
	/* Pad over what a longer previous line left. */
	fprintf(p->fp, "\r%s%*s", line, p->width > len ? p->width - len : 0,
	    "");
	fflush(p->fp);
	if (len > p->width)
		p->width = len;
	p->last = t;
}

void
progress_update(struct progress *p, int64_t done)
{
	double t;

	if (!p->fp)
		return;
	p->done = done;
	t = now();
	if (t - p->last >= REDRAW || p->width == 0 ||
	    (p->total > 0 && done >= p->total))
		draw(p, t);
}

void
progress_clear(struct progress *p)
{
	if (!p->fp || p->width == 0)
		return;
	fprintf(p->fp, "\r%*s\r", p->width, "");
	fflush(p->fp);
	p->width = 0;
}

void
progress_end(struct progress *p)
{
	progress_clear(p);
	p->fp = NULL;
}
