/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * order_bench: the writer thread's work per record with and without the
 * time-order merge (dataplane/pipeline_order.c), side by side, without
 * ports, lcores or a GPU. Each round lays the same records out as the RX
 * lcores would leave them in the queues' export buffers: each burst of
 * --burst records (1 by default) goes to a queue drawn at random (as
 * flows spread by hash) with one time (a port on the host's clock stamps
 * a burst at once), each queue's records in time order, with more bytes
 * than the caches hold so that they are
 * read from memory as the writer reads an RX lcore's. Then, in turns:
 * "merge" hands every buffer to gcap_pl_order_run(), the call the writer
 * thread makes; "plain" writes each buffer in turn through
 * gcap_pl_write_xbuf(), as the writer thread does with --no-time-order. The output is one pcap
 * writer without its I/O thread (/dev/null by default): what is timed is
 * the writer thread's own work. It prints one markdown row per run.
 *
 * usage: order_bench [--queues Q] [--records N] [--per-buf R] [--burst B]
 *                    [--size BYTES] [--rounds K] [--out PATH] [--only merge|plain]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/dlt.h>

#include "gpucap/gcap_writer.h"
#include "../dataplane/pipeline_internal.h"

/* more queues than any run here uses */
#define MAXQ 64u

struct bench {
	struct gcap_pipeline pl;
	unsigned nq, per_buf, burst;
	uint32_t size;
	unsigned long n;
	uint8_t *mem;
};

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint32_t
rec_bytes(uint32_t size)
{
	return (uint32_t)sizeof(struct gcap_rec) + ((size + 7u) & ~7u);
}

/* The queues, their buffers (each holds per_buf records, as many as the
 * largest queue needs) and the export memory under them. */
static int
setup(struct bench *b)
{
	struct gcap_pipeline *pl = &b->pl;
	const uint64_t rb = rec_bytes(b->size), xsize = rb * b->per_buf;
	/* a queue draws about n / nq records; room for twice that */
	const unsigned nb =
		(unsigned)((2 * b->n / b->nq + b->per_buf - 1) / b->per_buf) + 1;
	uint32_t ring = 1;
	uint8_t *p;

	while (ring < nb)
		ring <<= 1;
	pl->q = calloc(b->nq, sizeof(*pl->q));
	b->mem = malloc(xsize * nb * b->nq);
	if (pl->q == NULL || b->mem == NULL)
		return -ENOMEM;
	p = b->mem;
	for (unsigned i = 0; i < b->nq; i++) {
		struct pl_queue *q = &pl->q[i];

		q->nxbufs = nb;
		q->xbufs = calloc(nb, sizeof(*q->xbufs));
		if (q->xbufs == NULL || gcap_spsc_init(&q->full, ring) != 0 ||
		    gcap_spsc_init(&q->free, ring) != 0)
			return -ENOMEM;
		/* no queue's held buffers force the merge early */
		q->xa.cap = UINT64_MAX / 2;
		for (unsigned k = 0; k < nb; k++, p += xsize) {
			q->xbufs[k].data = p;
			q->xbufs[k].size = (uint32_t)xsize;
			q->xbufs[k].queue = (uint16_t)i;
			q->xbufs[k].index = (uint16_t)k;
		}
	}
	return 0;
}

/* Lay round k's records out; *used gets the buffers each queue filled.
 * @return 0, or -ENOSPC where a queue drew more than its buffers hold. */
static int
fill(struct bench *b, unsigned long k, unsigned *used)
{
	static const uint8_t frame[65536];
	const uint32_t rb = rec_bytes(b->size);
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ k, ts = 1700000000ull * 1000000000ull;
	unsigned cur[MAXQ] = { 0 };

	ts += k * b->n * 67;
	for (unsigned i = 0; i < b->nq; i++)
		for (unsigned x = 0; x < b->pl.q[i].nxbufs; x++)
			b->pl.q[i].xbufs[x].len = b->pl.q[i].xbufs[x].nrec = 0;
	unsigned qi = 0;

	for (unsigned long i = 0; i < b->n; i++) {
		/* a burst: its records to one queue, with its first one's time */
		const unsigned long first = i - i % b->burst;

		if (i == first)
			qi = (unsigned)(xorshift(&seed) % b->nq);
		struct gcap_xbuf *xb = &b->pl.q[qi].xbufs[cur[qi]];
		struct gcap_rec r = { .ts_ns = ts + first * 67, /* 64 B at 100 Gb/s */
				      .caplen = b->size,
				      .wirelen = b->size,
				      .seq = (uint32_t)i,
				      .outmask = 1 };

		if (xb->nrec == b->per_buf) {
			if (++cur[qi] == b->pl.q[qi].nxbufs)
				return -ENOSPC;
			xb = &b->pl.q[qi].xbufs[cur[qi]];
		}
		memcpy(xb->data + xb->len, &r, sizeof(r));
		memcpy(xb->data + xb->len + sizeof(r), frame, b->size);
		xb->len += rb;
		xb->nrec++;
	}
	for (unsigned i = 0; i < b->nq; i++)
		used[i] = b->pl.q[i].xbufs[cur[i]].nrec > 0 ? cur[i] + 1 : cur[i];
	return 0;
}

