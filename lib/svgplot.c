/*
 * svgplot: see svgplot.h.
 */
#include <math.h>
#include <string.h>

#include "svgplot.h"

#define ML 64	/* margins: left, right, top, bottom */
#define MR 24
#define MT 40
#define MB 56

/* Length of the valid UTF-8 sequence at s, 0 if there is none. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

static void
put_text(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		size_t n = utf8_len(p);

		if (n == 0 || (*p < 0x20 && *p != '\t')) {
			fputc('?', fp);
			p++;
			continue;
		}
		switch (*p) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		default: fwrite(p, 1, n, fp); break;
		}
		p += n;
	}
}

/* A step of 1, 2 or 5 times a power of ten giving about `want` intervals. */
static double
nice_step(double range, int want)
{
	double raw = range / want, mag, f;

	if (!(raw > 0) || !isfinite(raw))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

struct frame {
	double x0, x1, y0, y1;		/* data range */
	double px0, px1, py0, py1;	/* plot area in pixels */
};

static double
px(const struct frame *f, double x)
{
	return f->px0 + (x - f->x0) / (f->x1 - f->x0) * (f->px1 - f->px0);
}

static double
py(const struct frame *f, double y)
{
	if (y == INFINITY)
		return f->py1;
	if (y == -INFINITY)
		return f->py0;
	return f->py0 - (y - f->y0) / (f->y1 - f->y0) * (f->py0 - f->py1);
}

static void
ranges(const struct svgplot *p, struct frame *f)
{
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY,
	    ymax = -INFINITY, st;

	for (size_t s = 0; s < p->nseries; s++)
		for (size_t i = 0; i < p->series[s].n; i++) {
			double x = p->series[s].x[i], y = p->series[s].y[i];

			if (!isfinite(x) || isnan(y))
				continue;
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
			if (isfinite(y)) {
				ymin = fmin(ymin, y);
				ymax = fmax(ymax, y);
			}
		}
	if (xmin > xmax)
		xmin = 0, xmax = 1;
	if (xmin == xmax)
		xmin -= 0.5, xmax += 0.5;
	if (ymin > ymax)
		ymin = 0, ymax = 1;
	if (ymin == ymax)
		ymin -= 1, ymax += 1;
	st = nice_step(ymax - ymin, 6);
	f->x0 = xmin;
	f->x1 = xmax;
	f->y0 = floor(ymin / st) * st;
	f->y1 = ceil(ymax / st) * st;
}

static void
axes(FILE *fp, const struct svgplot *p, const struct frame *f)
{
	double st = nice_step(f->y1 - f->y0, 6), xs;

	fprintf(fp, "<g font-family=\"sans-serif\" font-size=\"12\" "
	    "fill=\"#333\">\n");
	for (double y = f->y0; y <= f->y1 + st / 2; y += st) {
		double yy = py(f, y);

		fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		    "y2=\"%.1f\" stroke=\"#ddd\"/>\n", f->px0, yy, f->px1, yy);
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" "
		    "text-anchor=\"end\">%g</text>\n", f->px0 - 6, yy + 4,
		    fabs(y) < st / 2 ? 0 : y);
	}
	xs = nice_step(f->x1 - f->x0, 10);
	if (xs < 1 && f->x1 - f->x0 >= 1)
		xs = 1;
	for (double x = ceil(f->x0 / xs) * xs; x <= f->x1 + xs / 1e6; x += xs) {
		double xx = px(f, x);

		fprintf(fp, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		    "y2=\"%.1f\" stroke=\"#999\"/>\n", xx, f->py0, xx,
		    f->py0 + 4);
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" "
		    "text-anchor=\"middle\">%g</text>\n", xx, f->py0 + 18, x);
	}
	fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
	    "height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n", f->px0,
	    f->py1, f->px1 - f->px0, f->py0 - f->py1);
	fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
	    (f->px0 + f->px1) / 2, f->py0 + 40);
	put_text(fp, p->xlabel);
	fprintf(fp, "</text>\n<text transform=\"translate(16 %.1f) "
	    "rotate(-90)\" text-anchor=\"middle\">", (f->py0 + f->py1) / 2);
	put_text(fp, p->ylabel);
	fprintf(fp, "</text>\n<text x=\"%.1f\" y=\"22\" font-size=\"15\">",
	    f->px0);
	put_text(fp, p->title);
	fprintf(fp, "</text>\n</g>\n");
}

