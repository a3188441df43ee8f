/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture as a service (see service.h). systemd's notify messages
 * go only where NOTIFY_SOCKET is set, so a run outside systemd pays
 * nothing, and never wait: sd_notify() blocks while the socket's queue
 * is full, and a supervisor that does not read it (a stale socket, a
 * stalled manager) must not stop the main loop, which serves the stop.
 * The watchdog is fed from the main loop only while the pipeline's
 * threads move, never by a timer of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_log.h>
#include <systemd/sd-daemon.h>

#include "app_err.h"
#include "report.h"
#include "run.h"
#include "service.h"

/* the pid a pidfile holds, or 0 (none, not a pid, a link, not a
 * regular file: a FIFO planted there must not hang the start) */
static pid_t
pidfile_pid(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;
	long v;
	char *end;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno != 0 || end == buf || (*end != '\n' && *end != '\0') || v <= 0 ||
	    v > INT_MAX)
		return 0;
	return (pid_t)v;
}

/* What is at path stands in the way of ours: gone (1) where it is a
 * link, not a regular file, or a stale pidfile (no process holds its
 * lock: this one takes it, so no other start can claim it, and removes
 * it only while it is still the one at path); 0 where a running process
 * holds it; -1 and errno on failure. */
static int
pidfile_clear(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st, now;
	int r = 1;

	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		/* a link (not followed), or a file we may not read */
		return unlink(path) == 0 || errno == ENOENT ? 1 : -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (flock(fd, LOCK_EX | LOCK_NB) != 0)
			r = errno == EWOULDBLOCK ? 0 : -1;
		else if (lstat(path, &now) != 0 || now.st_dev != st.st_dev ||
			 now.st_ino != st.st_ino)
			r = 1; /* replaced meanwhile: look again */
		else if (unlink(path) != 0 && errno != ENOENT)
			r = -1;
	} else if (unlink(path) != 0 && errno != ENOENT) {
		r = -1;
	}
	int e = errno;

	close(fd);
	errno = e;
	return r;
}

int
app_pidfile_write(struct app_service *s, const char *path)
{
	char tmp[PATH_MAX];
	int fd, r = -1, e = 0;

	s->pidfd = -1;
	if (path == NULL)
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -app_err("--pidfile %s: name too long", path);
	/* ours, whole and locked before anyone can see it: a lock held for
	 * the process's life says whether a pidfile's process runs (a stale
	 * file's pid may be another process's by now); linked in at path
	 * only where nothing is there, so two starts cannot both pass, and
	 * no file there (a link, another's) is ever written */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -app_err("--pidfile %s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 ||
	    dprintf(fd, "%ld\n", (long)getpid()) <= 0 || fchmod(fd, 0644) != 0)
		e = errno;
	for (int tries = 0; e == 0 && tries < 8; tries++) {
		if (link(tmp, path) == 0) {
			r = 0;
			break;
		}
		if (errno != EEXIST) {
			e = errno;
			break;
		}
		int c = pidfile_clear(path);

		if (c == 0) {
			(void)unlink(tmp);
			close(fd);
			return -app_err("--pidfile %s: process %ld is running", path,
					(long)pidfile_pid(path));
		}
		if (c < 0)
			e = errno;
	}
	(void)unlink(tmp);
	if (r != 0) {
		close(fd);
		return -app_err("--pidfile %s: %s", path,
				e != 0 ? strerror(e) : "another start keeps taking it");
	}
	s->pidfile = strdup(path);
	if (s->pidfile == NULL) {
		(void)unlink(path);
		close(fd);
		return -app_err("out of memory");
	}
	s->pidfd = fd;
	/* a signal during set-up ends the process: the file goes with it */
	app_signals_remove_at_setup_stop(path);
	return 0;
}

void
app_pidfile_remove(struct app_service *s)
{
	if (s->pidfile == NULL)
		return;
	/* removed before its lock goes: a start meanwhile finds it held (and
	 * refuses), or no file */
	if (pidfile_pid(s->pidfile) == getpid() && unlink(s->pidfile) != 0)
		app_err("warning: cannot remove --pidfile %s: %s", s->pidfile,
			strerror(errno));
	free(s->pidfile);
	s->pidfile = NULL;
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = -1;
}

/* The notify socket (NOTIFY_SOCKET: a path, or @ for the abstract
 * namespace), its datagram socket non-blocking; false where unset. */
