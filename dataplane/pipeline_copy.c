/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file path's copier: a batch's records, one span of the input's
 * mapping, copied into the slot's staging area (pinned memory the GPU
 * reads) by helper threads, each a slice of it, while the reader describes
 * the next batch. One thread copies a page-cache span at about 5 GB/s;
 * four at about 17 and eight at about 26 (H200 host, bench/file_pin.py),
 * so the copy that bounded the gpu backend's -r is spread, and the
 * reader's own work (finding the records) is what remains.
 *
 * One poster (the reader), one job at a time: post, then wait before the
 * next post. Helpers spin a short while after a job, then sleep on a bell
 * (pipeline_internal.h), so an idle copier costs nothing and a busy one no
 * wake-up per batch. Without helpers the poster copies in post.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rte_pause.h>

#include "gpucap/gcap_thread.h"
#include "pipeline_internal.h"

/* pauses a helper spins for the next job before it sleeps: about the
 * time the reader takes to describe a batch */
#define COPY_SPINS 4096u
/* longest sleep of an idle helper between looks (a missed ring costs at
 * most this) */
#define COPY_SLEEP_NS 20000000u
/* slices are multiples of this from the span's start (whole pages of the
 * staging when the span's copy starts on one) */
#define COPY_ALIGN 4096u

struct pl_copier {
	unsigned n;
	pthread_t *th;
	struct copier_helper *hs;
	/* the job, written by the poster before gen moves on */
	uint8_t *dst;
	const uint8_t *src;
	size_t len;
	atomic_uint gen;  /* jobs posted */
	atomic_uint left; /* the job's slices not yet copied */
	atomic_bool quit;
	struct pl_bell go;   /* a job or the quit, to the helpers */
	struct pl_bell done; /* the job's last slice, to the poster */
};

struct copier_helper {
	struct pl_copier *c;
	unsigned k;
};

/* Slice k of the job: [*off, *off + return). */
static size_t
slice(const struct pl_copier *c, unsigned k, size_t *off)
{
	size_t per =
		((c->len + c->n - 1) / c->n + COPY_ALIGN - 1) & ~(size_t)(COPY_ALIGN - 1);

	*off = per * k;
	if (*off >= c->len)
		return 0;
	return c->len - *off < per ? c->len - *off : per;
}

/* Wait for the job after *seen (its gen): true, *seen that job; false
 * once quit. */
static bool
next_job(struct pl_copier *c, unsigned *seen)
{
	unsigned spins = 0, g;

	for (;;) {
		if (atomic_load(&c->quit))
			return false;
		if ((g = atomic_load_explicit(&c->gen, memory_order_acquire)) != *seen) {
			*seen = g;
			return true;
		}
		if (++spins < COPY_SPINS) {
			rte_pause();
			continue;
		}
		unsigned rung = pl_bell_arm(&c->go);

		if (atomic_load(&c->gen) != *seen || atomic_load(&c->quit)) {
			pl_bell_disarm(&c->go);
			continue;
		}
		pl_bell_wait(&c->go, rung, COPY_SLEEP_NS);
		spins = 0;
	}
}

static void *
helper_main(void *arg)
{
	struct copier_helper *h = arg;
	struct pl_copier *c = h->c;
	unsigned seen = 0;

	while (next_job(c, &seen)) {
		size_t off, n = slice(c, h->k, &off);

		if (n > 0)
			memcpy(c->dst + off, c->src + off, n);
		if (atomic_fetch_sub_explicit(&c->left, 1, memory_order_acq_rel) == 1)
			pl_bell_ring(&c->done);
	}
	return NULL;
}

struct pl_copier *
gcap_pl_copier_start(unsigned nthreads, int *err)
{
	struct pl_copier *c = calloc(1, sizeof(*c));
	unsigned k;

	if (c == NULL ||
	    (nthreads > 0 && ((c->th = calloc(nthreads, sizeof(*c->th))) == NULL ||
			      (c->hs = calloc(nthreads, sizeof(*c->hs))) == NULL))) {
		*err = -ENOMEM;
		goto fail;
	}
	for (k = 0; k < nthreads; k++) {
		int r;

		c->hs[k].c = c;
		c->hs[k].k = k;
		if ((r = gcap_thread_start(&c->th[k], NULL, helper_main, &c->hs[k])) !=
		    0) {
			*err = -r;
			break;
		}
		c->n = k + 1;
	}
	if (k == nthreads)
		return c;
	gcap_pl_copier_stop(c);
	return NULL;
fail:
	if (c != NULL) {
		free(c->th);
		free(c->hs);
	}
	free(c);
	return NULL;
}

void
gcap_pl_copier_post(struct pl_copier *c, void *dst, const void *src, size_t len)
{
	if (c->n == 0 || len == 0) {
		memcpy(dst, src, len);
		return;
	}
	c->dst = dst;
	c->src = src;
	c->len = len;
	atomic_store_explicit(&c->left, c->n, memory_order_relaxed);
	/* the job's fields before its gen (the helpers' acquire) */
	atomic_fetch_add_explicit(&c->gen, 1, memory_order_release);
	pl_bell_ring(&c->go);
}

void
gcap_pl_copier_wait(struct pl_copier *c)
{
	unsigned spins = 0;

	while (atomic_load_explicit(&c->left, memory_order_acquire) != 0) {
		if (++spins < COPY_SPINS) {
			rte_pause();
			continue;
		}
		unsigned rung = pl_bell_arm(&c->done);

		if (atomic_load(&c->left) == 0) {
			pl_bell_disarm(&c->done);
			break;
		}
		pl_bell_wait(&c->done, rung, COPY_SLEEP_NS);
	}
}

void
gcap_pl_copier_stop(struct pl_copier *c)
{
	if (c == NULL)
		return;
	atomic_store(&c->quit, true);
	pl_bell_ring(&c->go);
	for (unsigned k = 0; k < c->n; k++)
		pthread_join(c->th[k], NULL);
	free(c->th);
	free(c->hs);
	free(c);
}
