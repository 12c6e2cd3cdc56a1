/*
 * verdict_test: lib/verdict.c gives rows their --min-snr gates (for all,
 * by name, an unknown name refused) and judges them: ok, low-snr, and a
 * tolerance failure before the SNR in the one-model form.
 */
#include "unit.h"
#include "verdict.h"

static void
mk(struct tensor *t, float a, float b)
{
	int64_t d[] = { 1, 2 };
	struct err e;

	memset(t, 0, sizeof *t);
	if (tensor_alloc(t, DT_FLOAT, 2, d, &e) == 0) {
		((float *)t->data)[0] = a;
		((float *)t->data)[1] = b;
	}
}

static void
test_verdict(void)
{
	const char *names[] = { "a", "b=c" };
	struct verdict_gate g[] = { { NULL, 10 }, { "b=c", 30 },
	    { "d", 1 } };
	struct verdict_row rows[2];
	struct tensor x, ref;
	struct err e = { "" };

	verdict_init(rows, 2, names, 1e-3, 1e-7);
	CHECK_EQ_INT(verdict_set_gates(rows, 2, g, 2, &e), 0);
	CHECK_NEAR(rows[0].min_snr, 10, 0);
	CHECK_NEAR(rows[1].min_snr, 30, 0);
	CHECK_EQ_INT(verdict_set_gates(rows, 2, g, 3, &e), -1);
	CHECK_EQ_STR(e.msg, "no output d");
	CHECK_EQ_INT(verdict_set_gates(rows, 2, g, 2, &e), 0);
	/* SNR 10 log10(25 / 0.01) = 34 dB on both; top-1 agrees. */
	mk(&x, 3, 4.1f);
	mk(&ref, 3, 4);
	for (int i = 0; i < 2; i++) {
		compare_add(&rows[i].cmp, &x, &ref, 0);
		compare_add_top1(&rows[i].cmp, &x, &ref, NULL, 0);
	}
	CHECK_EQ_INT(verdict_judge(rows, 2, 1, NAN), 0);
	CHECK_EQ_STR(rows[0].status, "ok");
	rows[1].min_snr = 40;
	CHECK_EQ_INT(verdict_judge(rows, 2, 1, 100), 1);
	CHECK_EQ_STR(rows[0].status, "ok");
	CHECK_EQ_STR(rows[1].status, "low-snr");
	/* One-model form: the tolerance fails first. */
	dataset_cmp_add(&rows[0].tol, &x, &ref);
	CHECK_EQ_INT(verdict_judge(rows, 1, 0, NAN), 1);
	CHECK_EQ_STR(rows[0].status, "fail");
	CHECK_NEAR(verdict_snr(&rows[0], 0), dataset_cmp_snr(&rows[0].tol),
	    0);
	tensor_release(&x);
	tensor_release(&ref);
}

/* #22: an SNR of -inf (NaN outputs, here) is never "ok", gate or not. */
static void
test_nonfinite(void)
{
	const char *names[] = { "y" };
	struct verdict_row row;
	struct tensor x, ref;

	verdict_init(&row, 1, names, 1e-3, 1e-7);
	mk(&x, NAN, NAN);
	mk(&ref, 1, 2);
	compare_add(&row.cmp, &x, &ref, 0);
	CHECK_EQ_INT(verdict_judge(&row, 1, 1, NAN), 1);
	CHECK_EQ_STR(row.status, "low-snr");
	tensor_release(&x);
	tensor_release(&ref);
}

/* Below 10 dB in the two-model form: the row onnx-mixprec is for. */
static void
test_mixprec_row(void)
{
	const char *names[] = { "a", "b", "c" };
	struct verdict_row rows[3];
	struct tensor x, ref, bad;

	verdict_init(rows, 3, names, 1e-3, 1e-7);
	mk(&ref, 3, 4);
	mk(&x, 3, 4.1f);	/* 34 dB */
	mk(&bad, 4, 3);		/* 10 log10(25 / 2) = 11 dB */
	compare_add(&rows[0].cmp, &x, &ref, 0);
	compare_add(&rows[1].cmp, &bad, &ref, 0);
	CHECK_EQ_INT(verdict_mixprec_row(rows, 2, 1), -1);
	tensor_release(&bad);
	mk(&bad, 1, 1);		/* 10 log10(25 / 13) = 2.8 dB */
	compare_add(&rows[2].cmp, &bad, &ref, 0);
	CHECK_EQ_INT(verdict_mixprec_row(rows, 3, 1), 2);
	CHECK_EQ_INT(verdict_mixprec_row(rows, 3, 0), -1);
	tensor_release(&bad);
	/* -inf (non-finite outputs) is no case for it */
	verdict_init(rows, 1, names, 1e-3, 1e-7);
	mk(&bad, NAN, 1);
	compare_add(&rows[0].cmp, &bad, &ref, 0);
	CHECK_EQ_INT(verdict_mixprec_row(rows, 1, 1), -1);
	tensor_release(&bad);
	tensor_release(&x);
	tensor_release(&ref);
}

UNIT_MAIN(test_verdict, test_nonfinite, test_mixprec_row)
