/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cpu executor: runs the filters on the thread that submits a batch
 * (the RX lcore, or the file reader), with libpcap's bpf_filter(). It is
 * the reference the gpu executor is tested against, and the backend for
 * machines without a GPU.
 *
 * An inline kernel is native code on that thread: an endless loop in it
 * would hold the thread for ever (so does bpf_filter() on some crafted
 * packets: libpcap's protochain loop). Each batch is marked busy (two
 * stores a batch, and two a packet around the kernel, which tell the
 * kernel from the filters); the watchdog, on the monitoring thread, reads
 * the busy thread's CPU time and calls the batch stuck past its budget,
 * and stop reports a batch still busy. The thread itself is never
 * cancelled: it may hold anything it is in the middle of, so the caller
 * leaves the executor alone and the process ends (gcap_exec.h, stop).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_kernel.h"
#include "gpucap/gcap_khost.h"

enum slot_state {
	SLOT_FREE = 0,
	SLOT_DONE
};

struct cpu_slot {
	struct gcap_batch b;
	struct gcap_batch_result res;
	enum slot_state state;
};

struct cpu_queue {
	struct cpu_slot *slots;
	uint32_t head; /* next slot to hand out */
	uint32_t tail; /* oldest slot not yet released */
	struct gcap_xbuf *xbufs;
	uint8_t *xmem;
	uint8_t *stage_mem;
	/* a batch in progress: busy is odd while one runs (written by the
	 * queue's thread, which sets clock and busy_n before the release
	 * store); clock: that thread's CPU-time clock; in_kernel: the thread
	 * is in the inline kernel (else in the filters) */
	atomic_uint_fast64_t busy;
	atomic_int clock;
	atomic_uint busy_n;
	atomic_int in_kernel;
	/* the watchdog's view (its thread only): the busy value it saw, and
	 * the thread's CPU time and the time then */
	uint64_t seen;
	uint64_t seen_cpu_ns;
	uint64_t seen_ns;
};

struct gcap_exec {
	struct gcap_exec_conf conf;
	struct bpf_program *filters;
	unsigned mask;
	struct cpu_queue *q;
	struct gcap_khost *kernel; /* inline kernel, or NULL */
	gcap_kernel_fn kfn;
	void *kstate;
	uint64_t budget_ns; /* CPU time a kernel may spend on one batch */
};

/* The calling thread's CPU-time clock, found once per thread. */
static clockid_t
my_cpu_clock(void)
{
	static __thread clockid_t c;
	static __thread bool have;

	if (!have && pthread_getcpuclockid(pthread_self(), &c) == 0)
		have = true;
	return have ? c : CLOCK_THREAD_CPUTIME_ID;
}

static uint64_t
clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
cpu_destroy(struct gcap_exec *ex)
{
	if (ex == NULL)
		return;
	for (unsigned i = 0; ex->q != NULL && i < ex->conf.nqueues; i++) {
		struct cpu_queue *q = &ex->q[i];

		if (q->slots != NULL)
			for (unsigned s = 0; s < ex->conf.ring_size; s++)
				free(q->slots[s].b.pkts);
		free(q->slots);
		free(q->xbufs);
		free(q->xmem);
		free(q->stage_mem);
	}
	free(ex->q);
	free(ex->filters);
	gcap_khost_free(ex->kernel);
	free(ex);
}

static int
cpu_queue_init(struct gcap_exec *ex, unsigned qi, char *errbuf)
{
	const struct gcap_exec_conf *c = &ex->conf;
	struct cpu_queue *q = &ex->q[qi];

	q->slots = calloc(c->ring_size, sizeof(*q->slots));
	q->xbufs = calloc(c->nxbufs, sizeof(*q->xbufs));
	if (q->slots == NULL || q->xbufs == NULL)
		return gcap_err(errbuf, ENOMEM, "cpu executor: out of memory");
	if (posix_memalign((void **)&q->xmem, 64, (size_t)c->nxbufs * c->xbuf_size) != 0)
		return gcap_err(
			errbuf, ENOMEM,
			"cpu executor: cannot allocate %u export buffers of %u bytes",
			c->nxbufs, c->xbuf_size);
	/* resident now: the pipeline cycles through all of it, and a page's
	 * first touch is a fault on the packet path (the gpu executor's
	 * pinned memory is resident from the start) */
	memset(q->xmem, 0, (size_t)c->nxbufs * c->xbuf_size);
	if (c->stage_size > 0 &&
	    posix_memalign((void **)&q->stage_mem, 64,
			   (size_t)c->ring_size * c->stage_size) != 0)
		return gcap_err(errbuf, ENOMEM,
				"cpu executor: cannot allocate staging memory");
	for (unsigned i = 0; i < c->nxbufs; i++) {
		q->xbufs[i].data = q->xmem + (size_t)i * c->xbuf_size;
		q->xbufs[i].size = c->xbuf_size;
		q->xbufs[i].queue = (uint16_t)qi;
		q->xbufs[i].index = (uint16_t)i;
	}
	for (unsigned s = 0; s < c->ring_size; s++) {
		struct gcap_batch *b = &q->slots[s].b;

		b->pkts = calloc(c->batch_max, sizeof(*b->pkts));
		if (b->pkts == NULL)
			return gcap_err(errbuf, ENOMEM, "cpu executor: out of memory");
		b->queue = (uint16_t)qi;
		b->res = &q->slots[s].res;
		if (q->stage_mem != NULL) {
			b->stage = q->stage_mem + (size_t)s * c->stage_size;
			b->stage_size = c->stage_size;
		}
	}
	return 0;
}

