/* onnx-verify: placeholder until its owner writes it. */
#include <stdio.h>

int
main(void)
{
	fprintf(stderr, "onnx-verify: not yet implemented\n");
	return 1;
}
