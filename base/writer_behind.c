/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer's write(2)s on a thread of its own (gcap_writer_conf's
 * write_behind): the caller's thread frames records into one buffer of a
 * small ring while the thread writes the ones before it, so the kernel's
 * copy into the page cache (a quarter to two fifths of a writer's time on
 * small records onto tmpfs) leaves the thread that merges and frames.
 * One lock and wake-up per buffer, none per record.
 *
 * The file stays what the synchronous path makes it: the thread writes
 * the buffers in order, and when a write fails it cuts the file back to
 * the last whole item, as writer_io.c does, and drops every later buffer.
 * The caller's thread learns of it at its next hand-over, waits until the
 * thread holds nothing, takes what never reached the file off the counts
 * and makes the error sticky. Everything else that touches the file
 * (open, close, the header, items larger than a buffer) runs on the
 * caller's thread while the ring is empty.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_thread.h"
#include "writer_internal.h"

/* the one being filled and up to 3 being written; 2 MiB each, a huge
 * page's size: on a tmpfs mounted with huge pages the I/O thread then put
 * a third more bytes a second into the file than with 256 KiB buffers
 * (bench/writer_diag.sh, docs/benchmarks.md) */
#define WB_BUFS 4u
#define WB_BUF_SIZE (2u << 20)

struct gcap_wr_behind {
	pthread_t thr;
	pthread_mutex_t lock;
	pthread_cond_t cond;    /* a buffer handed over, one written, or stop */
	uint8_t *buf[WB_BUFS];  /* the allocations (w->mem while filled) */
	uint8_t *data[WB_BUFS]; /* where each handed-over buffer's bytes start */
	size_t len[WB_BUFS];
	uint32_t recs[WB_BUFS];
	uint64_t at[WB_BUFS]; /* the file offset (after w->base) it starts at */
	unsigned head, tail;  /* buffers handed over, buffers written */
	bool stop;
	/* the thread's first failure, until the caller's thread takes it */
	int err;
	uint64_t err_off;    /* the file's length after the cut, from w->base */
	uint64_t lost_recs;  /* records handed over that are not in the file */
	uint64_t lost_bytes; /* and their bytes */
	bool err_taken;
};

/* Write buffer k, or count it lost after a failure. Thread side. */
static void
write_one(struct gcap_writer *w, struct gcap_wr_behind *b, unsigned k)
{
	struct iovec iov = { b->data[k], b->len[k] };
	uint32_t kept = 0;
	size_t done = 0, whole = 0;
	int rc = b->err;

	if (rc == 0) {
		rc = gcap_wr_writev_all(w->fd, &iov, 1, &done);
		if (rc != 0) {
			whole = gcap_wr_whole_prefix(w->fmt, b->data[k], b->len[k], done,
						     &kept);
			gcap_wr_cut_back(w, b->at[k] + whole);
		}
	}
	if (rc == 0)
		return;
	pthread_mutex_lock(&b->lock);
	if (b->err == 0) {
		b->err = rc;
		b->err_off = b->at[k] + whole;
	}
	b->lost_recs += b->recs[k] - kept;
	b->lost_bytes += b->len[k] - whole;
	pthread_mutex_unlock(&b->lock);
}

