/* verdict: the status of each output. See verdict.h. */
#include <math.h>
#include <string.h>

#include "verdict.h"

void
verdict_init(struct verdict_row *rows, int n, const char *const *names,
    double rtol, double atol)
{
	for (int i = 0; i < n; i++) {
		rows[i].name = names[i];
		compare_init(&rows[i].cmp);
		dataset_cmp_init(&rows[i].tol, rtol, atol);
		rows[i].min_snr = -INFINITY;
		rows[i].status = NULL;
	}
}

int
verdict_set_gates(struct verdict_row *rows, int n,
    const struct verdict_gate *g, int ng, struct err *e)
{
	for (int i = 0; i < n; i++)
		rows[i].min_snr = -INFINITY;
	for (int k = 0; k < ng; k++) {
		int found = 0;

		for (int i = 0; i < n; i++)
			if (!g[k].name ||
			    strcmp(g[k].name, rows[i].name) == 0) {
				rows[i].min_snr = g[k].db;
				found = 1;
			}
		if (!found)
			return err_set(e, "no output %s", g[k].name);
	}
	return 0;
}

double
verdict_snr(const struct verdict_row *r, int two)
{
	return two ? compare_snr(&r->cmp) : dataset_cmp_snr(&r->tol);
}

int
verdict_judge(struct verdict_row *rows, int n, int two, double min_agreement)
{
	int worse = 0;

	for (int i = 0; i < n; i++) {
		struct verdict_row *r = &rows[i];
		double agree = compare_agreement(&r->cmp);

		r->status = "ok";
		if (two ? r->cmp.nmismatch > 0 : r->tol.nmismatch > 0)
			r->status = "mismatch";
		else if (!two && !dataset_cmp_ok(&r->tol))
			r->status = "fail";
		else if (verdict_snr(r, two) < r->min_snr ||
		    verdict_snr(r, two) == -INFINITY)
			r->status = "low-snr";
		else if (!isnan(min_agreement) && !isnan(agree) &&
		    agree < min_agreement)
			r->status = "low-agreement";
		if (strcmp(r->status, "ok") != 0)
			worse = 1;
	}
	return worse;
}

int
verdict_mixprec_row(const struct verdict_row *rows, int n, int two)
{
	for (int i = 0; two && i < n; i++) {
		double snr = verdict_snr(&rows[i], two);

		if (isfinite(snr) && snr < VERDICT_MIXPREC_SNR)
			return i;
	}
	return -1;
}
