// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* When a calibrated unit cost is settled (see cal_rounds.h). */
#include <string.h>

#include "budget/cal_rounds.h"

void cp_cal_rounds__add(struct cp_cal_rounds *r, __u64 extra_ns)
{
	if (r->n < CP_CAL_MAX_ROUNDS)
		r->extra[r->n++] = extra_ns;
}

/* @r's rounds sorted into @out (CP_CAL_MAX_ROUNDS long); their count. */
static int sorted(const struct cp_cal_rounds *r, __u64 *out)
{
	memcpy(out, r->extra, (size_t)r->n * sizeof(out[0]));
	for (int i = 1; i < r->n; i++) /* at most 15: insertion sort */
		for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
			__u64 t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return r->n;
}

/*
 * The largest rank k (1-based) with 2 P(Bin(n, 1/2) <= k - 1) <= 10 %, that
 * is sum(C(n, i), i < k) * 20 <= 2^n; 0 when even k = 1 misses it.
 */
static int interval_rank(int n)
{
	__u64 c = 1, sum = 0; /* C(n, i), and the sum below i */
	int k = 0;

	for (int i = 0; i < n; i++) {
		sum += c;
		if (sum * 20 > 1ull << n)
			break;
		k = i + 1;
		c = c * (__u64)(n - i) / (__u64)(i + 1);
	}
	return k;
}

bool cp_cal_rounds__interval(const struct cp_cal_rounds *r, __u64 *lo, __u64 *hi)
{
	__u64 v[CP_CAL_MAX_ROUNDS];
	int n = sorted(r, v), k = interval_rank(n);

	if (n < CP_CAL_MIN_ROUNDS || !k)
		return false;
	*lo = v[k - 1];
	*hi = v[n - k];
	return true;
}

bool cp_cal_rounds__more(const struct cp_cal_rounds *r)
{
	__u64 lo, hi, tol;

	if (r->n >= CP_CAL_MAX_ROUNDS)
		return false;
	if (!cp_cal_rounds__interval(r, &lo, &hi))
		return true;
	tol = cp_cal_rounds__median(r) * CP_CAL_TOL_PCT / 100;
	return hi - lo > (tol > CP_CAL_FLOOR_NS ? tol : CP_CAL_FLOOR_NS);
}

bool cp_cal_rounds__any_more(const struct cp_cal_rounds *r, int nr)
{
	for (int i = 0; i < nr; i++)
		if (cp_cal_rounds__more(&r[i]))
			return true;
	return false;
}

__u64 cp_cal_rounds__median(const struct cp_cal_rounds *r)
{
	__u64 v[CP_CAL_MAX_ROUNDS], m;
	int n = sorted(r, v);

	if (!n)
		return 1;
	m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return m ? m : 1;
}
