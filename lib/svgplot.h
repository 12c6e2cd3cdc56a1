/*
 * svgplot: a plain line-and-marker chart as a standalone SVG file, for
 * reports a person looks at in a browser (onnx-verify --plot: SNR along
 * the graph). Each point may carry a tooltip (an SVG <title>, shown on
 * hover). Values of +-INFINITY are drawn as triangles at the top or
 * bottom edge; NaN points are left out (and break a line).
 *
 * Text is XML-escaped; bytes that are not valid UTF-8 and control
 * characters become '?'. Nothing is kept: the caller owns all arrays.
 */
#ifndef ONNXQ_SVGPLOT_H
#define ONNXQ_SVGPLOT_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

enum svgplot_style {
	SVGPLOT_LINE,		/* a polyline through the points, small dots */
	SVGPLOT_DOTS,		/* circles */
	SVGPLOT_SQUARES,	/* squares */
};

struct svgplot_series {
	const char *label;		/* legend text */
	const char *color;		/* an SVG colour: "#1f77b4" */
	int style;			/* enum svgplot_style */
	size_t n;
	const double *x, *y;
	const char *const *tips;	/* n strings (or NULL) or NULL */
};

struct svgplot {
	const char *title, *xlabel, *ylabel;
	int width, height;		/* pixels; 0 means 960 x 440 */
	const struct svgplot_series *series;
	size_t nseries;
};

/* Write the chart to fp; -1 with a message on a write error. */
int svgplot_write(FILE *fp, const struct svgplot *p, struct err *e);

#endif
