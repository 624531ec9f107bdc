/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arithmetic of the dllc scheduler, without anything of the kernel: the
 * module includes it, and so does test/dllc_core_test.c, which checks it on
 * the host against the same cases as the Go reference
 * (agents/internal/dllc, Pick and Fill) and against 128-bit arithmetic.
 *
 * A user-space includer defines u32, u64, bool and div_u64() first.
 */
#ifndef _IP_VS_DLLC_CORE_H
#define _IP_VS_DLLC_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/math64.h>
#endif

/* Loads are in milli-loads: 1000 is one fully busy server. */
#define DLLC_MIN_LOAD	100U		/* smallest load told apart (10 % busy) */
#define DLLC_FULL_LOAD	1000U		/* one fully busy server */
#define DLLC_MAX_LOAD	1000000U	/* larger loads count as this */

/* One destination as the choice sees it. */
struct dllc_cand {
	u64 conns;	/* C_i, the connection overhead: below 2^32 */
	u32 load;	/* L_i, already clamped by dllc_clamp() */
	u32 weight;	/* W_i, above 0 (others are never candidates) */
};

/* dllc_clamp - a measured load clamped into [DLLC_MIN_LOAD, DLLC_MAX_LOAD] */
static inline u32 dllc_clamp(u64 load)
{
	if (load < DLLC_MIN_LOAD)
		return DLLC_MIN_LOAD;
	if (load > DLLC_MAX_LOAD)
		return DLLC_MAX_LOAD;
	return (u32)load;
}

/*
 * dllc_mean - the load of a destination whose own load is missing or stale:
 * the rounded mean of the @n fresh (clamped) loads that add up to @sum, or
 * DLLC_FULL_LOAD when there is none, in which case every destination counts
 * the same and the choice is weighted least connection. Not for the hot
 * path: it divides.
 */
static inline u32 dllc_mean(u64 sum, u32 n)
{
	if (!n)
		return DLLC_FULL_LOAD;
	return dllc_clamp(div_u64(sum + n / 2, n));
}

/*
 * dllc_mul64x32 - @x * @w as a 96-bit number: returns the low 64 bits and
 * stores the high 32 in @hi. Both partial products fit in 64 bits.
 */
static inline u64 dllc_mul64x32(u64 x, u32 w, u64 *hi)
{
	u64 lo32 = (x & 0xffffffffULL) * w;
	u64 hi32 = (x >> 32) * w;
	u64 lo = lo32 + (hi32 << 32);

	*hi = (hi32 >> 32) + (lo < lo32);
	return lo;
}

/* dllc_cmp_scaled - the sign of @x * @wx - @y * @wy, exactly: -1, 0 or 1 */
static inline int dllc_cmp_scaled(u64 x, u32 wx, u64 y, u32 wy)
{
	u64 xhi, yhi;
	u64 xlo = dllc_mul64x32(x, wx, &xhi);
	u64 ylo = dllc_mul64x32(y, wy, &yhi);

	if (xhi != yhi)
		return xhi < yhi ? -1 : 1;
	if (xlo != ylo)
		return xlo < ylo ? -1 : 1;
	return 0;
}

/*
 * dllc_better - whether @a goes before @b: a smaller C × L / W, or an equal
 * one and a smaller L / W (an idle pool goes by load). C × L < 2^52, so the
 * products compared are below 2^84; equal on both counts is not better, so
 * the first of equals in list order stays chosen.
 */
static inline bool dllc_better(const struct dllc_cand *a,
			       const struct dllc_cand *b)
{
	int cmp = dllc_cmp_scaled(a->conns * a->load, b->weight,
				  b->conns * b->load, a->weight);

	if (cmp)
		return cmp < 0;
	return dllc_cmp_scaled(a->load, b->weight, b->load, a->weight) < 0;
}

#endif /* _IP_VS_DLLC_CORE_H */