static struct gcap_exec *
cpu_create(const struct gcap_exec_conf *conf, char *errbuf)
{
	struct gcap_exec *ex;
	int r;

	if (conf->nqueues == 0 || conf->ring_size == 0 ||
	    (conf->ring_size & (conf->ring_size - 1)) != 0 || conf->batch_max == 0 ||
	    conf->batch_max > GCAP_BATCH_MAX || conf->nxbufs == 0 ||
	    conf->nxbufs > UINT16_MAX || conf->nfilters == 0 ||
	    conf->nfilters > GCAP_MAX_OUTPUTS || conf->xbuf_size < GCAP_REC_SIZE(0)) {
		gcap_err(errbuf, EINVAL, "cpu executor: invalid configuration");
		errno = EINVAL;
		return NULL;
	}
	ex = calloc(1, sizeof(*ex));
	if (ex == NULL)
		goto nomem;
	ex->conf = *conf;
	ex->mask = conf->ring_size - 1;
	ex->filters = calloc(conf->nfilters, sizeof(*ex->filters));
	ex->q = calloc(conf->nqueues, sizeof(*ex->q));
	if (ex->filters == NULL || ex->q == NULL)
		goto nomem;
	/* programs are owned by the caller and outlive the executor */
	memcpy(ex->filters, conf->filters, conf->nfilters * sizeof(*ex->filters));
	ex->conf.filters = ex->filters;
	if (conf->kernel_path != NULL) {
		/* the same source the gpu executor compiles with NVRTC, built
		 * here by the host C compiler */
		ex->kernel = gcap_khost_load(conf->kernel_path, conf->kernel_arg, errbuf);
		if (ex->kernel == NULL) {
			r = errno;
			cpu_destroy(ex);
			errno = r;
			return NULL;
		}
		ex->kfn = gcap_khost_entry(ex->kernel);
		ex->kstate = gcap_khost_state(ex->kernel);
	}
	ex->budget_ns = (uint64_t)(conf->kernel_budget_ms ? conf->kernel_budget_ms :
							    GCAP_KERNEL_BUDGET_MS) *
			1000000u;
	for (unsigned i = 0; i < conf->nqueues; i++) {
		r = cpu_queue_init(ex, i, errbuf);
		if (r < 0) {
			cpu_destroy(ex);
			errno = -r;
			return NULL;
		}
	}
	return ex;
nomem:
	cpu_destroy(ex);
	gcap_err(errbuf, ENOMEM, "cpu executor: out of memory");
	errno = ENOMEM;
	return NULL;
}

static unsigned
cpu_xbufs(struct gcap_exec *ex, unsigned q, struct gcap_xbuf **xbufs)
{
	*xbufs = ex->q[q].xbufs;
	return ex->conf.nxbufs;
}

static struct gcap_batch *
cpu_batch_get(struct gcap_exec *ex, unsigned qi)
{
	struct cpu_queue *q = &ex->q[qi];

	if (q->head - q->tail > ex->mask)
		return NULL;
	return &q->slots[q->head & ex->mask].b;
}

