/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cpu executor: runs the filters on the thread that submits a batch
 * (the RX lcore, or the file reader), with libpcap's bpf_filter(), or,
 * for a one-queue pipeline given cpu_workers, on that many threads that
 * take the submitted batches in turn (they complete in order). It is
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
 * A worker (cpu_workers) marks its batches busy the same way, so the
 * watchdog sees a stuck filter on a worker as on a queue's own thread.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_thread.h"
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
	_Atomic int state; /* enum slot_state; a worker's DONE is released */
};

/* A thread that runs batches (a queue's submitting thread, or a worker),
 * as the watchdog sees it. */
struct cpu_busy {
	/* a batch in progress: busy is odd while one runs (written by the
	 * running thread, which sets clock and busy_n before the release
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

struct cpu_queue {
	struct cpu_slot *slots;
	uint32_t head; /* next slot to hand out */
	uint32_t tail; /* oldest slot not yet released */
	struct gcap_xbuf *xbufs;
	uint8_t *xmem;
	uint8_t *stage_mem;
	struct cpu_busy bz; /* batches run by the submitting thread */
};

/* A worker thread of cpu_workers. */
struct cpu_worker {
	struct gcap_exec *ex;
	pthread_t thr;
	struct cpu_busy bz;
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
	/* cpu_workers: queue 0's submitted batches, taken in turn */
	struct cpu_worker *w;
	unsigned nthr;
	atomic_uint submitted; /* batches submitted (futex word: workers wait on it) */
	atomic_uint taken;     /* batches a worker took */
	atomic_uint waiting;   /* workers asleep */
	atomic_int quit;
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

static void workers_join(struct gcap_exec *ex);
static int workers_start(struct gcap_exec *ex, char *errbuf);

static void
cpu_destroy(struct gcap_exec *ex)
{
	if (ex == NULL)
		return;
	workers_join(ex);
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
	    conf->batch_max > GCAP_FILE_BATCH_MAX || conf->nxbufs == 0 ||
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
	if ((r = workers_start(ex, errbuf)) < 0) {
		cpu_destroy(ex);
		errno = -r;
		return NULL;
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
cpu_process(const struct gcap_exec *ex, struct gcap_batch *b, struct cpu_busy *bz)
{
	const struct gcap_exec_conf *c = &ex->conf;
	struct gcap_batch_result *res = b->res;
	struct gcap_xbuf *xb = b->xbuf;
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

			atomic_store_explicit(&bz->in_kernel, 1, memory_order_relaxed);
			v = ex->kfn(&kp, ex->kstate);
			atomic_store_explicit(&bz->in_kernel, 0, memory_order_relaxed);
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

/* Filter batch b on this thread (bz: its busy marks) and time it. */
static void
cpu_run(const struct gcap_exec *ex, struct gcap_batch *b, struct cpu_busy *bz)
{
	struct timespec t0, t1;

	atomic_store_explicit(&bz->clock, (int)my_cpu_clock(), memory_order_relaxed);
	atomic_store_explicit(&bz->busy_n, b->n, memory_order_relaxed);
	atomic_store_explicit(&bz->busy,
			      atomic_load_explicit(&bz->busy, memory_order_relaxed) + 1,
			      memory_order_release);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cpu_process(ex, b, bz);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_store_explicit(&bz->busy,
			      atomic_load_explicit(&bz->busy, memory_order_relaxed) + 1,
			      memory_order_release);
	b->res->exec_ns = (uint32_t)((t1.tv_sec - t0.tv_sec) * 1000000000L +
				     (t1.tv_nsec - t0.tv_nsec));
}

/* A worker: takes the next submitted batch of queue 0, filters it, marks
 * it done; asleep on the submission count when there is none. */
static void *
worker_main(void *arg)
{
	struct cpu_worker *w = arg;
	struct gcap_exec *ex = w->ex;
	struct cpu_queue *q = &ex->q[0];

	while (!atomic_load_explicit(&ex->quit, memory_order_acquire)) {
		/* the take count first: read after it, the submission count
		 * is at least as new, so k != sub means batch k was submitted.
		 * Read the other way round, other workers could take every
		 * batch submitted up to sub, and one more submitted since, in
		 * between: k then lay past sub, the CAS took batch k before it
		 * was submitted (a slot being filled), and every worker went
		 * on taking batches that did not exist */
		unsigned k = atomic_load(&ex->taken);
		unsigned sub = atomic_load_explicit(&ex->submitted, memory_order_acquire);

		if ((int)(sub - k) > 0) {
			if (!atomic_compare_exchange_weak(&ex->taken, &k, k + 1))
				continue;
			struct cpu_slot *s = &q->slots[k & ex->mask];

			cpu_run(ex, &s->b, &w->bz);
			atomic_store_explicit(&s->state, SLOT_DONE, memory_order_release);
			continue;
		}
		atomic_fetch_add(&ex->waiting, 1);
		if (atomic_load(&ex->submitted) == sub && !atomic_load(&ex->quit))
			syscall(SYS_futex, &ex->submitted, FUTEX_WAIT_PRIVATE, sub, NULL,
				NULL, 0);
		atomic_fetch_sub(&ex->waiting, 1);
	}
	return NULL;
}

static void
workers_wake(struct gcap_exec *ex)
{
	if (atomic_load(&ex->waiting) > 0)
		syscall(SYS_futex, &ex->submitted, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void
workers_join(struct gcap_exec *ex)
{
	if (ex->nthr == 0)
		return;
	atomic_store_explicit(&ex->quit, 1, memory_order_release);
	for (unsigned i = 0; i < ex->nthr; i++) {
		/* a worker between its look at quit and its futex wait goes to
		 * sleep after a wake-up: wake them until it is gone */
		for (;;) {
			struct timespec ts;

			syscall(SYS_futex, &ex->submitted, FUTEX_WAKE_PRIVATE, INT_MAX,
				NULL, NULL, 0);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (pthread_timedjoin_np(ex->w[i].thr, NULL, &ts) == 0)
				break;
		}
	}
	ex->nthr = 0;
	free(ex->w);
	ex->w = NULL;
}

static int
workers_start(struct gcap_exec *ex, char *errbuf)
{
	unsigned n = ex->conf.cpu_workers;

	if (n == 0 || ex->kfn != NULL || ex->conf.nqueues != 1)
		return 0;
	ex->w = calloc(n, sizeof(*ex->w));
	if (ex->w == NULL)
		return gcap_err(errbuf, ENOMEM, "cpu executor: out of memory");
	for (unsigned i = 0; i < n; i++) {
		int r;

		ex->w[i].ex = ex;
		r = gcap_thread_start(&ex->w[i].thr, NULL, worker_main, &ex->w[i]);

		if (r != 0) {
			workers_join(ex);
			return gcap_err(errbuf, r,
					"cpu executor: cannot start a worker: %s",
					strerror(r));
		}
		ex->nthr++;
	}
	return 0;
}

static int
cpu_batch_submit(struct gcap_exec *ex, unsigned qi, struct gcap_batch *b)
{
	struct cpu_queue *q = &ex->q[qi];
	struct cpu_slot *s = &q->slots[q->head & ex->mask];

	if (b != &s->b || q->head - q->tail > ex->mask)
		return -EINVAL;
	if (ex->nthr > 0) {
		/* the slot's batch before the count that hands it out */
		atomic_store_explicit(&s->state, SLOT_FREE, memory_order_relaxed);
		q->head++;
		/* seq_cst: the count before workers_wake's look at waiting,
		 * as a worker counts itself waiting before its look at it */
		atomic_store(&ex->submitted, q->head);
		workers_wake(ex);
		return 0;
	}
	cpu_run(ex, b, &q->bz);
	s->state = SLOT_DONE;
	q->head++;
	return 0;
}

static struct gcap_batch *
cpu_batch_poll(struct gcap_exec *ex, unsigned qi)
{
	struct cpu_queue *q = &ex->q[qi];
	struct cpu_slot *s = &q->slots[q->tail & ex->mask];

	if (q->tail == q->head ||
	    atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_DONE)
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

/* The CPU time the thread behind bz has used, or 0 when it cannot be
 * read (the thread gone). */
static uint64_t
thread_cpu_ns(struct cpu_busy *bz)
{
	return clock_ns(
		(clockid_t)atomic_load_explicit(&bz->clock, memory_order_relaxed));
}

/* What a stuck batch is in, for a message. */
static void
stuck_what(const struct gcap_exec *ex, struct cpu_busy *bz, char *what, size_t size)
{
	if (atomic_load_explicit(&bz->in_kernel, memory_order_relaxed))
		snprintf(what, size, "inline kernel %s", gcap_khost_path(ex->kernel));
	else
		snprintf(what, size, "a filter (libpcap's bpf_filter())");
}

/* The watchdog's look at one thread running batches of queue qi. */
static int
busy_check(const struct gcap_exec *ex, struct cpu_busy *bz, unsigned qi, char *errbuf)
{
	char what[GCAP_ERRBUF_SIZE / 2];
	uint64_t v = atomic_load_explicit(&bz->busy, memory_order_acquire), cpu;

	if ((v & 1) == 0) {
		bz->seen = 0;
		return 0;
	}
	cpu = thread_cpu_ns(bz);
	if (v != bz->seen) {
		/* a batch not seen before: its clock starts now */
		bz->seen = v;
		bz->seen_cpu_ns = cpu;
		bz->seen_ns = clock_ns(CLOCK_MONOTONIC);
		return 0;
	}
	if (cpu == 0 || cpu - bz->seen_cpu_ns <= ex->budget_ns)
		return 0;
	stuck_what(ex, bz, what, sizeof(what));
	return gcap_err(errbuf, ETIME,
			"%s is stuck: one batch of queue %u (%u packets) took %.1f s "
			"of CPU time (%.1f s in all), over the budget of %llu ms%s; "
			"the capture stops without it",
			what, qi, (unsigned)atomic_load(&bz->busy_n),
			(double)(cpu - bz->seen_cpu_ns) / 1e9,
			(double)(clock_ns(CLOCK_MONOTONIC) - bz->seen_ns) / 1e9,
			(unsigned long long)(ex->budget_ns / 1000000u),
			ex->kernel != NULL ? " (--kernel-budget)" : "");
}

static int
cpu_watchdog(struct gcap_exec *ex, char *errbuf)
{
	int r;

	for (unsigned i = 0; i < ex->conf.nqueues; i++)
		if ((r = busy_check(ex, &ex->q[i].bz, i, errbuf)) < 0)
			return r;
	for (unsigned i = 0; i < ex->nthr; i++) /* workers run queue 0's */
		if ((r = busy_check(ex, &ex->w[i].bz, 0, errbuf)) < 0)
			return r;
	return 0;
}

/* A batch still running at the stop (the thread never returned from it):
 * -EBUSY with the message, else 0. */
static int
busy_at_stop(const struct gcap_exec *ex, struct cpu_busy *bz, unsigned qi, char *errbuf)
{
	char what[GCAP_ERRBUF_SIZE / 2];

	if ((atomic_load_explicit(&bz->busy, memory_order_acquire) & 1) == 0)
		return 0;
	stuck_what(ex, bz, what, sizeof(what));
	return gcap_err(errbuf, EBUSY,
			"%s is stuck: one batch of queue %u (%u packets) did not "
			"finish by the stop; the capture stops without it",
			what, qi, (unsigned)atomic_load(&bz->busy_n));
}

static int
cpu_stop(struct gcap_exec *ex, unsigned timeout_ms, char *errbuf)
{
	/* inline, batches complete inside submit: nothing is ever in flight,
	 * unless one never returned (the caller waited for its thread
	 * already); workers finish what was submitted (bounded), then quit */
	struct cpu_queue *q = &ex->q[0];
	struct timespec ts = { 0, 100000 };
	/* by the clock: a sleep's passes take longer than asked */
	const uint64_t until =
		clock_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000u;
	int r;

	while (ex->nthr > 0) {
		uint32_t k;

		for (k = q->tail; k != q->head; k++)
			if (atomic_load(&q->slots[k & ex->mask].state) != SLOT_DONE)
				break;
		if (k == q->head || clock_ns(CLOCK_MONOTONIC) > until)
			break;
		nanosleep(&ts, NULL);
	}
	for (unsigned i = 0; i < ex->conf.nqueues; i++)
		if ((r = busy_at_stop(ex, &ex->q[i].bz, i, errbuf)) < 0)
			return r;
	/* a worker stuck in a batch is left running, not joined (the caller
	 * leaves the executor alone) */
	for (unsigned i = 0; i < ex->nthr; i++)
		if ((r = busy_at_stop(ex, &ex->w[i].bz, 0, errbuf)) < 0)
			return r;
	workers_join(ex);
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
