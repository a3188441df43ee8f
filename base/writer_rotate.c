/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * When an output's file ends and the next begins: tcpdump's rotation
 * (-C by size before a record, -G by time with -W's stop, SIGHUP) and
 * dumpcap's (-b: packets:, filesize: right after the record that fills
 * a file, duration:, interval:), -a's ends, and the switch itself: the
 * closed file's ISBs, its -z, the next file's open. The names are
 * writer_name.c's; the records' path that asks is writer.c's.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "writer_internal.h"

/* Done, as tcpdump exits at -W with -G: the file stays open so that close
 * can still append its blocks (pcapng ISBs). @return -ECANCELED, or the
 * flush's error. */
int
gcap_wr_stop_done(struct gcap_writer *w)
{
	int rc = gcap_wr_flush(w);

	w->done = true;
	return rc != 0 ? rc : -ECANCELED;
}

/* A file that rotation closes gets its ISBs, from stats_fn. */
static int
put_rot_stats(struct gcap_writer *w)
{
	if (w->stats_fn == NULL || w->fmt->put_stats == NULL || w->fd < 0)
		return 0;
	memset(w->rot_st, 0, w->nifs * sizeof(*w->rot_st));
	w->stats_fn(w->stats_arg, w->rot_st, w->nifs);
	return w->fmt->put_stats(w, w->rot_st, w->clock_ns);
}

/* Close the current file and open the next one under name (cnt, chars).
 * keep: where that is the current file's own name, the file goes on
 * (-G's name without a time format finer than the period, or SIGHUP twice
 * in its second): reopening it would cut what it holds. A ring (-C -W)
 * reopens its names on purpose. */
static int
next_file(struct gcap_writer *w, unsigned cnt, int chars, bool keep)
{
	char eb[GCAP_ERRBUF_SIZE], closed[GCAP_WR_NAME_MAX], name[GCAP_WR_NAME_MAX];
	int rc;

	rc = gcap_wr_name_next(w, cnt, chars, name);
	if (rc != 0)
		return gcap_wr_fail(w, -rc,
				    "cannot make the next file name from "
				    "'%s': %s",
				    w->tmpl, strerror(-rc));
	if (keep && strcmp(name, w->cur) == 0)
		return 0;
	if (w->stop_files != 0 && ++w->nrotated >= w->stop_files)
		return gcap_wr_stop_done(w); /* -a files: that many are written */
	rc = put_rot_stats(w);

	if (rc == 0)
		rc = gcap_wr_file_close(w);
	if (rc != 0)
		return rc;
	if (w->closed_fn != NULL) {
		memcpy(closed, w->cur, strlen(w->cur) + 1);
		w->closed_fn(w->closed_arg, closed);
	}
	gcap_wr_name_expire(w);
	memcpy(w->cur, name, strlen(name) + 1);
	rc = gcap_wr_file_open(w, eb);
	if (rc != 0)
		return gcap_wr_fail(w, -rc, "%s", eb);
	gcap_wr_name_opened(w);
	return 0;
}

/* dumpcap's -b: the next file, numbered on, whichever condition ended
 * the last one; -b duration: counts from its start. */
static int
dc_next(struct gcap_writer *w)
{
	w->period_ns = w->clock_ns;
	return next_file(w, 0, 0, false);
}

/* Whether the current period is over: rotate_secs after its start (-G,
 * -b duration:) or at the next multiple of the interval since the epoch
 * (-b interval:), whichever comes first (dumpcap switches at either);
 * by differences, so no sum wraps. */
static inline bool
period_over(const struct gcap_writer *w)
{
	if (w->clock_ns < w->period_ns)
		return false;
	uint64_t in = w->clock_ns - w->period_ns;

	return (w->rotate_ns != 0 && in >= w->rotate_ns) ||
	       (w->interval_ns != 0 &&
		in >= w->interval_ns - w->period_ns % w->interval_ns);
}

/* -G, -b duration:/interval:: a new file once the period is over (or
 * now, with force). */
int
gcap_wr_time_rotate(struct gcap_writer *w, bool force)
{
	if (!force && (!gcap_wr_timed(w) || !period_over(w)))
		return 0;
	if (gcap_wr_dc(w))
		return dc_next(w);
	/* -W counts -G's periods that ran out: a file SIGHUP starts (force)
	 * starts a period anew and does not end the capture */
	if (!force)
		w->gflag_count++;
	if (!force && !gcap_wr_numbered(w) && w->max_files > 0 &&
	    w->gflag_count >= w->max_files)
		return gcap_wr_stop_done(w); /* done, as tcpdump exits here */
	/* the new period's names are the last one's (FILE without a time
	 * format finer than the period, SIGHUP twice in its second): its
	 * files go on, -C's numbers too; opening its first name again would
	 * cut what that file holds (SIGHUP still starts -C's next file). A
	 * period counts towards -W all the same (-G 60 -W 1: a minute) */
	char was[PATH_MAX], now[PATH_MAX];

	if (gcap_wr_name_base(w, w->period_ns, was) == 0 &&
	    gcap_wr_name_base(w, w->clock_ns, now) == 0 && strcmp(was, now) == 0) {
		w->period_ns = w->clock_ns;
		return force && gcap_wr_numbered(w) ? gcap_wr_size_rotate(w, true) : 0;
	}
	/* tcpdump: the new period starts now, the -C number restarts */
	w->period_ns = w->clock_ns;
	w->cflag_count = 0;
	return next_file(w, 0, gcap_wr_numbered(w) ? w->wchars : 0, true);
}

/* -C: a new file when the current one is larger than rotate_bytes; -b
 * packets:N when it holds N records; now, with force. */
int
gcap_wr_size_rotate(struct gcap_writer *w, bool force)
{
	if (!force && (w->rotate_bytes == 0 || w->file_off + w->len <= w->rotate_bytes) &&
	    (w->rotate_packets == 0 || w->file_recs < w->rotate_packets))
		return 0;
	if (gcap_wr_dc(w))
		return dc_next(w);
	w->cflag_count++;
	if (w->max_files > 0 && w->cflag_count >= w->max_files)
		w->cflag_count = 0;
	return next_file(w, w->cflag_count, w->wchars, false);
}

void
gcap_wr_post_end(struct gcap_writer *w)
{
	if (w->stop_bytes != 0 && w->file_off + w->len >= w->stop_bytes)
		(void)gcap_wr_stop_done(w);
	else
		(void)dc_next(w);
}
