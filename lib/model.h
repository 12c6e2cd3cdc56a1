/*
 * model: load and save ONNX models, and read/write the tensors they hold.
 *
 * The model is kept as the unpacked protobuf-c ModelProto and edited in
 * place, so fields and unknown fields the tools do not understand survive
 * a load/save round trip. protobuf-c's default allocator (malloc/free) is
 * used throughout: code that edits the proto allocates new messages,
 * strings and arrays with malloc/realloc, and model_free() frees it all.
 *
 * External data (TensorProto.data_location == EXTERNAL) is read relative to
 * the model's directory and refused when the location is absolute, has a
 * ".." component, is or passes through a symlink, resolves outside that
 * directory, or when offset/length fall outside the file or do not match
 * the tensor's size. A model read from stdin has no directory, so any
 * external data in it is an error.
 */
#ifndef ONNXQ_MODEL_H
#define ONNXQ_MODEL_H

#include <stddef.h>

#include "err.h"
#include "onnx/onnx.pb-c.h"
#include "tensor.h"

struct model {
	Onnx__ModelProto *proto;	/* owned; edit in place */
	char *path;			/* as given, "-" for stdin; for messages */
	char *dir;			/* external data base directory, NULL for stdin */
};

/* Load from a path, or stdin when path is "-". Errors name the path. */
struct model *model_load(const char *path, struct err *e);
/*
 * The same, and what the programs want beside the model: the SHA-256 of
 * the file's bytes in 64 hex digits (sha256 may be NULL) and, when bytes
 * is not NULL, the bytes themselves (malloc'd, the caller frees them; for
 * a copy of the model, or to load it again). Set only on success.
 */
struct model *model_load_hashed(const char *path, char sha256[65],
    void **bytes, size_t *len, struct err *e);
/* Load from memory; name is used in messages, dir may be NULL. */
struct model *model_load_mem(const void *buf, size_t len, const char *name,
    const char *dir, struct err *e);
/*
 * The same for bytes this process packed (model_pack()), trusted: not
 * checked first as outside bytes are (nesting, memory it would take), a
 * fifth of unpacking onnx-mixprec's evaluation models.
 */
struct model *model_unpack_own(const void *buf, size_t len,
    const char *name, const char *dir, struct err *e);
void model_free(struct model *m);

struct model_save_opts {
	/*
	 * Move tensors of at least external_min_bytes into an external data
	 * file beside the output (OUTPUT.data) when external_data is set;
	 * done automatically, whatever external_data says, when the model
	 * would otherwise exceed protobuf's 2 GiB limit.
	 */
	int external_data;
	size_t external_min_bytes;	/* 0 means 1024 */
	/* the packed size past which that happens: 0 means 2 GiB - 1 */
	size_t inline_max_bytes;
};

/*
 * Save to path (written to a temporary beside it and renamed, so a failure
 * never leaves a partial file), or to stdout when path is "-". opts may be
 * NULL. Tensors that were external in the input are inlined unless
 * external data is written.
 */
int model_save(struct model *m, const char *path,
    const struct model_save_opts *opts, struct err *e);
/* Serialise to a malloc'd buffer (no external data). */
int model_pack(const struct model *m, void **buf, size_t *len, struct err *e);

/* Opset version imported for a domain ("" or "ai.onnx" = default); 0 if none. */
int model_opset(const struct model *m, const char *domain);

/*
 * A new tensor ValueInfoProto (malloc'd; free it with
 * protobuf_c_message_free_unpacked): name, element type elem_type (a
 * TensorProto data type) and rank dims, a dimension below 0 left unknown;
 * NULL when out of memory.
 */
Onnx__ValueInfoProto *model_value_info_new(const char *name, int elem_type,
    int rank, const int64_t *dims);

/*
 * The declared element type of a value (DT_UNDEFINED when not a tensor or
 * not given) and its shape: *rank -1 when not given, else dims with -1
 * for a symbolic or unknown dimension. vi may be NULL.
 */
int model_value_type(const Onnx__ValueInfoProto *vi, int *rank,
    int64_t *dims);

/*
 * Decode a TensorProto (typed fields, raw_data, or external data relative
 * to m->dir; m may be NULL when no external data is allowed) into an empty
 * tensor. Checks that the data size matches the declared shape.
 */
int model_tensor_read(const struct model *m, const Onnx__TensorProto *tp,
    struct tensor *t, struct err *e);
/*
 * A tensor mapped from its external data rather than read (the
 * interpreter's weights: the page cache holds them, not the process),
 * or lent from the model's raw_data.
 */
struct model_map {
	void *base;			/* of the mapping; NULL when not */
	size_t len;
	int lent;			/* t->data is tp's raw_data */
};
#define MODEL_MAP_MIN_BYTES	65536	/* smaller ones are read */

/*
 * As model_tensor_read, but a tensor of external data of at least
 * MODEL_MAP_MIN_BYTES whose bytes are its elements as they lie in memory
 * (a little-endian host, not 4-bit, an offset aligned for its type) is
 * mapped copy-on-write: t->data points into the mapping, which *map
 * holds, and t is uncounted. One of raw_data that size, so laid out and
 * aligned, is lent: t->data is tp's raw_data, valid while tp is, and
 * must not be written. Such a t goes back through model_map_release,
 * never tensor_release. Otherwise the tensor is read as by
 * model_tensor_read (map->base NULL, map->lent 0).
 */
int model_tensor_map(const struct model *m, const Onnx__TensorProto *tp,
    struct tensor *t, struct model_map *map, struct err *e);
/* Unmap (or release, when read) and empty t. */
void model_map_release(struct model_map *map, struct tensor *t);
/*
 * Give the mapping's pages back (they are read again from the file, or
 * the page cache, when next touched): the resident size of a model run
 * then follows the weights in use, not all that were touched.
 */
void model_map_drop_pages(const struct model_map *map);

/*
 * Store t into tp as raw_data (little-endian; int4/uint4 packed two per
 * byte), replacing any typed fields, external data and dims. tp keeps its
 * name. Memory is malloc'd into tp.
 */
int model_tensor_write(Onnx__TensorProto *tp, const struct tensor *t,
    struct err *e);

#endif