static void *
behind_main(void *arg)
{
	struct gcap_writer *w = arg;
	struct gcap_wr_behind *b = w->behind;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (b->tail == b->head && !b->stop)
			pthread_cond_wait(&b->cond, &b->lock);
		if (b->tail == b->head)
			break;
		/* w->fd, fd_reg and base change only while the ring is
		 * empty, so they hold for every buffer in it */
		unsigned k = b->tail % WB_BUFS;

		pthread_mutex_unlock(&b->lock);
		write_one(w, b, k);
		pthread_mutex_lock(&b->lock);
		b->tail++;
		pthread_cond_broadcast(&b->cond);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

size_t
gcap_wr_behind_cap(size_t hdr_len)
{
	return hdr_len > WB_BUF_SIZE ? hdr_len : WB_BUF_SIZE;
}

int
gcap_wr_behind_start(struct gcap_writer *w, char *errbuf)
{
	struct gcap_wr_behind *b = calloc(1, sizeof(*b));
	sigset_t all, old;
	int r;

	if (b == NULL)
		return gcap_err(errbuf, ENOMEM, "writer: out of memory");
	/* buffer 0 is the one gcap_writer_open made */
	b->buf[0] = w->mem;
	for (unsigned i = 1; i < WB_BUFS; i++) {
		void *m;

		if (posix_memalign(&m, GCAP_WR_ALIGN, w->cap + GCAP_WR_ALIGN) != 0) {
			for (unsigned j = 1; j < i; j++)
				free(b->buf[j]);
			free(b);
			return gcap_err(errbuf, ENOMEM, "writer: out of memory");
		}
		b->buf[i] = m;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	w->behind = b;
	/* the process's signals go to its other threads; SIGURG stays, so
	 * that gcap_writer_interrupt can break a write blocked on a stalled
	 * reader, and so do those its own writes raise (SIGPIPE, SIGXFSZ:
	 * as on the caller's thread) and the faults, which a crash handler
	 * reports */
	sigfillset(&all);
	sigdelset(&all, SIGURG);
	sigdelset(&all, SIGPIPE);
	sigdelset(&all, SIGXFSZ);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGABRT);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = gcap_thread_start(&b->thr, NULL, behind_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		w->behind = NULL;
		for (unsigned i = 1; i < WB_BUFS; i++)
			free(b->buf[i]);
		pthread_cond_destroy(&b->cond);
		pthread_mutex_destroy(&b->lock);
		free(b);
		return gcap_err(errbuf, r, "writer: cannot start its thread: %s",
				strerror(r));
	}
	pthread_setname_np(b->thr, "gcap-writer-io"); /* for top -H */
	return 0;
}

/* Take the thread's failure into the writer: the counts lose what never
 * reached the file, the file's length is where the cut left it. Called
 * with the lock held and the ring empty. */
static int
take_error(struct gcap_writer *w, struct gcap_wr_behind *b)
{
	if (b->err == 0 || b->err_taken)
		return w->err;
	b->err_taken = true;
	w->nrec -= b->lost_recs;
	w->nbytes -= b->lost_bytes;
	w->file_off = b->err_off;
	return gcap_wr_fail_write(w, b->err);
}

/* Whether the caller must wait: for a free buffer; after a failure, or
 * when it drains, for an empty ring. With the lock held. */
static bool
must_wait(const struct gcap_wr_behind *b, bool drain)
{
	return b->tail != b->head &&
	       (drain || b->err != 0 || b->head - b->tail == WB_BUFS);
}

int
gcap_wr_behind_hand(struct gcap_writer *w, enum gcap_wr_hand why)
{
	struct gcap_wr_behind *b = w->behind;
	const bool drain = why == GCAP_WR_DRAIN;
	int rc;

	pthread_mutex_lock(&b->lock);
	if (w->len > 0 && w->err == 0 && b->err == 0) {
		unsigned k = b->head % WB_BUFS;

		b->data[k] = w->buf;
		b->len[k] = w->len;
		b->recs[k] = w->buf_recs;
		b->at[k] = w->file_off;
		b->head++;
		w->file_off += w->len;
	} else if (w->len > 0 && b->err != 0) {
		/* filled after the thread failed: never written */
		b->lost_recs += w->buf_recs;
		b->lost_bytes += w->len;
	}
	/* a sleeping thread is woken once half the ring waits for it, not
	 * for each buffer (a wake-up interrupts another CPU), before this
	 * one waits for it, and when records are to reach the file soon */
	if (must_wait(b, drain) || b->head - b->tail >= WB_BUFS / 2 ||
	    (why == GCAP_WR_PUSH && b->head != b->tail))
		pthread_cond_broadcast(&b->cond);
	/* a full ring is the storage falling behind the records: counted (a
	 * drain's wait, for the last buffers at a flush, rotation or close,
	 * is the price of having them in the file then, so it is not) */
	const bool full = !drain && b->head - b->tail == WB_BUFS;
	const uint64_t t0 = full ? gcap_wr_clock_ns(CLOCK_MONOTONIC) : 0;

	while (must_wait(b, drain))
		pthread_cond_wait(&b->cond, &b->lock);
	if (full) {
		__atomic_store_n(&w->io_waits, w->io_waits + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&w->io_wait_ns,
				 w->io_wait_ns + (gcap_wr_clock_ns(CLOCK_MONOTONIC) - t0),
				 __ATOMIC_RELAXED);
	}
	rc = b->err != 0 ? take_error(w, b) : w->err;
	pthread_mutex_unlock(&b->lock);
	w->mem = b->buf[b->head % WB_BUFS];
	gcap_wr_buf_empty(w);
	return rc;
}

void
gcap_wr_behind_kick(const struct gcap_writer *w)
{
	if (w->behind != NULL)
		pthread_kill(w->behind->thr, SIGURG);
}

void
gcap_wr_behind_stop(struct gcap_writer *w)
{
	struct gcap_wr_behind *b = w->behind;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->lock);
	b->stop = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->thr, NULL);
	/* buffer 0 goes back to the writer, which frees it */
	for (unsigned i = 1; i < WB_BUFS; i++)
		free(b->buf[i]);
	w->mem = b->buf[0];
	gcap_wr_buf_empty(w);
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
	free(b);
	w->behind = NULL;
}