/* The writer thread's part: every record to the output. @return 0, or
 * -EIO where a record failed or a buffer did not come back. */
static int
drain(struct bench *b, bool merge, const unsigned *used)
{
	struct gcap_pipeline *pl = &b->pl;

	if (merge) {
		unsigned back = 0, want = 0;
		bool any = false;

		for (unsigned i = 0; i < b->nq; i++) {
			for (unsigned x = 0; x < used[i]; x++)
				gcap_spsc_push(&pl->q[i].full, &pl->q[i].xbufs[x]);
			want += used[i];
		}
		/* as the writer thread: while every queue has records, then
		 * (as at the stop) everything */
		if (gcap_pl_order_run(pl, 0, false, &any) != 0 ||
		    gcap_pl_order_run(pl, 0, true, &any) != 0)
			return -EIO;
		for (unsigned i = 0; i < b->nq; i++)
			while (gcap_spsc_pop(&pl->q[i].free) != NULL)
				back++;
		return back == want ? 0 : -EIO;
	}
	for (unsigned i = 0; i < b->nq; i++)
		for (unsigned x = 0; x < used[i]; x++) {
			uint32_t done;

			if (gcap_pl_write_xbuf(pl, &pl->q[i].xbufs[x], &done) != 0)
				return -EIO;
		}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct gcap_writer_if eth = { .name = "bench0",
						   .linktype = DLT_EN10MB };
	static struct gcap_pipeline_queue srcs[MAXQ];
	static struct bench b = {
		.nq = 8, .per_buf = 128, .burst = 1, .size = 64, .n = 4000000
	};
	const char *out = "/dev/null";
	unsigned long rounds = 5;
	int first = 0, last = 1;
	unsigned used[MAXQ];
	struct gcap_writer *w;
	char eb[GCAP_ERRBUF_SIZE];

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL)
			goto usage;
		if (strcmp(argv[i], "--queues") == 0)
			b.nq = (unsigned)strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--records") == 0)
			b.n = strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--per-buf") == 0)
			b.per_buf = (unsigned)strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--burst") == 0)
			b.burst = (unsigned)strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--size") == 0)
			b.size = (uint32_t)strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--out") == 0)
			out = v;
		else if (strcmp(argv[i], "--only") == 0 && strcmp(v, "merge") == 0)
			last = 0;
		else if (strcmp(argv[i], "--only") == 0 && strcmp(v, "plain") == 0)
			first = 1;
		else
			goto usage;
		i++;
	}
	if (b.nq < 2 || b.nq > MAXQ || b.n == 0 || b.per_buf == 0 || b.burst == 0 ||
	    b.size == 0 || b.size > 65535 || rounds == 0)
		goto usage;

	struct gcap_writer_conf wc = {
		.path = out, .fmt = GCAP_FMT_PCAP, .nifs = 1, .ifs = &eth
	};

	w = gcap_writer_open(&wc, eb);
	if (w == NULL) {
		fprintf(stderr, "order_bench: %s\n", eb);
		return 1;
	}
	b.pl.conf.nqueues = b.nq;
	b.pl.conf.queues = srcs;
	b.pl.conf.time_order = true;
	b.pl.conf.order_window_ms = 60000;
	b.pl.conf.nwriters = 1;
	b.pl.conf.writers = &w;
	pthread_mutex_init(&b.pl.err_lock, NULL);
	if (setup(&b) != 0 || gcap_pl_order_create(&b.pl, eb) != 0) {
		fprintf(stderr, "order_bench: out of memory\n");
		return 1;
	}
	printf("| round | writer | M records/s | ns per record |\n|---|---|---|---|\n");
	for (unsigned long k = 1; k <= rounds; k++)
		for (int plain = first; plain <= last; plain++) {
			uint64_t t0;
			double secs;

			if (fill(&b, k, used) != 0) {
				fprintf(stderr, "order_bench: a queue drew more records "
						"than its buffers hold\n");
				return 1;
			}
			t0 = now_ns(CLOCK_MONOTONIC);
			if (drain(&b, !plain, used) != 0) {
				fprintf(stderr, "order_bench: %s\n",
					b.pl.error ? b.pl.errmsg : "records lost");
				return 1;
			}
			secs = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
			printf("| %lu | %s | %.2f | %.1f |\n", k,
			       plain ? "plain" : "merge", (double)b.n / secs / 1e6,
			       secs * 1e9 / (double)b.n);
			fflush(stdout);
		}
	if (gcap_writer_close(w, NULL, eb) != 0) {
		fprintf(stderr, "order_bench: %s\n", eb);
		return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: order_bench [--queues Q] [--records N] [--per-buf R] "
			"[--burst B] [--size BYTES] [--rounds K] [--out PATH] [--only "
			"merge|plain]\n");
	return 2;
}
