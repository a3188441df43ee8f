/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A compressed input decompressed on several threads, where its codec can
 * cut the stream into independent units (zstd frames, lz4 blocks of a
 * frame whose blocks are independent). Each thread in turn cuts the next
 * unit from the stream (one at a time: the cut reads the input), then
 * decodes it into a slot of a ring beside the others. Slots are checked in
 * stream order (a frame's checksum spans its units) and the reader takes
 * them in that order. A frame that does not split is decoded by the
 * thread that cut it, piece by piece, while it holds the stream.
 *
 * One lock and wake-up per unit (64 KB to 8 MB of output), none per
 * record; a thread sleeps while its next slot is still being read.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_thread.h"
#include "capfile_internal.h"

#define PAR_MAX 16u
/* slots for each thread: one being decoded, one waiting to be read */
#define PAR_SLOTS_PER 2u
/* the output of a frame decoded serially, per slot */
#define PAR_PIECE (1u << 20)

enum {
	SL_FREE,
	SL_BUSY,
	SL_DONE,
	SL_READY
};

struct par_slot {
	struct gcap_cf_unit u;
	uint8_t *out;
	size_t out_cap, out_len;
	int state;
	int err; /* the decode's or the check's error: the stream ends here */
	char msg[sizeof(((struct gcap_cf_src *)0)->msg)];
};

struct gcap_cf_par {
	struct gcap_cf_src *s;
	unsigned nthr, nslots;
	pthread_t thr[PAR_MAX];
	void *ctx[PAR_MAX];
	struct par_slot *slot;
	pthread_mutex_t cut_lock; /* the stream: the cut, serial frames */
	pthread_mutex_t lock;     /* everything below, and slot states */
	pthread_cond_t cond;
	uint64_t cut_seq; /* the next unit's number */
	uint64_t chk_seq; /* the next to check */
	uint64_t rd_seq;  /* the next the reader takes */
	uint64_t end_seq; /* the number after the last, once known */
	size_t rd_pos;    /* the reader's position in its slot */
	bool checking;    /* a thread is checking (one at a time) */
	bool ended, stop;
	int end_err; /* what ended the stream, after its last unit */
	char end_msg[sizeof(((struct gcap_cf_src *)0)->msg)];
	uint64_t units, pieces;
};

struct par_arg {
	struct gcap_cf_par *p;
	unsigned i;
};

/* Check the slots that are decoded, in order, by one thread at a time. */
static void
par_check(struct gcap_cf_par *p)
{
	const struct gcap_cf_codec *c = p->s->codec;

	pthread_mutex_lock(&p->lock);
	while (!p->checking && p->chk_seq < p->cut_seq) {
		struct par_slot *sl = &p->slot[p->chk_seq % p->nslots];

		if (sl->state != SL_DONE)
			break;
		p->checking = true;
		pthread_mutex_unlock(&p->lock);
		if (sl->err == 0 && c->check != NULL && sl->u.check != 0) {
			/* the codec's in-order state is this thread's now */
			int r = c->check(p->s, &sl->u, sl->out, sl->out_len, sl->msg,
					 sizeof(sl->msg));

			if (r < 0)
				sl->err = r;
		}
		pthread_mutex_lock(&p->lock);
		sl->state = SL_READY;
		p->chk_seq++;
		p->checking = false;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
}

/* Wait for unit seq's slot to be free (the reader has taken what it held).
 * @return the slot, or NULL when stopping. */
static struct par_slot *
par_slot_wait(struct gcap_cf_par *p, uint64_t seq)
{
	struct par_slot *sl = &p->slot[seq % p->nslots];

	pthread_mutex_lock(&p->lock);
	while (!p->stop && sl->state != SL_FREE)
		pthread_cond_wait(&p->cond, &p->lock);
	if (p->stop)
		sl = NULL;
	pthread_mutex_unlock(&p->lock);
	return sl;
}

/* The stream ended (err: how) after the units cut so far. */
static void
par_end(struct gcap_cf_par *p, int err)
{
	pthread_mutex_lock(&p->lock);
	p->ended = true;
	p->end_seq = p->cut_seq;
	p->end_err = err;
	if (err < 0)
		memcpy(p->end_msg, p->s->msg, sizeof(p->end_msg));
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static int
slot_room(struct par_slot *sl, size_t n)
{
	uint8_t *b;

	if (n <= sl->out_cap)
		return 0;
	if ((b = malloc(n)) == NULL)
		return -ENOMEM;
	free(sl->out);
	sl->out = b;
	sl->out_cap = n;
	return 0;
}

/* A frame that does not split, decoded piece by piece into the next
 * slots; the caller holds the stream. @return 0, or -errno (the stream
 * ends), or 1 when stopping. */
static int
par_serial(struct gcap_cf_par *p)
{
	const struct gcap_cf_codec *c = p->s->codec;

	for (;;) {
		struct par_slot *sl = par_slot_wait(p, p->cut_seq);
		ssize_t n;

		if (sl == NULL)
			return 1;
		if (slot_room(sl, PAR_PIECE) < 0) {
			snprintf(p->s->msg, sizeof(p->s->msg), "%s: out of memory",
				 c->name);
			return -ENOMEM;
		}
		n = c->serial(p->s, sl->out, PAR_PIECE);
		if (n <= 0)
			return (int)n;
		sl->u.check = 0; /* the codec checks a serial frame itself */
		sl->out_len = (size_t)n;
		sl->err = 0;
		pthread_mutex_lock(&p->lock);
		sl->state = SL_DONE;
		p->cut_seq++;
		p->pieces++;
		pthread_mutex_unlock(&p->lock);
		par_check(p);
	}
}

static void *
par_main(void *arg)
{
	struct gcap_cf_par *p = ((struct par_arg *)arg)->p;
	void *ctx = p->ctx[((struct par_arg *)arg)->i];
	const struct gcap_cf_codec *c = p->s->codec;

	free(arg);
	for (;;) {
		struct par_slot *sl;
		ssize_t n;
		int r;

		pthread_mutex_lock(&p->cut_lock);
		if (p->ended || __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
			pthread_mutex_unlock(&p->cut_lock);
			break;
		}
		sl = par_slot_wait(p, p->cut_seq);
		if (sl == NULL) {
			pthread_mutex_unlock(&p->cut_lock);
			break;
		}
		r = c->cut(p->s, &sl->u);
		if (r == CF_CUT_SERIAL) {
			r = par_serial(p);
			if (r == 0) {
				/* the frame is in the ring: cut on after it */
				pthread_mutex_unlock(&p->cut_lock);
				continue;
			}
		} else if (r == CF_CUT_UNIT) {
			pthread_mutex_lock(&p->lock);
			sl->state = SL_BUSY;
			p->cut_seq++;
			p->units++;
			pthread_mutex_unlock(&p->lock);
			pthread_mutex_unlock(&p->cut_lock);
			/* the unit is this thread's alone until it is done */
			sl->err = 0;
			sl->out_len = 0;
			if (slot_room(sl, sl->u.out_max) < 0) {
				sl->err = -ENOMEM;
				snprintf(sl->msg, sizeof(sl->msg), "%s: out of memory",
					 c->name);
			} else if (sl->u.out_max > 0 || sl->u.in_len > 0) {
				n = c->decode(ctx, &sl->u, sl->out, sl->msg,
					      sizeof(sl->msg));
				if (n < 0)
					sl->err = (int)n;
				else
					sl->out_len = (size_t)n;
			}
			pthread_mutex_lock(&p->lock);
			sl->state = SL_DONE;
			pthread_mutex_unlock(&p->lock);
			par_check(p);
			continue;
		}
		if (r <= 0) {
			/* every unit cut so far is in the ring: the end follows */
			par_end(p, r);
			pthread_mutex_unlock(&p->cut_lock);
			break;
		}
		/* stopping in a serial frame */
		pthread_mutex_unlock(&p->cut_lock);
		break;
	}
	return NULL;
}

static void
par_free(struct gcap_cf_par *p)
{
	const struct gcap_cf_codec *c = p->s->codec;

	for (unsigned i = 0; i < p->nslots && p->slot != NULL; i++) {
		free(p->slot[i].out);
		free(p->slot[i].u.in);
	}
	for (unsigned i = 0; i < PAR_MAX; i++)
		if (p->ctx[i] != NULL)
			c->ctx_free(p->ctx[i]);
	free(p->slot);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->cut_lock);
	free(p);
}

uint64_t
gcap_cf_par_mem(const struct gcap_cf_codec *k, unsigned n)
{
	n = n > k->par_max ? k->par_max : n;
	n = n > PAR_MAX ? PAR_MAX : n;
	return (uint64_t)n * PAR_SLOTS_PER * (k->unit_in_max + k->unit_out_max);
}

int
gcap_cf_par_start(struct gcap_cf_src *s, unsigned n, char *errbuf)
{
	struct gcap_cf_par *p = calloc(1, sizeof(*p));
	unsigned started = 0;
	int r = 0;

	if (p == NULL)
		return gcap_err(errbuf, ENOMEM, "capture file: out of memory");
	p->s = s;
	p->nthr = n > PAR_MAX ? PAR_MAX : n;
	p->nslots = p->nthr * PAR_SLOTS_PER;
	p->end_seq = UINT64_MAX;
	pthread_mutex_init(&p->cut_lock, NULL);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->slot = calloc(p->nslots, sizeof(*p->slot));
	if (p->slot == NULL)
		goto nomem;
	for (unsigned i = 0; i < p->nthr; i++)
		if ((p->ctx[i] = s->codec->ctx_new()) == NULL)
			goto nomem;
	s->par = p;
	for (; started < p->nthr; started++) {
		struct par_arg *a = malloc(sizeof(*a));

		if (a == NULL) {
			r = ENOMEM;
			break;
		}
		a->p = p;
		a->i = started;
		r = gcap_thread_start(&p->thr[started], NULL, par_main, a);
		if (r != 0) {
			free(a);
			break;
		}
	}
	if (started == p->nthr)
		return 0;
	p->nthr = started; /* the threads started are joined by the stop */
	gcap_cf_par_stop(s);
	return gcap_err(errbuf, r, "capture file: cannot start a thread: %s",
			strerror(r));
nomem:
	par_free(p);
	return gcap_err(errbuf, ENOMEM, "capture file: out of memory");
}

ssize_t
gcap_cf_par_read(struct gcap_cf_src *s, uint8_t *buf, size_t len)
{
	struct gcap_cf_par *p = s->par;
	struct par_slot *sl;
	size_t n;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (p->rd_seq == p->end_seq) {
			int err = p->end_err;

			if (err < 0)
				memcpy(s->rmsg, p->end_msg, sizeof(s->rmsg));
			pthread_mutex_unlock(&p->lock);
			return err;
		}
		sl = &p->slot[p->rd_seq % p->nslots];
		if (sl->state != SL_READY) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		if (sl->err < 0) {
			/* the stream ends at a damaged unit: nothing after it */
			memcpy(s->rmsg, sl->msg, sizeof(s->rmsg));
			pthread_mutex_unlock(&p->lock);
			return sl->err;
		}
		if (sl->out_len > p->rd_pos)
			break;
		/* an empty unit (a frame's end) */
		sl->state = SL_FREE;
		p->rd_seq++;
		p->rd_pos = 0;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	/* a ready slot is the reader's until it is given back */
	n = sl->out_len - p->rd_pos < len ? sl->out_len - p->rd_pos : len;
	memcpy(buf, sl->out + p->rd_pos, n);
	p->rd_pos += n;
	if (p->rd_pos == sl->out_len) {
		pthread_mutex_lock(&p->lock);
		sl->state = SL_FREE;
		p->rd_seq++;
		p->rd_pos = 0;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
	}
	return (ssize_t)n;
}

void
gcap_cf_par_stop(struct gcap_cf_src *s)
{
	struct gcap_cf_par *p = s->par;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthr; i++)
		pthread_join(p->thr[i], NULL);
	s->par = NULL;
	par_free(p);
}

unsigned
gcap_cf_par_counts(const struct gcap_cf_src *s, uint64_t *units, uint64_t *pieces)
{
	struct gcap_cf_par *p = s->par;

	pthread_mutex_lock(&p->lock);
	*units = p->units;
	*pieces = p->pieces;
	pthread_mutex_unlock(&p->lock);
	return p->nthr;
}
