/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The export memory's allocator (dataplane/xarena.h) against a model that
 * owns every byte: regions taken at random sizes and given back oldest
 * first, in random runs. A take must succeed exactly when the bytes the
 * policy picks (and the end it skips to get back to the start) are free,
 * land where the policy says, aligned and inside the memory, and never on
 * a byte another region holds; the allocator's count of bytes out must
 * equal the bytes the model sees held. Now and then the newest region is
 * given back at once (a submission that failed).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../dataplane/xarena.h"

#define MAXLIVE 4096

struct region {
	uint64_t end;
	uint32_t from, len; /* the region's bytes */
	uint32_t gap;       /* bytes skipped at the memory's end with it */
};

struct model {
	uint32_t *owner; /* 0: free, else the region's id */
	struct region fifo[MAXLIVE];
	unsigned first, n;
	uint32_t head; /* where the allocator's next region may start */
	uint64_t cap;
	uint64_t held;
};

static uint32_t
align64(uint32_t x)
{
	return x == 0 ? 64 : (x + 63u) & ~63u;
}

static void
mark(struct model *m, uint32_t from, uint32_t len, uint32_t id)
{
	for (uint32_t i = from; i < from + len; i++)
		m->owner[i] = id;
}

static int
all_free(const struct model *m, uint32_t from, uint32_t len)
{
	for (uint32_t i = from; i < from + len; i++)
		if (m->owner[i] != 0)
			return 0;
	return 1;
}

static void
give_back(struct gcap_xarena *a, struct model *m)
{
	struct region *r = &m->fifo[m->first];

	ck_assert_uint_gt(m->n, 0);
	mark(m, r->from, r->len, 0);
	if (r->gap != 0)
		mark(m, (uint32_t)m->cap - r->gap, r->gap, 0);
	m->held -= r->len + r->gap;
	gcap_xarena_release(a, r->end);
	m->first = (m->first + 1) % MAXLIVE;
	if (--m->n == 0)
		m->head = 0; /* none out: the next starts at the beginning */
}

/* One take of need bytes, checked against the model. */
static void
take(struct gcap_xarena *a, struct model *m, uint32_t need, uint32_t id)
{
	uint32_t cap = (uint32_t)a->cap, n = align64(need), at, from;
	int expect;
	uint64_t end = 0;
	uint8_t *p = gcap_xarena_take(a, need, &end);

	if (n > cap) {
		ck_assert_ptr_null(p);
		return;
	}
	at = m->head + n > cap ? 0 : m->head; /* the policy */
	from = at == 0 && m->head + n > cap ? m->head : at;
	expect = all_free(m, at, n) && (from == at || all_free(m, from, cap - from)) &&
		 m->n < MAXLIVE;
	ck_assert_msg((p != NULL) == expect,
		      "take %u at %u (head %u, %u bytes held): got %s, expected %s", need,
		      at, m->head, (unsigned)m->held, p ? "a region" : "none",
		      expect ? "a region" : "none");
	if (p == NULL)
		return;
	ck_assert_ptr_eq(p, a->base + at);
	ck_assert_uint_eq((uintptr_t)p % GCAP_XARENA_ALIGN, 0);
	{
		struct region *r = &m->fifo[(m->first + m->n) % MAXLIVE];

		r->end = end;
		r->from = at;
		r->len = n;
		r->gap = 0;
		if (from != at) { /* the skipped end goes with this region */
			mark(m, from, cap - from, id);
			r->gap = cap - from;
		}
		mark(m, at, n, id);
		m->held += r->len + r->gap;
		m->n++;
	}
	m->head = at + n == cap ? 0 : at + n;
	ck_assert_uint_eq(gcap_xarena_used(a), m->held);
}

/* Give back the newest region at once (a submission that failed). */
static void
untake_newest(struct gcap_xarena *a, struct model *m)
{
	struct region *r = &m->fifo[(m->first + m->n - 1) % MAXLIVE];

	mark(m, r->from, r->len, 0);
	m->held -= r->len;
	gcap_xarena_untake(a, r->end, r->len);
	m->head = r->from;
	if (--m->n == 0)
		m->head = 0;
	ck_assert_uint_eq(gcap_xarena_used(a), m->held);
}