static void
marker(FILE *fp, const struct svgplot_series *s, double x, double y,
    double v, const char *tip)
{
	fprintf(fp, "<g>");
	if (isinf(v))
		/* Off the scale: a triangle pointing out of the plot. */
		fprintf(fp, "<path d=\"M%.1f %.1fl-4 %dh8z\" fill=\"%s\"/>",
		    x, y, v > 0 ? 7 : -7, s->color);
	else if (s->style == SVGPLOT_SQUARES)
		fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" "
		    "height=\"7\" fill=\"%s\"/>", x - 3.5, y - 3.5, s->color);
	else
		fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" "
		    "fill=\"%s\"/>", x, y,
		    s->style == SVGPLOT_LINE ? "2.5" : "3.5", s->color);
	if (tip) {
		fprintf(fp, "<title>");
		put_text(fp, tip);
		fprintf(fp, "</title>");
	}
	fprintf(fp, "</g>\n");
}

static void
series(FILE *fp, const struct svgplot_series *s, const struct frame *f)
{
	int open = 0;

	if (s->style == SVGPLOT_LINE) {
		for (size_t i = 0; i < s->n; i++) {
			if (!isfinite(s->x[i]) || isnan(s->y[i])) {
				if (open)
					fprintf(fp, "\"/>\n");
				open = 0;
				continue;
			}
			if (!open)
				fprintf(fp, "<polyline fill=\"none\" "
				    "stroke=\"%s\" stroke-width=\"1.5\" "
				    "points=\"", s->color);
			fprintf(fp, "%s%.1f,%.1f", open ? " " : "",
			    px(f, s->x[i]), py(f, s->y[i]));
			open = 1;
		}
		if (open)
			fprintf(fp, "\"/>\n");
	}
	for (size_t i = 0; i < s->n; i++)
		if (isfinite(s->x[i]) && !isnan(s->y[i]))
			marker(fp, s, px(f, s->x[i]), py(f, s->y[i]), s->y[i],
			    s->tips ? s->tips[i] : NULL);
}

static void
legend(FILE *fp, const struct svgplot *p, const struct frame *f)
{
	double x = f->px1, y = f->py1 - 18;

	/* Right-aligned above the plot, the title being on the left. */
	for (size_t s = 0; s < p->nseries; s++)
		x -= 40 + 7 * (double)strlen(p->series[s].label ?
		    p->series[s].label : "");
	fprintf(fp, "<g font-family=\"sans-serif\" font-size=\"12\">\n");
	for (size_t s = 0; s < p->nseries; s++) {
		const struct svgplot_series *se = &p->series[s];

		marker(fp, se, x, y, 0, NULL);
		fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\">", x + 8, y + 4);
		put_text(fp, se->label);
		fprintf(fp, "</text>\n");
		x += 40 + 7 * (double)strlen(se->label ? se->label : "");
	}
	fprintf(fp, "</g>\n");
}

int
svgplot_write(FILE *fp, const struct svgplot *p, struct err *e)
{
	int w = p->width > 0 ? p->width : 960;
	int h = p->height > 0 ? p->height : 440;
	struct frame f;

	ranges(p, &f);
	f.px0 = ML;
	f.px1 = w - MR;
	f.py0 = h - MB;
	f.py1 = MT;
	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\">\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	    w, h, w, h);
	axes(fp, p, &f);
	for (size_t s = 0; s < p->nseries; s++)
		series(fp, &p->series[s], &f);
	legend(fp, p, &f);
	fprintf(fp, "</svg>\n");
	if (ferror(fp))
		return err_set(e, "write error");
	return 0;
}
