/* onnx-calib: placeholder until its owner writes it. */
#include <stdio.h>

int
main(void)
{
	fprintf(stderr, "onnx-calib: not yet implemented\n");
	return 1;
}
