/* onnx-qparams: placeholder until its owner writes it. */
#include <stdio.h>

int
main(void)
{
	fprintf(stderr, "onnx-qparams: not yet implemented\n");
	return 1;
}