/* The semantics every executor implements (see gcap_exec.h). */
static void
cpu_process(const struct gcap_exec *ex, struct gcap_batch *b)
{
	const struct gcap_exec_conf *c = &ex->conf;
	struct gcap_batch_result *res = b->res;
	struct gcap_xbuf *xb = b->xbuf;
	struct cpu_queue *q = &ex->q[b->queue];
	/* records go after those of earlier batches already in the buffer */
	uint32_t off = xb ? xb->len : 0, nrec = xb ? xb->nrec : 0;
	bool full = false;

	res->n_captured = res->n_filtered = res->n_truncated = 0;
	res->captured_bytes = 0;
	res->start_ns = 0; /* no doorbell to split the cycle at */
	memset(res->out_pkts, 0, c->nfilters * sizeof(res->out_pkts[0]));
	for (uint32_t i = 0; i < b->n; i++) {
		const struct gcap_pkt *p = &b->pkts[i];
		const uint8_t *data = (const uint8_t *)(uintptr_t)p->addr;
		uint64_t m = 0;
		uint32_t cap, sz;
		struct gcap_rec *rec;

		for (unsigned j = 0; j < c->nfilters; j++)
			if (gcap_filter_run(&ex->filters[j], data, p->wirelen,
					    p->caplen) != 0)
				m |= UINT64_C(1) << j;
		cap = p->caplen;
		if (m != 0 && ex->kfn != NULL) {
			/* the kernel sees packets some filter passed */
			const struct gcap_kpkt kp = {
				.data = data,
				.caplen = p->caplen,
				.wirelen = p->wirelen,
				.ts_ns = p->ts_ns,
				.port = p->port,
				.queue = p->queue,
				.seq = p->seq,
			};

			uint32_t v;

			atomic_store_explicit(&q->in_kernel, 1, memory_order_relaxed);
			v = ex->kfn(&kp, ex->kstate);
			atomic_store_explicit(&q->in_kernel, 0, memory_order_relaxed);
			gcap_verdict_apply(v, m, p->caplen, &m, &cap);
		}
		if (m == 0) {
			res->n_filtered++;
			continue;
		}
		if (cap > c->snaplen)
			cap = c->snaplen;
		sz = GCAP_REC_SIZE(cap);
		if (full || xb == NULL || sz > xb->size - off) {
			full = true;
			res->n_truncated++;
			continue;
		}
		rec = (struct gcap_rec *)(xb->data + off);
		rec->ts_ns = p->ts_ns;
		rec->outmask = m;
		rec->caplen = cap;
		rec->wirelen = p->wirelen;
		rec->port = p->port;
		rec->queue = p->queue;
		rec->seq = p->seq;
		memcpy(rec + 1, data, cap);
		memset((uint8_t *)(rec + 1) + cap, 0, sz - sizeof(*rec) - cap);
		off += sz;
		nrec++;
		res->n_captured++;
		res->captured_bytes += p->wirelen;
		for (uint64_t mm = m; mm != 0; mm &= mm - 1)
			res->out_pkts[__builtin_ctzll(mm)]++;
	}
	if (xb != NULL) {
		xb->len = off;
		xb->nrec = nrec;
	}
}

