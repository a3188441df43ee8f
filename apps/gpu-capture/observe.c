/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run as the outside sees it while it captures: published to the
 * telemetry and metrics threads under one lock (their callbacks have no
 * argument to carry it: DPDK's telemetry keeps none), and the views they
 * share (GPU sums, the kernel's state). Only the main thread and those
 * readers take the lock; the RX lcores and the writer never do.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpucap/gcap_common.h"
#include "observe.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct app *g_app;     /* the published run, or NULL */
static char g_kdir[PATH_MAX]; /* private directory of kernel state reads */
static pthread_mutex_t g_klock = PTHREAD_MUTEX_INITIALIZER;

void
app_observe_publish(struct app *a)
{
	pthread_mutex_lock(&g_lock);
	g_app = a;
	pthread_mutex_unlock(&g_lock);
}

void
app_observe_unpublish(void)
{
	pthread_mutex_lock(&g_lock);
	g_app = NULL;
	pthread_mutex_unlock(&g_lock);
	pthread_mutex_lock(&g_klock);
	if (g_kdir[0] != '\0') {
		char p[PATH_MAX + 16];

		snprintf(p, sizeof(p), "%s/state.json", g_kdir);
		(void)unlink(p);
		/* what a failed report left (it writes FILE.tmp, then renames) */
		snprintf(p, sizeof(p), "%s/state.json.tmp", g_kdir);
		(void)unlink(p);
		(void)rmdir(g_kdir);
		g_kdir[0] = '\0';
	}
	pthread_mutex_unlock(&g_klock);
}

int
app_observe(int (*fn)(const struct app *a, void *arg), void *arg)
{
	int r = -ENODATA;

	pthread_mutex_lock(&g_lock);
	if (g_app != NULL)
		r = fn(g_app, arg);
	pthread_mutex_unlock(&g_lock);
	return r;
}

double
app_observe_seconds(const struct app *a)
{
	uint64_t now = app_mono_ns();

	return a->t_start && now > a->t_start ? (double)(now - a->t_start) / 1e9 : 0.0;
}

int
app_queue_gpu(const struct app *a, unsigned q)
{
	if (a->ops == NULL || a->ops == &gcap_exec_cpu_ops)
		return -1;
	return a->ngpus ? a->gpus[q % a->ngpus] : 0;
}

unsigned
app_gpus_used(const struct app *a, int *ids, unsigned max)
{
	unsigned n = 0;

	for (unsigned q = 0; q < a->nqueues; q++) {
		int g = app_queue_gpu(a, q);
		unsigned i;

		for (i = 0; i < n && ids[i] != g; i++)
			;
		if (g >= 0 && i == n && n < max)
			ids[n++] = g;
	}
	return n;
}

void
app_gpu_totals(const struct app *a, int gpu, struct app_gpu_totals *t)
{
	struct gcap_queue_stats *s = malloc(sizeof(*s));

	memset(t, 0, sizeof(*t));
	if (s == NULL)
		return;
	for (unsigned q = 0; q < a->nqueues; q++) {
		if (app_queue_gpu(a, q) != gpu)
			continue;
		gcap_pipeline_queue_stats(a->pl, q, s);
		t->queues++;
		t->rx_pkts += s->rx_pkts;
		t->captured += s->captured;
		t->filtered += s->filtered;
		t->dropped += s->drop_pipeline + s->drop_writer + s->drop_chained;
		t->batches += s->batches;
		t->exec_ns += s->exec_ns;
	}
	free(s);
}

int
app_kernel_state_write(struct app *a, const char *path)
{
	int r;

	pthread_mutex_lock(&g_klock);
	r = a->ops->kernel_state(a->ex, path, a->err);
	pthread_mutex_unlock(&g_klock);
	return r;
}

/* under g_klock: the private directory (0700, made once, by whoever the
 * process is by then) */
static int
kernel_dir(char *errbuf)
{
	const char *tmp = getenv("TMPDIR");

	if (g_kdir[0] != '\0')
		return 0;
	if (tmp == NULL || tmp[0] != '/')
		tmp = "/tmp";
	if (snprintf(g_kdir, sizeof(g_kdir), "%s/gpucap-state.XXXXXX", tmp) >=
		    (int)sizeof(g_kdir) ||
	    mkdtemp(g_kdir) == NULL) {
		int e = errno ? errno : ENAMETOOLONG;

		g_kdir[0] = '\0';
		return gcap_err(errbuf, e, "kernel state directory: %s", strerror(e));
	}
	return 0;
}

long
app_kernel_state_read(const struct app *a, char *buf, size_t size, char *errbuf)
{
	char p[PATH_MAX + 16];
	long n = -1;
	int fd, r;

	if (a->ex == NULL || a->o->kernel == NULL)
		return -ENOENT;
	pthread_mutex_lock(&g_klock);
	r = kernel_dir(errbuf);
	if (r == 0) {
		snprintf(p, sizeof(p), "%s/state.json", g_kdir);
		r = a->ops->kernel_state(a->ex, p, errbuf);
	}
	if (r == 0) {
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			r = gcap_err(errbuf, errno, "%s: %s", p, strerror(errno));
		else {
			ssize_t k;
			size_t got = 0;

			while (got < size && (k = read(fd, buf + got, size - got)) > 0)
				got += (size_t)k;
			close(fd);
			n = (long)got;
			if (got == size)
				r = -E2BIG;
			else
				buf[got] = '\0';
		}
		(void)unlink(p);
	}
	pthread_mutex_unlock(&g_klock);
	return r < 0 ? r : n;
}
