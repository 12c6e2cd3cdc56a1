/* opinfo: see opinfo.h. */
#include <string.h>

#include "attr.h"
#include "opinfo.h"

#define SLOT(i) (1U << (i))

static const struct opinfo table[] = {
	/* op, weight, bias, act, axis, all weight slots */
	{ "Conv", 1, 2, 0, 0, SLOT(1) },
	{ "ConvTranspose", 1, 2, 0, 1, SLOT(1) },
	{ "Gemm", 1, 2, 0, -1, SLOT(1) },
	{ "MatMul", 1, -1, 0, -1, SLOT(1) },
	{ "LayerNormalization", 1, -1, 0, -1, SLOT(1) | SLOT(2) },
	{ "InstanceNormalization", 1, -1, 0, -1, SLOT(1) | SLOT(2) },
	{ "BatchNormalization", 1, -1, 0, -1,
	    SLOT(1) | SLOT(2) | SLOT(3) | SLOT(4) },
};

/*
 * Ops with parameter inputs: the slots that are data (bit per slot); the
 * other slots are parameters. Integer-only parameters (Slice's starts,
 * Reshape's shape, ...) are listed too, so the table says all of it.
 */
static const struct {
	const char *op_type;
	unsigned data;
} data_slots[] = {
	{ "Resize", SLOT(0) },		/* roi, scales, sizes */
	{ "Upsample", SLOT(0) },	/* scales */
	{ "Clip", SLOT(0) },		/* min, max */
	{ "Pad", SLOT(0) },		/* pads, constant_value, axes */
	{ "Slice", SLOT(0) },		/* starts, ends, axes, steps */
	{ "Reshape", SLOT(0) },		/* shape */
	{ "Expand", SLOT(0) },		/* shape */
	{ "Tile", SLOT(0) },		/* repeats */
	{ "Squeeze", SLOT(0) },		/* axes */
	{ "Unsqueeze", SLOT(0) },	/* axes */
	{ "Split", SLOT(0) },		/* split */
	{ "TopK", SLOT(0) },		/* k */
	{ "CumSum", SLOT(0) },		/* axis */
	{ "Gather", SLOT(0) },		/* indices */
	{ "GatherElements", SLOT(0) },	/* indices */
	{ "GatherND", SLOT(0) },	/* indices */
	{ "ScatterElements", SLOT(0) | SLOT(2) },	/* indices */
	{ "ScatterND", SLOT(0) | SLOT(2) },		/* indices */
	{ "Dropout", SLOT(0) },		/* ratio, training_mode */
	{ "RoiAlign", SLOT(0) },	/* rois, batch_indices */
	{ "NonMaxSuppression", SLOT(0) | SLOT(1) },	/* thresholds */
	{ "Trilu", SLOT(0) },		/* k */
	{ "ReduceMean", SLOT(0) },	/* axes (opset 18) */
	{ "ReduceSum", SLOT(0) },
	{ "ReduceMax", SLOT(0) },
	{ "ReduceMin", SLOT(0) },
	{ "ReduceProd", SLOT(0) },
	{ "ReduceL1", SLOT(0) },
	{ "ReduceL2", SLOT(0) },
	{ "ReduceLogSum", SLOT(0) },
	{ "ReduceLogSumExp", SLOT(0) },
	{ "ReduceSumSquare", SLOT(0) },
	{ "ConstantOfShape", 0 },	/* shape */
	{ "Range", 0 },			/* start, limit, delta */
	{ "QuantizeLinear", SLOT(0) },	/* scale, zero point */
	{ "DequantizeLinear", SLOT(0) },
};

const struct opinfo *
opinfo_find(const char *domain, const char *op_type)
{
	if (!op_type || (domain && *domain && strcmp(domain, "ai.onnx") != 0))
		return NULL;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].op_type, op_type) == 0)
			return &table[i];
	return NULL;
}

enum opinfo_role
opinfo_role(const char *domain, const char *op_type, int slot)
{
	const struct opinfo *oi = opinfo_find(domain, op_type);

	if (!oi || slot < 0 || slot >= 32)
		return OPINFO_OTHER;
	if (slot == oi->bias_slot)
		return OPINFO_BIAS;
	if (oi->weight_mask & SLOT(slot))
		return OPINFO_WEIGHT;
	return OPINFO_OTHER;
}

int
opinfo_is_data(const char *domain, const char *op_type, int slot)
{
	if (!op_type || (domain && *domain && strcmp(domain, "ai.onnx") != 0))
		return 1;
	for (size_t i = 0; i < sizeof data_slots / sizeof data_slots[0]; i++)
		if (strcmp(data_slots[i].op_type, op_type) == 0)
			return slot >= 0 && slot < 32 &&
			    (data_slots[i].data & SLOT(slot)) != 0;
	return 1;
}

int
opinfo_axis(const Onnx__NodeProto *n, int slot, int rank)
{
	const struct opinfo *oi = opinfo_find(n->domain, n->op_type);

	switch (opinfo_role(n->domain, n->op_type, slot)) {
	case OPINFO_BIAS:
		/* Conv's B is 1-D; Gemm's C broadcasts: its last axis is N */
		return rank >= 1 ? rank - 1 : -1;
	case OPINFO_WEIGHT:
		break;
	default:
		return -1;
	}
	if (strcmp(oi->op_type, "Gemm") == 0)
		return rank == 2 ? (attr_int(n, "transB", 0) ? 0 : 1) : -1;
	/* a 1-D B has no output channel: MatMul drops that axis */
	if (strcmp(oi->op_type, "MatMul") == 0)
		return rank >= 2 ? rank - 1 : -1;
	if (oi->weight_axis >= 0)
		return rank > oi->weight_axis ? oi->weight_axis : -1;
	/* normalization parameters: per channel along their only axis */
	return rank == 1 ? 0 : -1;
}

int
opinfo_bias_pair(const Onnx__NodeProto *n, int slot, int *act_slot,
    int *weight_slot)
{
	const struct opinfo *oi = opinfo_find(n->domain, n->op_type);

	if (!oi || oi->bias_slot < 0 || slot != oi->bias_slot)
		return -1;
	*act_slot = oi->act_slot;
	*weight_slot = oi->weight_slot;
	return 0;
}
