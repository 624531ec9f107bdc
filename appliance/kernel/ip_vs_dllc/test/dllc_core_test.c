// SPDX-License-Identifier: GPL-2.0
/*
 * The selection arithmetic of ip_vs_dllc (../dllc_core.h), on the host:
 * the cases of the Go reference (agents/internal/dllc: TestPickWorkedExample,
 * TestPick, TestCompareScaledAgainstFloat, TestFill) and random comparisons
 * against 128-bit arithmetic. Run with `make test`; the last line is
 * "N passed, N failed".
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define u32 uint32_t
#define u64 uint64_t

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

#include "../dllc_core.h"

#define U32_MAX_ ((u32)~0U)
#define U64_MAX_ ((u64)~0ULL)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int passed, failed;

static void check(bool ok, const char *name)
{
	if (ok) {
		passed++;
		printf("ok   %s\n", name);
	} else {
		failed++;
		printf("FAIL %s\n", name);
	}
}

/* A destination as the module's schedule loop sees it. */
struct dest {
	u64 conns;
	u32 load;	/* before clamping */
	int weight;
	bool overloaded;
};

/*
 * pick - the module's loop over a service's destinations: skip overloaded
 * ones and weights <= 0, keep the first best. -1 when none is available.
 */
static int pick(const struct dest *d, int n)
{
	struct dllc_cand c, best_c = { 0 };
	int i, best = -1;

	for (i = 0; i < n; i++) {
		if (d[i].overloaded || d[i].weight <= 0)
			continue;
		c.conns = d[i].conns;
		c.load = dllc_clamp(d[i].load);
		c.weight = (u32)d[i].weight;
		if (best < 0 || dllc_better(&c, &best_c)) {
			best = i;
			best_c = c;
		}
	}
	return best;
}

static int sign128(unsigned __int128 a, unsigned __int128 b)
{
	return a < b ? -1 : a > b;
}

/* better() the slow, obvious way: 128-bit cross-multiplication. */
static bool better128(const struct dllc_cand *a, const struct dllc_cand *b)
{
	unsigned __int128 ka = (unsigned __int128)a->conns * a->load;
	unsigned __int128 kb = (unsigned __int128)b->conns * b->load;
	int cmp = sign128(ka * b->weight, kb * a->weight);

	if (cmp)
		return cmp < 0;
	return sign128((unsigned __int128)a->load * b->weight,
		       (unsigned __int128)b->load * a->weight) < 0;
}

/* The study's example: loads 50/30/70 %, connections 10/8/12: B. */
static void test_worked_example(void)
{
	static const u32 loads[] = { 500, 300, 700 };
	static const u64 conns[] = { 10, 8, 12 };
	struct dest d[3];
	int i;

	for (i = 0; i < 3; i++)
		d[i] = (struct dest){ conns[i], loads[i], 1, false };
	check(pick(d, 3) == 1, "worked example: plain connection counts pick B");
	for (i = 0; i < 3; i++)
		d[i].conns = conns[i] << 8;
	check(pick(d, 3) == 1, "worked example: active x 256 picks B");
	for (i = 0; i < 3; i++)
		d[i].conns = (conns[i] << 8) + conns[i];
	check(pick(d, 3) == 1, "worked example: active x 256 + total (6.12.107) picks B");
	/* 4 x 500 = 2000 < 8 x 300 = 2400 < 12 x 700: now A. */
	d[0].conns = 4 * 257;
	check(pick(d, 3) == 0, "worked example with 4 connections on A picks A");
	d[0].overloaded = true;
	check(pick(d, 3) == 1, "an overloaded A is skipped: B");
	d[1].weight = 0;
	check(pick(d, 3) == 2, "and a drained B too: C");
	d[2].weight = -1;
	check(pick(d, 3) == -1, "nothing available: -1");
}

/* A destination that is not overloaded: connections, load, weight. */
#define D(c, l, w) { .conns = (c), .load = (l), .weight = (w) }

/* agents/internal/dllc TestPick, case by case. */
static void test_pick_table(void)
{
	const struct dest drained[] = { D(1, 100, 0), D(0, 100, 0) };
	const struct dest drained_idle[] = { D(9, 900, 1), D(0, 100, 0) };
	const struct dest biased[] = { D(4, 500, 3), D(2, 500, 1) };
	const struct dest idle[] = { D(0, 700, 1), D(0, 300, 1), D(0, 500, 1) };
	const struct dest idle_w[] = { D(0, 300, 1), D(0, 500, 2) };
	const struct dest tie[] = { D(2, 300, 1), D(2, 300, 1) };
	const struct dest low[] = { D(3, 0, 1), D(3, 99, 1), D(2, 100, 1) };
	const struct dest high[] = { D(1, U32_MAX_, 1), D(1, 1000001, 1),
				     D(1, 999999, 1) };

	check(pick(NULL, 0) == -1, "pick: none");
	check(pick(drained, 2) == -1, "pick: all drained");
	check(pick(drained_idle, 2) == 0, "pick: drained skipped though idle");
	check(pick(biased, 2) == 0, "pick: weight biases");
	check(pick(idle, 3) == 1, "pick: idle pool goes by load");
	check(pick(idle_w, 2) == 1, "pick: idle pool, load per weight");
	check(pick(tie, 2) == 0, "pick: full tie goes to the first");
	check(pick(low, 3) == 2, "pick: loads below 100 count as 100");
	check(pick(high, 3) == 2, "pick: loads above 1000000 count as 1000000, tie to the first");
}

