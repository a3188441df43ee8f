/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer's output to one file: its buffer, write(2), the cut back to
 * the last whole item when a write fails, the open (header first) and the
 * close. Rotation, names and the API are writer.c's; the bytes of headers,
 * records and blocks come from the format (w->fmt).
 *
 * The buffer only ever holds whole items (records, close-time blocks), so
 * when a write fails part way the writer can walk the buffer to the last
 * item that reached the file whole and ftruncate() the file back to it: a
 * file is always a valid capture up to its last whole record. Items larger
 * than the buffer are written directly from the caller's memory (writev)
 * after the buffer is flushed, with the same rollback. The write(2)s and
 * the cut back themselves are writer_out.c's, shared with the writer's
 * I/O thread (writer_behind.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gpucap/gcap_outfile.h"
#include "writer_internal.h"

/*
 * A write failed after `done` more bytes than file_off reached the file,
 * `whole` of which form whole items. Cut the file back to them.
 */
static void
roll_back(struct gcap_writer *w, uint64_t whole)
{
	gcap_wr_cut_back(w, w->file_off + whole);
	w->file_off += whole;
}

int
gcap_wr_flush(struct gcap_writer *w)
{
	struct iovec iov;
	size_t done;
	int rc;

	if (w->behind != NULL && w->fd >= 0)
		return gcap_wr_behind_hand(w, GCAP_WR_DRAIN);
	if (w->err != 0)
		return w->err;
	if (w->len == 0 || w->fd < 0)
		return 0;
	iov.iov_base = w->buf;
	iov.iov_len = w->len;
	rc = gcap_wr_writev_all(w->fd, &iov, 1, &done);
	if (rc == 0) {
		w->file_off += w->len;
		gcap_wr_buf_empty(w);
		return 0;
	}
	/* keep the whole items that made it, forget the rest */
	uint32_t kept;
	size_t whole = gcap_wr_whole_prefix(w->fmt, w->buf, w->len, done, &kept);

	w->nrec -= w->buf_recs - kept;
	w->nbytes -= w->len - whole;
	roll_back(w, whole);
	gcap_wr_buf_empty(w);
	return gcap_wr_fail_write(w, rc);
}

/* The buffer is full: write it, or hand it to the writer's thread and
 * take an empty one. */
static int
make_room(struct gcap_writer *w)
{
	if (w->behind != NULL && w->fd >= 0)
		return gcap_wr_behind_hand(w, GCAP_WR_FULL);
	return gcap_wr_flush(w);
}

int
gcap_wr_emit(struct gcap_writer *w, struct iovec *iov, int n, size_t total, bool rec)
{
	int rc;

	if (w->len + total > w->cap) {
		/* an item larger than a buffer goes from the caller's
		 * memory, after every buffer before it */
		rc = total > w->cap ? gcap_wr_flush(w) : make_room(w);
		if (rc != 0)
			return rc;
	}
	if (total > w->cap) {
		size_t done;

		rc = gcap_wr_writev_all(w->fd, iov, n, &done);
		if (rc != 0) {
			roll_back(w, 0);
			return gcap_wr_fail_write(w, rc);
		}
		w->file_off += total;
		gcap_wr_buf_empty(w);
	} else {
		for (int i = 0; i < n; i++) {
			memcpy(w->buf + w->len, iov[i].iov_base, iov[i].iov_len);
			w->len += iov[i].iov_len;
		}
		w->buf_recs += rec;
	}
	w->nrec += rec;
	w->nbytes += total;
	return 0;
}

int
gcap_wr_put_rec(struct gcap_writer *w, const struct gcap_rec *rec, const void *data)
{
	uint32_t incl = rec->caplen < w->snaplen ? rec->caplen : w->snaplen;
	struct gcap_wr_frame f;
	struct iovec iov[3];
	size_t total;
	int n, rc;

	/* the time as the format writes it (writer_ts.c) */
	rc = w->fmt->rec_frame(w, rec, gcap_wr_ts(w, rec), incl, &f);
	if (rc != 0)
		return rc;
	total = f.hdr_len + (size_t)incl + f.trl_len;
	if (w->len + total <= w->cap) {
		/* the common case: straight into the buffer */
		uint8_t *p = w->buf + w->len;

		memcpy(p, f.hdr, f.hdr_len);
		memcpy(p + f.hdr_len, data, incl);
		if (f.trl_len > 0) /* pcapng's padding and options; pcap has none */
			memcpy(p + f.hdr_len + incl, f.trl, f.trl_len);
		gcap_wr_took(w, rec, total);
		return 0;
	}
	/* straight to the file: counted as gcap_wr_took counts, the
	 * rest by gcap_wr_emit */
	w->ifs[w->fmt->per_if ? rec->port : 0].nrec++;
	w->file_recs++;
	n = 0;
	iov[n++] = (struct iovec){ f.hdr, f.hdr_len };
	iov[n++] = (struct iovec){ (void *)(uintptr_t)data, incl };
	if (f.trl_len > 0)
		iov[n++] = (struct iovec){ f.trl, f.trl_len };
	return gcap_wr_emit(w, iov, n, total, true);
}

int
gcap_wr_file_open(struct gcap_writer *w, char *errbuf)
{
	struct stat st;
	int rc;

	w->file_off = 0;
	w->file_recs = 0;
	w->created = false;
	w->base = 0;
	gcap_wr_buf_empty(w);
	if (w->is_stdout) {
		w->fd = STDOUT_FILENO;
		w->fd_reg = fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode);
		if (w->fd_reg) {
			w->base = lseek(w->fd, 0, SEEK_CUR);
			if (w->base < 0)
				w->fd_reg = false;
		}
	} else {
		/* a symbolic link planted in /tmp is refused, not followed */
		w->fd = gcap_open_output(w->cur, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
					 w->file_mode, errbuf);
		if (w->fd >= 0)
			w->created = true;
		else if (w->fd == -EEXIST && gcap_wr_dc(w))
			/* a name of dumpcap's is new: what is there is another
			 * capture's (the same -w within that second) */
			(void)gcap_err(errbuf, EEXIST,
				       "cannot write '%s': it exists (another capture "
				       "into the same -w within that second?), not "
				       "written over",
				       w->cur);
		else if (w->fd == -EEXIST)
			w->fd = gcap_open_output(w->cur,
						 O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
						 w->file_mode, errbuf);
		/* the file is the user's the run drops to (tcpdump -Z) */
		if (w->fd >= 0 && w->created && w->set_owner &&
		    fchown(w->fd, w->owner, w->group) != 0) {
			rc = gcap_err(errbuf, errno,
				      "cannot give '%s' to uid %u gid %u: %s", w->cur,
				      (unsigned)w->owner, (unsigned)w->group,
				      strerror(errno));
			close(w->fd);
			(void)unlink(w->cur);
			w->fd = -1;
			return rc;
		}
		if (w->fd < 0) {
			rc = w->fd;
			w->fd = -1;
			return rc;
		}
		w->fd_reg = fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode);
	}

	/* the header reaches the file before any record: a crash keeps it */
	uint64_t nbytes = w->nbytes;
	struct iovec iov;
	size_t done;

	gcap_wr_buf_empty(w); /* w->base is known now */
	w->fmt->put_hdr(w, w->buf);
	w->len = w->hdr_len;
	w->nbytes += w->hdr_len;
	iov.iov_base = w->buf;
	iov.iov_len = w->len;
	rc = gcap_wr_writev_all(w->fd, &iov, 1, &done);
	if (rc == 0) {
		w->file_off = w->len;
		gcap_wr_buf_empty(w);
		return 0;
	}
	w->len = 0;
	w->nbytes = nbytes;
	if (!w->is_stdout) {
		if (w->created)
			(void)unlink(w->cur);
		else if (w->fd_reg)
			(void)!ftruncate(w->fd, 0);
		close(w->fd);
	}
	w->fd = -1;
	return gcap_err(errbuf, -rc, "cannot write '%s': %s", w->cur, strerror(-rc));
}

int
gcap_wr_file_close(struct gcap_writer *w)
{
	int rc = gcap_wr_flush(w);

	if (w->fd >= 0 && !w->is_stdout) {
		if (close(w->fd) != 0 && rc == 0)
			rc = gcap_wr_fail(w, errno, "closing '%s' failed: %s", w->cur,
					  strerror(errno));
	}
	w->fd = -1;
	return rc;
}
