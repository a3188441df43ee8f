/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps every gpu-capture run takes, whatever its input: the filters
 * compiled, the backend chosen, the executor, the outputs and the pipeline
 * created, the finish (kernel state, outputs closed, reports), and the
 * stop on a signal: during set-up (nothing captured yet) a signal ends the
 * process at once, as tcpdump's default disposition does, after removing
 * the output files this run created; while capturing it stops the
 * pipeline (whose wait for a stalled output is bounded); after, it is
 * only noted. The file run (offline.c) and the live run (live.c)
 * call them in their order; the checks among them come before any port
 * starts.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcap_config.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_gpu.h"
#include "app_err.h"
#include "report.h"
#include "run.h"

/* The signal handler's only way in: set while a capture runs. */
static struct gcap_pipeline *volatile g_pl;
static volatile sig_atomic_t g_signal;
/* 0: set-up, 1: capturing, 2: stopped (the run finishes by itself) */
static volatile sig_atomic_t g_state;
/* the output files set-up created (removed if a signal ends it) */
static char g_created[GCAP_MAX_OUTPUTS][PATH_MAX];
static volatile sig_atomic_t g_ncreated;

static void
on_signal(int sig)
{
	g_signal = sig;
	if (g_state == 0) {
		/* only async-signal-safe calls: unlink, signal, raise */
		for (sig_atomic_t i = 0; i < g_ncreated; i++)
			(void)unlink(g_created[i]);
		signal(sig, SIG_DFL);
		raise(sig); /* delivered, with its default, on return */
		return;
	}
	if (g_pl != NULL)
		gcap_pipeline_request_stop(g_pl);
}

int
app_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
		return -1;
	/* a closed stdout (-w - | head) is a write error, not a kill */
	signal(SIGPIPE, SIG_IGN);
	/* past RLIMIT_FSIZE a write fails with EFBIG and the file stays valid */
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

void
app_signals_watch(struct gcap_pipeline *pl)
{
	g_pl = pl;
	g_state = pl != NULL ? 1 : 2;
}

bool
app_signalled(void)
{
	return g_signal != 0;
}

/* One program per output (an output without :EXPR takes the trailing one). */
int
app_compile_filters(struct app *a)
{
	struct app_opts *o = a->o;
	unsigned n = o->nouts ? o->nouts : 1;

	for (unsigned i = 0; i < n; i++) {
		const char *e = o->nouts ? o->outs[i].filter : o->expr;

		int r = a->file != NULL ?
				gcap_filter_compile_on(a->file, e, &a->progs[i], a->err) :
				gcap_filter_compile(e, a->linktype, o->snaplen,
						    &a->progs[i], a->err);

		if (r < 0 && (e == NULL || e[0] == '\0')) {
			app_err("%s", a->err); /* the input's link type */
			return -1;
		}
		if (r < 0) {
			/* one line: a long expression is shown by its start */
			size_t len = strlen(e);

			app_err("bad filter '%.*s%s' (link type %s): %s",
				len > 120 ? 120 : (int)len, e, len > 120 ? "..." : "",
				pcap_datalink_val_to_name(a->linktype) ?: "?", a->err);
			return -1;
		}
		a->nprogs++;
	}
	return 0;
}

int
app_dump_filters(struct app *a)
{
	for (unsigned i = 0; i < a->nprogs; i++) {
		if (a->nprogs > 1)
			printf("# output %s\n", a->o->outs[i].path);
		if (gcap_filter_dump(stdout, &a->progs[i], a->o->dump_level) < 0)
			return 1;
	}
	return 0;
}

int
app_choose_backend(struct app *a)
{
	struct app_opts *o = a->o;
	const struct gcap_exec_ops *gops = gcap_exec_gpu_ops();
	char why[GCAP_ERRBUF_SIZE] = "";
	int ndev = 0;

	if (o->backend == GCAP_BACKEND_CPU) {
		a->ops = &gcap_exec_cpu_ops;
		return 0;
	}
	if (gops == NULL)
		snprintf(why, sizeof(why), "this build has no CUDA support");
	else if (gcap_gpu_probe(&ndev, why) < 0 || ndev == 0) {
		if (why[0] == '\0')
			snprintf(why, sizeof(why), "no GPU found");
	}
	if (why[0] != '\0') {
		if (o->backend == GCAP_BACKEND_GPU || o->mem != GCAP_MEM_AUTO)
			return app_err("the gpu backend is not available: %s", why);
		a->ops = &gcap_exec_cpu_ops;
		if (!o->quiet)
			fprintf(stderr, "gpu-capture: backend cpu (%s)\n", why);
		return 0;
	}
	for (unsigned i = 0; i < o->ngpus; i++)
		if (o->gpus[i] >= ndev)
			return app_err("--gpu %d: no such GPU (this machine has %s)",
				       o->gpus[i], ndev == 1 ? "one" : "fewer");
	a->ops = gops;
	if (!o->quiet && o->backend == GCAP_BACKEND_AUTO)
		fprintf(stderr, "gpu-capture: backend gpu (%d GPU%s found)\n", ndev,
			ndev > 1 ? "s" : "");
	return 0;
}

