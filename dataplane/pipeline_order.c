/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the writer thread does with records: each one to the outputs its
 * outmask names (gcap_pl_write_rec, -c counted there) and, with several
 * queues, the merge that puts every output file in time order.
 *
 * Each queue's records come in their own order; the queues' export
 * buffers reach the writer at different moments (batches complete when
 * they complete), so taken as they come a file goes back and forth in
 * time. The merge holds each queue's buffers, oldest first, and writes
 * the record with the earliest time among the queues' next ones, but
 * only while every queue has one: a queue's later records are no older
 * than its next one, so that record is the earliest there will be. A
 * queue on the host's clock that has nothing says so at its idle polls
 * (pl_queue.idle_wm: a time before any record it will give), as does one
 * whose port gives idle marks (gcap_rx_clock.idle), and records not
 * later than that go on without it. Any other queue that has nothing
 * would hold the others forever; the window bounds that: once a buffer
 * has been held order_window_ms, or a queue's held buffers take a quarter
 * of its export memory (so that its RX side never runs out of room
 * because of the merge), the earliest records go out without waiting.
 * Under --backpressure running out of room only stalls that queue (its
 * port keeps the packets), so memory forces the merge only where every
 * queue that has nothing is quiet (pl_queue.quiet_at: its last poll,
 * less than ORDER_QUIET_NS ago, found nothing, and nothing of it is on
 * its way here); a queue whose records are on their way is waited for,
 * as the window allows: writing the others' later records first is what
 * would put the file out of time order.
 * What a buffer takes is its region, not its records: the RX side
 * reserves room for a whole batch of records and takes the memory back
 * in order, so a held buffer of a few records keeps the whole region,
 * and behind it every later one, from the RX side. At the end everything
 * goes out. Nothing is copied or allocated per record: the merge walks
 * the buffers in place, and a tournament tree over the queues' next
 * records, keyed by time (the lower queue first on a tie), names the
 * earliest: each match keeps its loser, so after a record only the
 * matches on its queue's way to the root are played again, one
 * comparison a level, and none where the next record has the same time.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_internal.h"

/* One queue's buffers taken by the writer, not yet written whole. */
struct pl_order_q {
	struct gcap_xbuf **xb; /* a ring of cap, the oldest at head */
	uint64_t *t;           /* when each was taken (monotonic ns) */
	unsigned head, n, cap;
	uint64_t bytes;      /* export memory its held buffers take */
	uint64_t bytes_max;  /* a quarter of the queue's export memory */
	uint32_t off, idx;   /* the oldest buffer's next record */
	struct gcap_rec rec; /* that record (n > 0) */
	const uint8_t *data;
};

/* A queue's key in the tree: its next record's time, then (on a tie)
 * the lower queue first: the time above the queue's 32 bits. */
typedef unsigned __int128 order_key;
#define NO_REC (~(order_key)0) /* a queue without a record: last */

struct pl_order {
	uint64_t window_ns;
	unsigned m;              /* leaves: nqueues rounded up to a power of two */
	unsigned win;            /* the queue with the earliest record (nhave > 0) */
	unsigned nhave;          /* queues with a record (n > 0) */
	bool stale;              /* a queue got a record: every match again */
	bool soon;               /* the last run waits for records on their way */
	uint64_t (*clock)(void); /* monotonic ns, read where now is stale */
	unsigned *tree;          /* [1, m): each match's loser; [m, 3m): rebuild's */
	order_key *key;          /* per leaf: queue i's next record, or NO_REC */
	struct pl_order_q q[];
};

static inline order_key
key_of(const struct pl_order *o, unsigned qi)
{
	return (order_key)o->q[qi].rec.ts_ns << 32 | qi;
}

/* The winner, queue w, has key k now: its matches on the way to the root
 * again, one comparison a level. The outcome is a coin toss (the queues'
 * records interleave), so the swap is arithmetic: with a branch there,
 * bench/order_bench measured the whole merge about a third slower. */
static inline void
replay(struct pl_order *o, unsigned w, order_key k)
{
	const order_key *key = o->key;
	unsigned *tree = o->tree, cur = w;
	order_key ck = k; /* cur's key, in registers */

	o->key[w] = k;
	for (unsigned n = (o->m + w) >> 1; n > 0; n >>= 1) {
		/* these loads do not wait for the level below's outcome */
		const unsigned l = tree[n];
		const order_key lk = key[l];
		const bool lt = lk < ck;
		/* all ones where the loser kept here wins now */
		const unsigned swap = (l ^ cur) & -(unsigned)lt;

		tree[n] = l ^ swap;
		cur ^= swap;
		ck ^= (ck ^ lk) & -(order_key)lt;
	}
	o->win = cur;
}