/* The largest operands: C < 2^40, L = max, W near 2^32 (Go's bound case). */
static void test_bounds(void)
{
	struct dllc_cand a = { 1ULL << 40, DLLC_MAX_LOAD, U32_MAX_ };
	struct dllc_cand b = { 1ULL << 40, DLLC_MAX_LOAD, U32_MAX_ - 1 };
	struct dllc_cand c = { 0xffffffffULL, DLLC_MAX_LOAD, 1 };
	struct dllc_cand d = { 0xfffffffeULL, DLLC_MAX_LOAD, 1 };

	check(dllc_better(&a, &b) && !dllc_better(&b, &a),
	      "bounds: the larger weight wins at C = 2^40, L = max");
	check(dllc_better(&d, &c) && !dllc_better(&c, &d),
	      "bounds: C near 2^32 at L = max, weight 1");
	check(!dllc_better(&a, &a), "bounds: equal is not better");
}

static void test_cmp_scaled_grid(void)
{
	static const u64 xs[] = { 0, 1, 255, 1ULL << 31, (1ULL << 40) + 7,
				  U64_MAX_ / 3, U64_MAX_ };
	static const u32 ws[] = { 0, 1, 3, 1U << 16, U32_MAX_ };
	unsigned int i, j, k, l, bad = 0;

	for (i = 0; i < ARRAY_LEN(xs); i++)
		for (j = 0; j < ARRAY_LEN(ws); j++)
			for (k = 0; k < ARRAY_LEN(xs); k++)
				for (l = 0; l < ARRAY_LEN(ws); l++) {
					unsigned __int128 a = (unsigned __int128)xs[i] * ws[j];
					unsigned __int128 b = (unsigned __int128)xs[k] * ws[l];

					if (dllc_cmp_scaled(xs[i], ws[j], xs[k], ws[l]) !=
					    sign128(a, b))
						bad++;
				}
	check(!bad, "cmp_scaled agrees with 128 bits on the Go test's grid");
}

static u64 rnd(void)
{
	static u64 s = 0x9e3779b97f4a7c15ULL;

	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

/* Random candidates, half of them from small ranges to make ties. */
static void test_better_random(void)
{
	unsigned int i, bad = 0;

	for (i = 0; i < 2000000; i++) {
		bool small = i & 1;
		struct dllc_cand a, b;

		a.conns = small ? rnd() % 8 : rnd() % (1ULL << 32);
		b.conns = small ? rnd() % 8 : rnd() % (1ULL << 32);
		a.load = dllc_clamp(small ? 100 * (rnd() % 4) : rnd() % 2000000);
		b.load = dllc_clamp(small ? 100 * (rnd() % 4) : rnd() % 2000000);
		a.weight = small ? 1 + rnd() % 4 : 1 + rnd() % U32_MAX_;
		b.weight = small ? 1 + rnd() % 4 : 1 + rnd() % U32_MAX_;
		if (dllc_better(&a, &b) != better128(&a, &b))
			bad++;
	}
	check(!bad, "better agrees with 128 bits on 2000000 random pairs");
}

static void test_clamp_and_mean(void)
{
	check(dllc_clamp(0) == 100 && dllc_clamp(99) == 100 &&
	      dllc_clamp(100) == 100 && dllc_clamp(700) == 700 &&
	      dllc_clamp(1000000) == 1000000 && dllc_clamp(1000001) == 1000000 &&
	      dllc_clamp(U64_MAX_) == 1000000, "clamp into [100, 1000000]");
	/* TestFill: 500, 300 and 90 (counts as 100) known: 300. */
	check(dllc_mean(500 + 300 + dllc_clamp(90), 3) == 300,
	      "mean of the fresh loads (Fill)");
	check(dllc_mean(0, 0) == DLLC_FULL_LOAD, "mean of nothing is 1000 (Fill)");
	check(dllc_mean(500 + 301, 2) == 401, "mean rounds half up (Fill)");
}

int main(void)
{
	test_worked_example();
	test_pick_table();
	test_bounds();
	test_cmp_scaled_grid();
	test_better_random();
	test_clamp_and_mean();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
