/* fuzz_interp: fuzz_model with the model run too (see there). */
#define FUZZ_RUN 1
#include "fuzz_model.c"