static void
run_model(uint32_t cap_asked, uint32_t maxneed, unsigned steps, unsigned seed)
{
	struct gcap_xarena a;
	struct model *m = calloc(1, sizeof(*m));
	/* (C11: the size a multiple of the alignment) */
	uint8_t *mem = aligned_alloc(64, (cap_asked + 127u) & ~63u);
	uint32_t id = 0;

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(mem);
	gcap_xarena_init(&a, mem, cap_asked);
	ck_assert_uint_eq(a.cap, cap_asked - cap_asked % 64);
	m->cap = a.cap;
	m->owner = calloc(a.cap, sizeof(*m->owner));
	ck_assert_ptr_nonnull(m->owner);
	srand(seed);
	for (unsigned s = 0; s < steps; s++) {
		int r = rand() % 8;

		if (r < 5 || m->n == 0) {
			/* mostly small, sometimes up to maxneed */
			uint32_t need = rand() % 4 == 0 ?
						(uint32_t)rand() % (maxneed + 1) :
						(uint32_t)rand() % 300;

			take(&a, m, need, ++id);
		} else if (r == 5 && m->fifo[(m->first + m->n - 1) % MAXLIVE].gap == 0) {
			untake_newest(&a, m);
		} else {
			unsigned k = 1 + (unsigned)rand() % (m->n < 4 ? m->n : 4);

			while (k-- > 0)
				give_back(&a, m);
			ck_assert_uint_eq(gcap_xarena_used(&a), m->held);
		}
	}
	while (m->n > 0)
		give_back(&a, m);
	ck_assert_uint_eq(gcap_xarena_used(&a), 0);
	/* empty again: the whole memory is one region, wherever the head is */
	take(&a, m, (uint32_t)a.cap, ++id);
	ck_assert_uint_eq(m->n, 1);
	free(m->owner);
	free(m);
	free(mem);
}

START_TEST(model_small)
{
	run_model(64 * 37 + 10, 64 * 12, 200000, 1);
}
END_TEST

START_TEST(model_large_batches)
{
	/* batches near the memory's size: skips and refusals are common */
	run_model(64 * 64, 64 * 64, 100000, 2);
}
END_TEST

START_TEST(model_many_small)
{
	run_model(1u << 20, 4096, 200000, 3);
}
END_TEST

START_TEST(edges)
{
	static uint8_t mem[1024] __attribute__((aligned(64)));
	struct gcap_xarena a;
	uint64_t e1, e2, e3;

	gcap_xarena_init(&a, mem, sizeof(mem));
	ck_assert_ptr_null(gcap_xarena_take(&a, 1025, &e1)); /* larger than all */
	ck_assert_ptr_eq(gcap_xarena_take(&a, 0, &e1), mem); /* 0 takes a line */
	ck_assert_uint_eq(e1, 64);
	ck_assert_ptr_eq(gcap_xarena_take(&a, 830, &e2), mem + 64);
	ck_assert_uint_eq(e2, 64 + 832);
	/* 128 left at the end; 129 needs 192: back to the start, held */
	ck_assert_ptr_null(gcap_xarena_take(&a, 129, &e3));
	gcap_xarena_release(&a, e1);
	/* still none: the first 64 bytes are free, the next are not */
	ck_assert_ptr_null(gcap_xarena_take(&a, 129, &e3));
	ck_assert_ptr_eq(gcap_xarena_take(&a, 128, &e3), mem + 896);
	ck_assert_uint_eq(e3, 1024);
	gcap_xarena_release(&a, e2);
	gcap_xarena_release(&a, e3);
	ck_assert_uint_eq(gcap_xarena_used(&a), 0);
	/* the head is at the end: a region goes back to the start */
	ck_assert_ptr_eq(gcap_xarena_take(&a, 512, &e1), mem);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("xarena");
	TCase *tc = tcase_create("model");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, edges);
	tcase_add_test(tc, model_small);
	tcase_add_test(tc, model_large_batches);
	tcase_add_test(tc, model_many_small);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