static bool
notify_open(struct app_service *s)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	size_t n = ns != NULL ? strlen(ns) : 0;

	if (n < 2 || (ns[0] != '/' && ns[0] != '@') || n > sizeof(s->nsa.sun_path))
		return false;
	memset(&s->nsa, 0, sizeof(s->nsa));
	s->nsa.sun_family = AF_UNIX;
	memcpy(s->nsa.sun_path, ns, n);
	if (ns[0] == '@')
		s->nsa.sun_path[0] = '\0';
	s->nsa_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	s->nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	return s->nfd >= 0;
}

/* One message; dropped where the socket's queue is full (EAGAIN): the
 * next status or watchdog message says as much. */
__attribute__((format(printf, 2, 3))) static void
notify(struct app_service *s, const char *fmt, ...)
{
	char msg[640];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	(void)sendto(s->nfd, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1,
		     MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&s->nsa,
		     s->nsa_len);
}

static void
send_status(struct app *a, double dt)
{
	char st[512];

	app_report_status(a, a->svc.prev, dt, st, sizeof(st));
	notify(&a->svc, "STATUS=%s", st);
}

void
app_service_ready(struct app *a)
{
	struct app_service *s = &a->svc;
	uint64_t usec = 0;

	s->nfd = -1;
	s->prev = calloc(1, sizeof(*s->prev));
	s->notify = s->prev != NULL && notify_open(s);
	if (!s->notify)
		return;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0 && a->pl != NULL) {
		s->beats = calloc(a->nqueues + 1, sizeof(*s->beats));
		if (s->beats != NULL)
			s->wd_ns = usec * 1000u;
	}
	s->last_pet = s->last_stat = a->t_start;
	notify(s, "READY=1\nMAINPID=%ld", (long)getpid());
	send_status(a, 1);
}

/* Whether every RX lcore and the writer turned their loops since the
 * last pet; the beats seen become the new marks. A -r run (no ports) has
 * the writer's alone: its reader may wait on a quiet pipe for ever, as it
 * should, and one stuck in the executor is the executor's watchdog's. */
static bool
progressed(struct app *a)
{
	struct app_service *s = &a->svc;
	const unsigned nq = a->nports > 0 ? a->nqueues : 0;

	for (unsigned q = 0; q <= nq; q++)
		if (gcap_pipeline_beat(a->pl, q < nq ? q : UINT_MAX) == s->beats[q])
			return false;
	for (unsigned q = 0; q <= nq; q++)
		s->beats[q] = gcap_pipeline_beat(a->pl, q < nq ? q : UINT_MAX);
	return true;
}

void
app_service_tick(struct app *a, uint64_t now)
{
	struct app_service *s = &a->svc;

	if (!s->notify)
		return;
	if (now - s->last_stat >= 1000000000u) {
		send_status(a, (double)(now - s->last_stat) / 1e9);
		s->last_stat = now;
	}
	/* fed at most four times an interval, and only on progress */
	if (s->wd_ns > 0 && now - s->last_pet >= s->wd_ns / 4 && progressed(a)) {
		notify(s, "WATCHDOG=1");
		s->last_pet = now;
	}
}

void
app_service_stopping(struct app *a)
{
	if (a->svc.notify)
		notify(&a->svc, "STOPPING=1\nSTATUS=stopping: draining the pipeline");
}

/* DPDK's messages to the journal: each line with its level (RTE_LOG_EMERG
 * 1 .. RTE_LOG_DEBUG 8 are syslog's 0 .. 7). */
static ssize_t
dpdk_log_write(void *cookie, const char *buf, size_t size)
{
	int lvl = rte_log_cur_msg_loglevel();
	char pre[3] = { '<', (char)('0' + (lvl >= 1 && lvl <= 8 ? lvl - 1 : 6)), '>' };

	(void)cookie;
	for (size_t i = 0; i < size;) {
		const char *nl = memchr(buf + i, '\n', size - i);
		size_t n = nl != NULL ? (size_t)(nl - (buf + i)) + 1 : size - i;
		struct iovec iov[2] = { { pre, sizeof(pre) }, { (void *)(buf + i), n } };

		if (writev(STDERR_FILENO, iov, 2) < 0)
			break;
		i += n;
	}
	return (ssize_t)size;
}

void
app_service_dpdk_log(void)
{
	cookie_io_functions_t io = { .write = dpdk_log_write };
	FILE *f;

	if (!app_err_journal())
		return;
	/* the stream lives as long as DPDK's logging: the process */
	f = fopencookie(NULL, "w", io);
	if (f != NULL && rte_openlog_stream(f) != 0)
		fclose(f);
}

void
app_service_free(struct app_service *s)
{
	free(s->beats);
	free(s->prev);
	s->beats = NULL;
	s->prev = NULL;
	if (s->notify && s->nfd >= 0)
		close(s->nfd);
	s->nfd = -1;
	s->notify = false;
}