/* The time of xb's record at off (0 where none is: its step says why). */
static inline uint64_t
next_ts(const struct gcap_xbuf *xb, uint32_t off)
{
	uint64_t t = 0;

	if (off <= xb->len && xb->len - off >= sizeof(t))
		memcpy(&t, xb->data + off + offsetof(struct gcap_rec, ts_ns), sizeof(t));
	return t;
}

/* The latest time the winner w's records may have and still go before
 * every other queue's next record and not past bound: its runner-up is
 * the least of the losers on its way to the root (each lost only to w).
 * @return false where none of w's later records can go first. */
static inline bool
run_limit(const struct pl_order *o, unsigned w, uint64_t bound, uint64_t *ts_max)
{
	order_key k = NO_REC;
	uint64_t ts;

	for (unsigned n = (o->m + w) >> 1; n > 0; n >>= 1)
		if (o->key[o->tree[n]] < k)
			k = o->key[o->tree[n]];
	*ts_max = bound;
	if (k == NO_REC)
		return true;
	ts = (uint64_t)(k >> 32);
	/* on a tie the lower queue goes first */
	if ((unsigned)k < w) {
		if (ts == 0)
			return false;
		ts--;
	}
	if (ts < *ts_max)
		*ts_max = ts;
	return true;
}

/* Every match from the leaves up: a queue that had nothing has a record,
 * which a replay cannot place (only the winner's path is known). */
static void
rebuild(struct pl_order *o)
{
	unsigned *up = o->tree + o->m - 1; /* up[n], n in [1, 2m): n's winner */

	for (unsigned i = 0; i < o->m; i++)
		up[o->m + i] = i;
	for (unsigned n = o->m - 1; n > 0; n--) {
		const unsigned a = up[2 * n], b = up[2 * n + 1];
		const bool lt = o->key[b] < o->key[a];

		up[n] = lt ? b : a;
		o->tree[n] = lt ? a : b;
	}
	o->win = up[1];
	o->stale = false;
}

int
gcap_pl_write_rec(struct gcap_pipeline *pl, const struct gcap_rec *rec,
		  const uint8_t *data, bool *taken)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	const uint64_t outs =
		c->nwriters >= 64 ? UINT64_MAX : (UINT64_C(1) << c->nwriters) - 1;
	uint64_t m;

	*taken = false;
	if (c->max_packets != 0 &&
	    atomic_load_explicit(&pl->written, memory_order_relaxed) >= c->max_packets)
		return 1;
	m = rec->outmask & outs;
	if (m == 0)
		return 0; /* a kernel's GCAP_OUTPUT(i) past the outputs */
	int r = 0;

	for (; m != 0; m &= m - 1) {
		unsigned wi = (unsigned)__builtin_ctzll(m);
		struct gcap_writer *w = c->writers[wi];

		r = gcap_writer_write(w, rec, data);
		if (r < 0 && !gcap_pl_output_ended(pl, r))
			pl_set_error(pl, r, gcap_writer_errmsg(w));
		if (r < 0)
			break;
		pl->handed[wi]++;
		*taken = true;
	}
	/* written once an output took it, though a later one stopped (-a
	 * filesize: reached there); the writer thread alone counts: no
	 * locked add */
	if (*taken)
		atomic_store_explicit(
			&pl->written,
			atomic_load_explicit(&pl->written, memory_order_relaxed) + 1,
			memory_order_relaxed);
	return r;
}

uint32_t
gcap_pl_write_run(struct gcap_pipeline *pl, const struct gcap_xbuf *xb, uint32_t *off,
		  uint32_t max, uint64_t ts_max)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	const uint64_t done = atomic_load_explicit(&pl->written, memory_order_relaxed);
	int n;

	/* several outputs: each record's outmask picks, record by record */
	if (c->nwriters != 1)
		return 0;
	if (c->max_packets != 0) {
		if (done >= c->max_packets)
			return 0;
		if (c->max_packets - done < max)
			max = (uint32_t)(c->max_packets - done);
	}
	n = gcap_writer_write_run(c->writers[0], xb->data, xb->len, off, max, ts_max, 0);
	if (n <= 0)
		return 0;
	pl->handed[0] += (uint32_t)n;
	atomic_store_explicit(&pl->written, done + (uint32_t)n, memory_order_relaxed);
	return (uint32_t)n;
}

