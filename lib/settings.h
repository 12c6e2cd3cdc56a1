/*
 * settings: the global settings of the quantization-parameter decisions
 * (onnx-qparams(1) options, the top level of an onnxq-config(5) recipe):
 * one struct, filled by the defaults, then the recipe, then the command
 * line. Each setting is one row of settings_table, which says its
 * recipe key, its kind and bounds and where it lives in the struct; the
 * recipe reader and the command line both go through the table, so a new
 * setting is an enum value, a field, a table row (and its option).
 *
 * Nothing here allocates or prints.
 */
#ifndef ONNXQ_SETTINGS_H
#define ONNXQ_SETTINGS_H

#include <stddef.h>

/* The settings; a bit 1u << CG_* in settings.set for each one given. */
enum config_global {
	CG_ACT_TYPE,
	CG_ACT_SYMMETRIC,
	CG_ACT_REDUCE_RANGE,
	CG_ACT_POW2,
	CG_METHOD,
	CG_MOVING_AVERAGE,
	CG_PERCENTILE,
	CG_PER_SIDE,
	CG_ENTROPY_BINS,
	CG_W_TYPE,
	CG_W_SYMMETRIC,
	CG_W_REDUCE_RANGE,
	CG_W_POW2,
	CG_PER_CHANNEL,
	CG_BIAS_ADJUST,
	CG_MIN_REAL_RANGE,
	CG_DYNAMIC,
	CG_BLOCK_SIZE,		/* weight-only (blockq.h) */
	CG_BLOCK_HQQ,
	CG_FLOAT_OUTPUTS,
	CG_FLOAT_HEAD,		/* percent of the compute left float */
	CG_FLOAT_TAIL,
	CG_N
};

enum setting_kind {
	SETTING_BOOL,		/* int 0 or 1 */
	SETTING_TYPE,		/* int: a quantized type (qparams.h) */
	SETTING_METHOD,		/* int: enum rangesel_method */
	SETTING_INT,		/* int, whole, in [lo, hi] */
	SETTING_REAL,		/* double in [lo, hi] (lo_open: (lo, hi]) */
};

struct setting_info {
	const char *section;	/* recipe: "activations", "weights",
				   "bias", or NULL for the top level */
	const char *key;	/* recipe key in that section */
	int kind;		/* enum setting_kind */
	double lo, hi;
	int lo_open;
	size_t off;		/* of its int or double in struct settings */
};

/* Indexed by enum config_global. */
extern const struct setting_info settings_table[CG_N];

/* Where a setting was in a recipe; line 0 when not from a file. */
struct settings_pos {
	int line, col;
};

struct settings {
	unsigned set;			/* 1u << CG_* for each one given */
	struct settings_pos pos[CG_N];
	int act_type, act_symmetric, act_reduce_range, act_pow2;
	int method, moving_average, per_side, entropy_bins;
	double percentile;
	int w_type, w_symmetric, w_reduce_range, w_pow2, per_channel;
	int bias_adjust;
	double min_real_range;
	int dynamic;			/* weights only; activations at run time */
	int block_size, block_hqq;
	int float_outputs;	/* leave tensors that only reach outputs */
	double float_head;	/* leave the first blocks holding this
				   percent of the multiply-accumulates */
	double float_tail;	/* the last blocks, at most this percent */
};

/* The defaults (onnx-qparams(1), DEFAULTS); nothing set. */
void settings_default(struct settings *s);
/* d takes every setting s gives (s->set), with its position. */
void settings_apply(struct settings *d, const struct settings *s);
/* Give setting id an int (not SETTING_REAL) or a double value. */
void settings_set_int(struct settings *s, int id, int v);
void settings_set_real(struct settings *s, int id, double v);
/* The setting named key in section (NULL: the top level), or -1. */
int settings_find(const char *section, const char *key);
/* Whether v is within setting id's bounds (SETTING_INT, SETTING_REAL). */
int settings_in_bounds(int id, double v);

#endif
