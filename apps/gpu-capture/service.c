/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture as a service (see service.h). sd_notify() does nothing
 * where NOTIFY_SOCKET is unset, so a run outside systemd pays nothing;
 * the watchdog is fed from the main loop only while the pipeline's
 * threads move, never by a timer of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
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

int
app_pidfile_write(struct app_service *s, const char *path)
{
	char tmp[PATH_MAX];
	pid_t old;
	int fd, n;

	if (path == NULL)
		return 0;
	old = pidfile_pid(path);
	if (old > 0 && old != getpid() && (kill(old, 0) == 0 || errno == EPERM))
		return -app_err("--pidfile %s: process %ld is running", path, (long)old);
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -app_err("--pidfile %s: name too long", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -app_err("--pidfile %s: %s", path, strerror(errno));
	n = dprintf(fd, "%ld\n", (long)getpid());
	if (n <= 0 || fchmod(fd, 0644) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		int e = errno;

		(void)unlink(tmp);
		return -app_err("--pidfile %s: %s", path, strerror(e));
	}
	s->pidfile = strdup(path);
	if (s->pidfile == NULL) {
		(void)unlink(path);
		return -app_err("out of memory");
	}
	/* a signal during set-up ends the process: the file goes with it */
	app_signals_remove_at_setup_stop(path);
	return 0;
}

void
app_pidfile_remove(struct app_service *s)
{
	if (s->pidfile == NULL)
		return;
	if (pidfile_pid(s->pidfile) == getpid() && unlink(s->pidfile) != 0)
		app_err("warning: cannot remove --pidfile %s: %s", s->pidfile,
			strerror(errno));
	free(s->pidfile);
	s->pidfile = NULL;
}

static void
send_status(struct app *a, double dt)
{
	char st[512];

	app_report_status(a, a->svc.prev, dt, st, sizeof(st));
	sd_notifyf(0, "STATUS=%s", st);
}

void
app_service_ready(struct app *a)
{
	struct app_service *s = &a->svc;
	uint64_t usec = 0;
	const char *ns = getenv("NOTIFY_SOCKET");

	s->prev = calloc(1, sizeof(*s->prev));
	s->notify = ns != NULL && ns[0] != '\0' && s->prev != NULL;
	if (!s->notify)
		return;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0 && a->pl != NULL) {
		s->beats = calloc(a->nqueues + 1, sizeof(*s->beats));
		if (s->beats != NULL)
			s->wd_ns = usec * 1000u;
	}
	s->last_pet = s->last_stat = a->t_start;
	sd_notifyf(0, "READY=1\nMAINPID=%ld", (long)getpid());
	send_status(a, 1);
}

/* Whether every RX lcore and the writer turned their loops since the
 * last pet; the beats seen become the new marks. */
static bool
progressed(struct app *a)
{
	struct app_service *s = &a->svc;

	for (unsigned q = 0; q <= a->nqueues; q++)
		if (gcap_pipeline_beat(a->pl, q < a->nqueues ? q : UINT_MAX) ==
		    s->beats[q])
			return false;
	for (unsigned q = 0; q <= a->nqueues; q++)
		s->beats[q] = gcap_pipeline_beat(a->pl, q < a->nqueues ? q : UINT_MAX);
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
		sd_notify(0, "WATCHDOG=1");
		s->last_pet = now;
	}
}

void
app_service_stopping(struct app *a)
{
	if (a->svc.notify)
		sd_notify(0, "STOPPING=1\nSTATUS=stopping: draining the pipeline");
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
}
