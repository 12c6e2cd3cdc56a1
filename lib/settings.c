/*
 * settings: see settings.h.
 */
#include <float.h>
#include <stddef.h>
#include <string.h>

#include "rangesel.h"
#include "settings.h"
#include "tensor.h"

#define OFF(f) offsetof(struct settings, f)

const struct setting_info settings_table[CG_N] = {
	[CG_ACT_TYPE] = { "activations", "type", SETTING_TYPE, 0, 0, 0,
	    OFF(act_type) },
	[CG_ACT_SYMMETRIC] = { "activations", "symmetric", SETTING_BOOL, 0, 1,
	    0, OFF(act_symmetric) },
	[CG_ACT_REDUCE_RANGE] = { "activations", "reduce_range", SETTING_BOOL,
	    0, 1, 0, OFF(act_reduce_range) },
	[CG_ACT_POW2] = { "activations", "power_of_two", SETTING_BOOL, 0, 1, 0,
	    OFF(act_pow2) },
	[CG_METHOD] = { "activations", "method", SETTING_METHOD, 0, 0, 0,
	    OFF(method) },
	[CG_MOVING_AVERAGE] = { "activations", "moving_average", SETTING_BOOL,
	    0, 1, 0, OFF(moving_average) },
	[CG_PERCENTILE] = { "activations", "percentile", SETTING_REAL, 0, 100,
	    1, OFF(percentile) },
	[CG_PER_SIDE] = { "activations", "percentile_per_side", SETTING_BOOL,
	    0, 1, 0, OFF(per_side) },
	[CG_ENTROPY_BINS] = { "activations", "entropy_bins", SETTING_INT, 16,
	    RANGESEL_ENTROPY_BINS_MAX, 0, OFF(entropy_bins) },
	[CG_W_TYPE] = { "weights", "type", SETTING_TYPE, 0, 0, 0,
	    OFF(w_type) },
	[CG_W_SYMMETRIC] = { "weights", "symmetric", SETTING_BOOL, 0, 1, 0,
	    OFF(w_symmetric) },
	[CG_W_REDUCE_RANGE] = { "weights", "reduce_range", SETTING_BOOL, 0, 1,
	    0, OFF(w_reduce_range) },
	[CG_W_POW2] = { "weights", "power_of_two", SETTING_BOOL, 0, 1, 0,
	    OFF(w_pow2) },
	[CG_PER_CHANNEL] = { "weights", "per_channel", SETTING_BOOL, 0, 1, 0,
	    OFF(per_channel) },
	[CG_BIAS_ADJUST] = { "bias", "weight_adjust", SETTING_BOOL, 0, 1, 0,
	    OFF(bias_adjust) },
	/* Half of float32's largest: a symmetric range is twice as wide. */
	[CG_MIN_REAL_RANGE] = { NULL, "min_real_range", SETTING_REAL, 0,
	    FLT_MAX / 2, 0, OFF(min_real_range) },
	[CG_DYNAMIC] = { NULL, "dynamic", SETTING_BOOL, 0, 1, 0,
	    OFF(dynamic) },
	[CG_BLOCK_SIZE] = { "weights", "block_size", SETTING_INT, 16, 256, 0,
	    OFF(block_size) },
	[CG_BLOCK_HQQ] = { "weights", "hqq", SETTING_BOOL, 0, 1, 0,
	    OFF(block_hqq) },
	[CG_FLOAT_OUTPUTS] = { "activations", "float_outputs", SETTING_BOOL,
	    0, 1, 0, OFF(float_outputs) },
	[CG_FLOAT_HEAD] = { NULL, "float_head", SETTING_REAL, 0, 100, 0,
	    OFF(float_head) },
	[CG_FLOAT_TAIL] = { NULL, "float_tail", SETTING_REAL, 0, 100, 0,
	    OFF(float_tail) },
};

#undef OFF

void
settings_default(struct settings *s)
{
	memset(s, 0, sizeof *s);
	s->act_type = DT_UINT8;
	s->method = RANGESEL_MSE;	/* measured: man page, DEFAULTS */
	s->percentile = RANGESEL_PERCENTILE_DEFAULT;
	s->entropy_bins = RANGESEL_ENTROPY_BINS_DEFAULT;
	s->w_type = DT_INT8;
	s->w_symmetric = 1;
	s->per_channel = 1;
	s->bias_adjust = 1;
	s->block_size = 32;
	/* unset: mse (blockq.c); hqq's float zeros are slow in ORT (man page) */
	s->block_hqq = 0;
}

static void *
field(struct settings *s, int id)
{
	return (char *)s + settings_table[id].off;
}

static const void *
cfield(const struct settings *s, int id)
{
	return (const char *)s + settings_table[id].off;
}

void
settings_apply(struct settings *d, const struct settings *s)
{
	for (int id = 0; id < CG_N; id++) {
		if (!(s->set & (1u << id)))
			continue;
		if (settings_table[id].kind == SETTING_REAL)
			*(double *)field(d, id) =
			    *(const double *)cfield(s, id);
		else
			*(int *)field(d, id) = *(const int *)cfield(s, id);
		d->pos[id] = s->pos[id];
		d->set |= 1u << id;
	}
}

void
settings_set_int(struct settings *s, int id, int v)
{
	*(int *)field(s, id) = v;
	s->set |= 1u << id;
}

void
settings_set_real(struct settings *s, int id, double v)
{
	*(double *)field(s, id) = v;
	s->set |= 1u << id;
}

int
settings_find(const char *section, const char *key)
{
	for (int id = 0; id < CG_N; id++) {
		const struct setting_info *si = &settings_table[id];

		if (!si->section != !section || strcmp(si->key, key) != 0)
			continue;
		if (!section || strcmp(si->section, section) == 0)
			return id;
	}
	return -1;
}

int
settings_in_bounds(int id, double v)
{
	const struct setting_info *si = &settings_table[id];

	if (si->lo_open ? !(v > si->lo) : !(v >= si->lo))
		return 0;
	return v <= si->hi;
}
