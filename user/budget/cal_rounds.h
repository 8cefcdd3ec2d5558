/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * When the calibration (live/calibrate.c) has measured a unit cost well
 * enough: the rounds of one cost, each an extra time per event, go on until
 * the distribution-free confidence interval of their median (two order
 * statistics, binomial ranks, at least 90 % coverage) is within
 * CP_CAL_TOL_PCT of the median or CP_CAL_FLOOR_NS wide, or until
 * CP_CAL_MAX_ROUNDS. A quiet machine stops at CP_CAL_MIN_ROUNDS, the first
 * count with such an interval; a noisy one pays more rounds rather than a
 * worse figure. Pure.
 */
#ifndef CP_CAL_ROUNDS_H
#define CP_CAL_ROUNDS_H

#include <stdbool.h>
#include <linux/types.h>

#define CP_CAL_MIN_ROUNDS 5  /* the fewest with a 90 % interval: min..max covers 93.75 % */
#define CP_CAL_MAX_ROUNDS 11 /* the most: bounds the calibration's CPU time */
#define CP_CAL_TOL_PCT	  10 /* settled: the interval no wider than 10 % of the median */
/* ... or than 100 ns: finer than the budget's figures, and a 0.15 us system-call cost
 * varies by more than 10 % from round to round in a VM */
#define CP_CAL_FLOOR_NS 100

/* One cost's rounds so far. */
struct cp_cal_rounds {
	__u64 extra[CP_CAL_MAX_ROUNDS]; /* extra ns per event, in the order measured */
	int n;
};

/* Adds a round's extra time per event to @r; ignored once @r is full. */
void cp_cal_rounds__add(struct cp_cal_rounds *r, __u64 extra_ns);

/*
 * The median's confidence interval into @lo and @hi: the order statistics
 * of ranks k and n + 1 - k, k the largest with 2 P(Bin(n, 1/2) < k) <= 10 %.
 * False (@lo, @hi untouched) under CP_CAL_MIN_ROUNDS rounds.
 */
bool cp_cal_rounds__interval(const struct cp_cal_rounds *r, __u64 *lo, __u64 *hi);

/* Whether @r needs another round: not settled and not full. */
bool cp_cal_rounds__more(const struct cp_cal_rounds *r);

/* Whether any of the @nr costs of @r needs another round. */
bool cp_cal_rounds__any_more(const struct cp_cal_rounds *r, int nr);

/* The median of @r's rounds (of the two middle ones with an even count), at least 1. */
__u64 cp_cal_rounds__median(const struct cp_cal_rounds *r);

#endif /* CP_CAL_ROUNDS_H */