static int
cpu_batch_submit(struct gcap_exec *ex, unsigned qi, struct gcap_batch *b)
{
	struct cpu_queue *q = &ex->q[qi];
	struct cpu_slot *s = &q->slots[q->head & ex->mask];

	struct timespec t0, t1;

	if (b != &s->b || q->head - q->tail > ex->mask)
		return -EINVAL;
	atomic_store_explicit(&q->clock, (int)my_cpu_clock(), memory_order_relaxed);
	atomic_store_explicit(&q->busy_n, b->n, memory_order_relaxed);
	atomic_store_explicit(&q->busy,
			      atomic_load_explicit(&q->busy, memory_order_relaxed) + 1,
			      memory_order_release);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cpu_process(ex, b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_store_explicit(&q->busy,
			      atomic_load_explicit(&q->busy, memory_order_relaxed) + 1,
			      memory_order_release);
	b->res->exec_ns = (uint32_t)((t1.tv_sec - t0.tv_sec) * 1000000000L +
				     (t1.tv_nsec - t0.tv_nsec));
	s->state = SLOT_DONE;
	q->head++;
	return 0;
}

static struct gcap_batch *
cpu_batch_poll(struct gcap_exec *ex, unsigned qi)
{
	struct cpu_queue *q = &ex->q[qi];
	struct cpu_slot *s = &q->slots[q->tail & ex->mask];

	if (q->tail == q->head || s->state != SLOT_DONE)
		return NULL;
	return &s->b;
}

static void
cpu_batch_release(struct gcap_exec *ex, unsigned qi, struct gcap_batch *b)
{
	struct cpu_queue *q = &ex->q[qi];
	struct cpu_slot *s = &q->slots[q->tail & ex->mask];

	if (b != &s->b)
		return;
	s->state = SLOT_FREE;
	b->n = 0;
	b->xbuf = NULL;
	b->stage_used = 0;
	q->tail++;
}

static int
cpu_health(struct gcap_exec *ex, char *errbuf)
{
	return 0;
}

/* The CPU time the thread of queue q has used, or 0 when it cannot be
 * read (the thread gone). */
static uint64_t
thread_cpu_ns(struct cpu_queue *q)
{
	return clock_ns((clockid_t)atomic_load_explicit(&q->clock, memory_order_relaxed));
}

/* What queue q's stuck batch is in, for a message. */
static void
stuck_what(const struct gcap_exec *ex, struct cpu_queue *q, char *what, size_t size)
{
	if (atomic_load_explicit(&q->in_kernel, memory_order_relaxed))
		snprintf(what, size, "inline kernel %s", gcap_khost_path(ex->kernel));
	else
		snprintf(what, size, "a filter (libpcap's bpf_filter())");
}

static int
cpu_watchdog(struct gcap_exec *ex, char *errbuf)
{
	char what[GCAP_ERRBUF_SIZE / 2];

	for (unsigned i = 0; i < ex->conf.nqueues; i++) {
		struct cpu_queue *q = &ex->q[i];
		uint64_t v = atomic_load_explicit(&q->busy, memory_order_acquire), cpu;

		if ((v & 1) == 0) {
			q->seen = 0;
			continue;
		}
		cpu = thread_cpu_ns(q);
		if (v != q->seen) {
			/* a batch not seen before: its clock starts now */
			q->seen = v;
			q->seen_cpu_ns = cpu;
			q->seen_ns = clock_ns(CLOCK_MONOTONIC);
			continue;
		}
		if (cpu == 0 || cpu - q->seen_cpu_ns <= ex->budget_ns)
			continue;
		stuck_what(ex, q, what, sizeof(what));
		return gcap_err(
			errbuf, ETIME,
			"%s is stuck: one batch of queue %u (%u packets) took %.1f s "
			"of CPU time (%.1f s in all), over the budget of %llu ms%s; "
			"the capture stops without it",
			what, i, (unsigned)atomic_load(&q->busy_n),
			(double)(cpu - q->seen_cpu_ns) / 1e9,
			(double)(clock_ns(CLOCK_MONOTONIC) - q->seen_ns) / 1e9,
			(unsigned long long)(ex->budget_ns / 1000000u),
			ex->kernel != NULL ? " (--kernel-budget)" : "");
	}
	return 0;
}

static int
cpu_stop(struct gcap_exec *ex, unsigned timeout_ms, char *errbuf)
{
	char what[GCAP_ERRBUF_SIZE / 2];

	/* batches complete inside submit: nothing is ever in flight, unless
	 * one never returned (the caller waited for its thread already) */
	for (unsigned i = 0; i < ex->conf.nqueues; i++) {
		struct cpu_queue *q = &ex->q[i];

		if ((atomic_load_explicit(&q->busy, memory_order_acquire) & 1) == 0)
			continue;
		stuck_what(ex, q, what, sizeof(what));
		return gcap_err(errbuf, EBUSY,
				"%s is stuck: one batch of queue %u (%u packets) did not "
				"finish by the stop; the capture stops without it",
				what, i, (unsigned)atomic_load(&q->busy_n));
	}
	return 0;
}

static const struct gcap_khost *
cpu_kernel(struct gcap_exec *ex)
{
	return ex->kernel;
}

static int
cpu_kernel_state(struct gcap_exec *ex, const char *path, char *errbuf)
{
	if (path == NULL)
		return 0;
	if (ex->kernel == NULL)
		return gcap_err(errbuf, EINVAL, "no inline kernel is loaded");
	return gcap_khost_report_file(ex->kernel, path, NULL, errbuf);
}

const struct gcap_exec_ops gcap_exec_cpu_ops = {
	.name = "cpu",
	.submit_works = true,
	.create = cpu_create,
	.destroy = cpu_destroy,
	.xbufs = cpu_xbufs,
	.batch_get = cpu_batch_get,
	.batch_submit = cpu_batch_submit,
	.batch_poll = cpu_batch_poll,
	.batch_release = cpu_batch_release,
	.pool_create = NULL,
	.health = cpu_health,
	.watchdog = cpu_watchdog,
	.stop = cpu_stop,
	.kernel_state = cpu_kernel_state,
	.kernel = cpu_kernel,
};
