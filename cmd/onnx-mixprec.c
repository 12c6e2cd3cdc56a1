/* onnx-mixprec: placeholder until its owner writes it. */
#include <stdio.h>

int
main(void)
{
	fprintf(stderr, "onnx-mixprec: not yet implemented\n");
	return 1;
}