void
app_exec_conf(const struct app *a, struct gcap_exec_conf *c, unsigned nqueues,
	      uint32_t stage, uint32_t max_caplen)
{
	const struct app_opts *o = a->o;
	uint32_t cap = max_caplen < o->snaplen ? max_caplen : o->snaplen;

	memset(c, 0, sizeof(*c));
	c->nqueues = nqueues;
	c->ring_size = o->ring;
	c->batch_max = o->batch;
	/* the pipeline's sizing; it cannot fail for the --ring, --batch
	 * and -s ranges options.c accepts */
	(void)gcap_pipeline_xmem_size(o->ring, o->batch, cap, stage, &c->nxbufs,
				      &c->xbuf_size);
	c->stage_size = stage;
	c->snaplen = o->snaplen;
	c->nfilters = a->nprogs;
	c->filters = a->progs;
	c->linktype = a->linktype;
	c->mem = o->mem;
	c->gpus = o->gpus;
	c->ngpus = o->ngpus;
	c->compile_filters = !o->interp;
	c->blocks_per_queue = o->gpu_blocks;
	c->kernel_path = o->kernel;
	c->kernel_arg = o->kernel_arg;
	c->kernel_budget_ms = o->kernel_budget;
}

int
app_dump_gpu_code(struct app *a, const struct gcap_exec_conf *ec)
{
	char *src;

	if (gcap_exec_gpu_ops() == NULL)
		return app_err("--dump-gpu-code: this build has no CUDA support");
	src = gcap_gpu_code(ec, a->err);
	if (src == NULL)
		return app_err("%s", a->err);
	fputs(src, stdout);
	free(src);
	return fflush(stdout) == 0 ? 0 : 1;
}

int
app_create_exec(struct app *a, const struct gcap_exec_conf *ec)
{
	const struct gcap_khost *k;

	a->ex = a->ops->create(ec, a->err);
	if (a->ex == NULL) {
		app_err("%s", a->err);
		return -1;
	}
	if (a->ops->kernel != NULL && (k = a->ops->kernel(a->ex)) != NULL)
		app_crash_arm(k);
	return 0;
}

int
app_open_writers(struct app *a, const struct gcap_writer_if *ifs, unsigned nifs)
{
	struct app_opts *o = a->o;

	for (unsigned i = 0; i < o->nouts; i++) {
		struct gcap_writer_conf wc = {
			.path = o->outs[i].path,
			.fmt = o->fmt,
			.snaplen = o->snaplen,
			.nifs = nifs,
			.ifs = ifs,
			.rotate_bytes = o->rotate_bytes,
			.rotate_secs = o->rotate_secs,
			.max_files = o->max_files,
			.filter_expr = o->outs[i].filter,
			.app_name = "gpu-capture " GCAP_VERSION,
			.flush_each = o->packet_buffered,
		};

		struct stat st;
		bool existed = strcmp(wc.path, "-") == 0 || stat(wc.path, &st) == 0;

		a->writers[i] = gcap_writer_open(&wc, a->err);
		if (a->writers[i] == NULL) {
			app_err("%s", a->err);
			return -1;
		}
		a->nwriters++;
		/* a file this run made (not one it truncated, not a FIFO, nor
		 * a rotation's numbered name) goes if set-up is interrupted */
		if (!existed &&
		    strcmp(gcap_writer_filename(a->writers[i]), wc.path) == 0 &&
		    strlen(wc.path) < PATH_MAX) {
			memcpy(g_created[g_ncreated], wc.path, strlen(wc.path) + 1);
			g_ncreated = g_ncreated + 1;
		}
	}
	return 0;
}

int
app_close_writers(struct app *a, const struct gcap_writer_if_stats *st)
{
	int rc = 0;

	for (unsigned i = 0; i < a->nwriters; i++) {
		char prev[GCAP_ERRBUF_SIZE];

		/* a write error was reported when it happened: say it once */
		snprintf(prev, sizeof(prev), "%s", a->err);
		if (gcap_writer_close(a->writers[i], st, a->err) < 0) {
			if (strcmp(prev, a->err) != 0)
				app_err("%s", a->err);
			rc = -1;
		}
		a->writers[i] = NULL;
	}
	a->nwriters = 0;
	return rc;
}

int
app_create_pipeline(struct app *a)
{
	struct gcap_pipeline_conf pc = {
		.ops = a->ops,
		.ex = a->ex,
		.nqueues = a->nqueues,
		.queues = a->queues,
		.batch_max = a->o->batch,
		.nwriters = a->nwriters,
		.writers = a->writers,
		.max_packets = a->o->count,
		.busy_poll = a->o->busy_poll,
		.poll_phases = a->o->poll_phases,
		.backpressure = a->o->backpressure,
		.rx_rate_pps = a->o->rx_rate,
		.rx_burst = a->o->rx_burst,
		.snaplen = a->o->snaplen,
		.flush_ms = 1000,
	};

	a->pl = gcap_pipeline_create(&pc, a->err);
	if (a->pl == NULL) {
		app_err("%s", a->err);
		return -1;
	}
	return 0;
}

_Noreturn void
app_exit_abandoned(int rc)
{
	fflush(stdout);
	fflush(stderr);
	_exit(rc);
}

int
app_finish(struct app *a, const struct gcap_writer_if_stats *st, int rc)
{
	double secs = (double)(app_mono_ns() - a->t_start) / 1e9;
	uint64_t captured;

	if (a->o->kernel_state != NULL && a->ex != NULL &&
	    a->ops->kernel_state(a->ex, a->o->kernel_state, a->err) < 0)
		rc = app_err("kernel state: %s", a->err);
	captured = gcap_pipeline_written(a->pl);
	/* one output: what its files hold (after a write error, the records
	 * cut back are not counted) */
	if (a->nwriters == 1)
		gcap_writer_counts(a->writers[0], &captured, NULL);
	if (app_close_writers(a, st) < 0)
		rc = 1;
	if (!a->o->quiet)
		app_report_summary(a, captured, secs);
	if (a->o->summary_json != NULL && app_report_json(a, secs) < 0)
		rc = 1;
	return rc;
}