/* The merge's clock (gcap_pl_order_set_clock) */
static uint64_t
mono_clock(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

int
gcap_pl_order_create(struct gcap_pipeline *pl, char *errbuf)
{
	const struct gcap_pipeline_conf *c = &pl->conf;
	struct pl_order *o;

	if (!c->time_order || c->nqueues < 2 || c->queues == NULL)
		return 0;
	o = calloc(1, sizeof(*o) + c->nqueues * sizeof(o->q[0]));
	if (o == NULL)
		return gcap_err(errbuf, ENOMEM, "out of memory (time order)");
	o->window_ns = (uint64_t)c->order_window_ms * 1000000u;
	o->clock = mono_clock;
	for (o->m = 2; o->m < c->nqueues;)
		o->m *= 2;
	o->tree = calloc(3 * o->m, sizeof(*o->tree));
	o->key = malloc(o->m * sizeof(*o->key));
	if (o->tree == NULL || o->key == NULL) {
		free(o->tree);
		free(o->key);
		free(o);
		return gcap_err(errbuf, ENOMEM, "out of memory (time order)");
	}
	for (unsigned i = 0; i < o->m; i++)
		o->key[i] = NO_REC;
	o->stale = true;
	for (unsigned i = 0; i < c->nqueues; i++) {
		struct pl_order_q *q = &o->q[i];

		/* every buffer of the queue can be here at once */
		q->cap = pl->q[i].nxbufs;
		q->xb = calloc(q->cap ? q->cap : 1, sizeof(*q->xb));
		q->t = calloc(q->cap ? q->cap : 1, sizeof(*q->t));
		q->bytes_max = pl->q[i].xa.cap / 4;
		if (q->xb == NULL || q->t == NULL) {
			pl->order = o;
			gcap_pl_order_destroy(pl);
			return gcap_err(errbuf, ENOMEM, "out of memory (time order)");
		}
	}
	pl->order = o;
	return 0;
}

void
gcap_pl_order_destroy(struct gcap_pipeline *pl)
{
	struct pl_order *o = pl->order;

	if (o == NULL)
		return;
	for (unsigned i = 0; i < pl->conf.nqueues; i++) {
		free(o->q[i].xb);
		free(o->q[i].t);
	}
	free(o->tree);
	free(o->key);
	free(o);
	pl->order = NULL;
}

/* Queue qi's oldest buffer is done: back to the queue. */
static void
give_back(struct gcap_pipeline *pl, unsigned qi, struct pl_order_q *q)
{
	struct gcap_xbuf *xb = q->xb[q->head];

	q->bytes -= xb->size;
	xb->len = 0;
	xb->nrec = 0;
	gcap_spsc_push(&pl->q[qi].free, xb);
	q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
	q->n--;
	q->off = 0;
	q->idx = 0;
}

/* Make q->rec the queue's next record: buffers without one more go
 * back. @return whether there is one; -EINVAL for a corrupt buffer. */
static int
load_next(struct gcap_pipeline *pl, unsigned qi, struct pl_order_q *q)
{
	while (q->n > 0) {
		struct gcap_xbuf *xb = q->xb[q->head];

		if (q->idx < xb->nrec)
			return gcap_rec_step(xb->data, xb->len, &q->off, &q->rec,
					     &q->data) > 0 ?
				       1 :
				       -EINVAL;
		give_back(pl, qi, q);
	}
	return 0;
}

/* Take what queue qi has finished. */
static int
take(struct gcap_pipeline *pl, unsigned qi, uint64_t now, bool *any)
{
	struct pl_order_q *q = &pl->order->q[qi];
	struct gcap_xbuf *xb;

	while (q->n < q->cap && (xb = gcap_spsc_pop(&pl->q[qi].full)) != NULL) {
		unsigned at = q->head + q->n;

		if (at >= q->cap)
			at -= q->cap;
		q->xb[at] = xb;
		q->t[at] = now;
		q->bytes += xb->size;
		q->n++;
		*any = true;
		if (q->n == 1) {
			int r = load_next(pl, qi, q);

			if (r < 0)
				return r;
			if (r > 0) {
				pl->order->key[qi] = key_of(pl->order, qi);
				pl->order->nhave++;
				pl->order->stale = true;
			}
		}
	}
	return 0;
}

/* Queue i, which has nothing here: what its RX lcore stored at *field,
 * then what it handed over before that (the acquire pairs with the
 * lcore's release). @return 1: it still has nothing (*v: the value); 0:
 * it brought records; or -EINVAL as take(). */
static int
empty_read(struct gcap_pipeline *pl, unsigned i, atomic_uint_fast64_t *field,
	   uint64_t now, bool *any, uint64_t *v)
{
	int r;

	*v = atomic_load_explicit(field, memory_order_acquire);
	r = take(pl, i, now, any);
	if (r < 0)
		return r;
	return pl->order->q[i].n == 0;
}

/* Whether the queues that have nothing may still bring a record earlier
 * than ts. @return 1: none can (each one's idle mark is at or after ts;
 * *bound gets the earliest mark: no record they bring later is before
 * it); 2: one may; 0: one of them brought records meanwhile (look
 * again); or -EINVAL as take(). */
static int
idle_behind(struct gcap_pipeline *pl, uint64_t ts, uint64_t now, bool *any,
	    uint64_t *bound)
{
	*bound = UINT64_MAX;
	for (unsigned i = 0; i < pl->conf.nqueues; i++) {
		uint64_t wm;
		int r;

		if (pl->order->q[i].n > 0)
			continue;
		r = empty_read(pl, i, &pl->q[i].idle_wm, now, any, &wm);
		if (r <= 0)
			return r;
		if (wm < ts)
			return 2;
		if (wm < *bound)
			*bound = wm;
	}
	return 1;
}

/* Under --backpressure, whether every queue that has nothing is quiet
 * (its RX lcore found the port empty and nothing of the queue on its way
 * here, less than ORDER_QUIET_NS ago): one that is not brings records
 * soon (or its lcore lost its CPU, and its port may be filling), and
 * waiting for them stalls only the queues whose held buffers fill their
 * memory (each queue has its own export memory, batch slots and mbufs),
 * where not waiting would write their later records first. @return 1:
 * every one is quiet; 2: one is not; 0: one brought records meanwhile
 * (look again); or -EINVAL as take(). */
static int
empty_quiet(struct gcap_pipeline *pl, uint64_t now, bool *any)
{
	bool fresh = false;

	for (unsigned i = 0; i < pl->conf.nqueues; i++) {
		uint64_t at;
		int r;

		if (pl->order->q[i].n > 0)
			continue;
		r = empty_read(pl, i, &pl->q[i].quiet_at, now, any, &at);
		if (r <= 0)
			return r;
		/* now is the pass's start, and a pass of a writer behind can
		 * take milliseconds: a mark that looks quiet by it is looked
		 * at again by the clock, read after the mark (else a lcore
		 * that lost its CPU that long ago passes as quiet, and the
		 * records another queue brought in the pass since, stamped
		 * later, go before its port's packets) */
		if (at != 0 && at != UINT64_MAX && !fresh &&
		    !(now > at && now - at >= ORDER_QUIET_NS)) {
			uint64_t t = pl->order->clock();

			if (t > now)
				now = t;
			fresh = true;
		}
		/* (an lcore's clock may be read after the writer's now) */
		if (at == 0 || (now > at && now - at >= ORDER_QUIET_NS))
			return 2;
	}
	return 1;
}

int
gcap_pl_order_run(struct gcap_pipeline *pl, uint64_t now, bool all, bool *any)
{
	struct pl_order *o = pl->order;
	const unsigned nq = pl->conf.nqueues;

	o->soon = false;
	for (unsigned i = 0; i < nq; i++) {
		int r = take(pl, i, now, any);

		if (r < 0)
			return r;
	}
	while (o->nhave > 0) {
		/* no record of a queue with nothing may be later than bound */
		uint64_t bound = UINT64_MAX;
		bool forced = false; /* ... or it may, but waiting is over */

		if (o->stale)
			rebuild(o);
		if (!all && o->nhave < nq) {
			uint64_t oldest = UINT64_MAX;
			bool full = false, soon = false;

			for (unsigned i = 0; i < nq; i++) {
				const struct pl_order_q *q = &o->q[i];

				if (q->n == 0)
					continue;
				if (q->t[q->head] < oldest)
					oldest = q->t[q->head];
				full |= q->bytes >= q->bytes_max || q->n * 2 >= q->cap;
			}
			if (full && pl->conf.backpressure) {
				int r = empty_quiet(pl, now, any);

				if (r < 0)
					return r;
				if (r == 0)
					continue; /* a queue brought records: look again */
				full = r == 1;
				soon = r == 2;
			}
			if (!full && now - oldest < o->window_ns) {
				int r = idle_behind(pl, o->q[o->win].rec.ts_ns, now, any,
						    &bound);

				if (r < 0)
					return r;
				if (r == 0)
					continue; /* a queue brought records: look again */
				if (r == 2) {
					/* it may still bring an earlier record */
					o->soon = soon;
					return 0;
				}
			} else {
				forced = true;
			}
		}

		/* The earliest record goes out, then the next earliest, while
		 * no buffer goes back (what the choice above read stays as it
		 * was) and, with queues that have nothing, the record is not
		 * later than their marks. */
		for (;;) {
			const unsigned best = o->win;
			struct pl_order_q *q = &o->q[best];
			const struct gcap_xbuf *xb = q->xb[q->head];
			const uint64_t ts = q->rec.ts_ns;
			uint64_t ts_max;
			bool same, taken;
			int r = gcap_pl_write_rec(pl, &q->rec, q->data, &taken);

			if (r != 0) {
				/* the record stays, counted by the release, unless
				 * an output took it before another failed */
				if (taken)
					q->idx++;
				return r;
			}
			*any = true;
			if (forced)
				STAT_ADD(pl->order_forced, 1);
			/* the records of the buffer that still come first, as
			 * one run; then its next record here, load_next() for
			 * the rest (the buffer goes back, the next one is
			 * looked at) */
			same = ++q->idx < xb->nrec;
			/* a run where the next record has the same time (a
			 * burst stamped at once): elsewhere looking for one
			 * costs more than it gives */
			if (same && next_ts(xb, q->off) == ts &&
			    run_limit(o, best, bound, &ts_max)) {
				uint32_t k = gcap_pl_write_run(pl, xb, &q->off,
							       xb->nrec - q->idx, ts_max);

				if (k > 0) {
					q->idx += k;
					if (forced)
						STAT_ADD(pl->order_forced, k);
					same = q->idx < xb->nrec;
				}
			}
			if (same)
				r = gcap_rec_step(xb->data, xb->len, &q->off, &q->rec,
						  &q->data) > 0 ?
					    1 :
					    -EINVAL;
			else
				r = load_next(pl, best, q);
			if (r < 0)
				return r;
			if (r == 0)
				o->nhave--;
			/* a record of the same time as the one written (a run
			 * between or not) has its key, so it is the earliest
			 * now: no match changes (ports on the host's clock
			 * stamp a burst at once) */
			if (r == 0 || q->rec.ts_ns != ts)
				replay(o, best, r == 0 ? NO_REC : key_of(o, best));
			if (pl->conf.max_packets != 0 &&
			    atomic_load_explicit(&pl->written, memory_order_relaxed) >=
				    pl->conf.max_packets)
				return 1; /* -c reached */
			if (!same || o->nhave == 0 || o->q[o->win].rec.ts_ns > bound)
				break;
		}
	}
	return 0;
}

void
gcap_pl_order_set_clock(struct gcap_pipeline *pl, uint64_t (*clock)(void))
{
	if (pl->order != NULL)
		pl->order->clock = clock != NULL ? clock : mono_clock;
}

bool
gcap_pl_order_soon(const struct gcap_pipeline *pl)
{
	return pl->order != NULL && pl->order->soon;
}

void
gcap_pl_order_release(struct gcap_pipeline *pl, bool lost)
{
	struct pl_order *o = pl->order;

	if (o == NULL)
		return;
	for (unsigned i = 0; i < pl->conf.nqueues; i++) {
		struct pl_order_q *q = &o->q[i];

		while (q->n > 0) {
			if (lost)
				STAT_ADD(pl->write_failed, q->xb[q->head]->nrec - q->idx);
			give_back(pl, i, q);
		}
	}
	for (unsigned i = 0; i < o->m; i++)
		o->key[i] = NO_REC;
	o->nhave = 0;
	o->stale = true;
}
