/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps every gpu-capture run takes, whatever its input: the filters
 * compiled, the backend chosen, the executor, the outputs and the pipeline
 * created, the finish (kernel state, outputs closed, reports), and the
 * stop on a signal: during set-up (nothing captured yet) a signal ends the
 * process at once, as tcpdump's default disposition does, after removing
 * the output files this run created; while capturing it stops the
 * pipeline (whose wait for a stalled output is bounded); after, it is
 * only noted. SIGUSR1 (the stats line), SIGUSR2 (flush) and SIGHUP
 * (rotate) never end a run: tcpdump's meanings, served by the main loop
 * and the writer thread. The file run (offline.c) and the live run (live.c)
 * call them in their order; the checks among them come before any port
 * starts.
 */
#include <errno.h>
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
#include "meta.h"
#include "report.h"
#include "filerule.h"
#include "run.h"

/* The signal handler's only way in: set while a capture runs. */
static struct gcap_pipeline *volatile g_pl;
static volatile sig_atomic_t g_signal;
/* 0: set-up, 1: capturing, 2: stopped (the run finishes by itself) */
static volatile sig_atomic_t g_state;
/* the output files set-up created (removed if a signal ends it) */
static char g_created[GCAP_MAX_OUTPUTS + 1][PATH_MAX]; /* and --pidfile */
static volatile sig_atomic_t g_ncreated;
/* SIGUSR1 came: the main loop prints the stats line */
static volatile sig_atomic_t g_usr1;

/* SIGUSR1, SIGUSR2, SIGHUP: asked of the running capture, else noted
 * (set-up: none is lost, none ends the process). */
static void
on_request(int sig)
{
	struct gcap_pipeline *pl = g_pl;

	if (sig == SIGUSR1)
		g_usr1 = 1;
	else if (sig == SIGUSR2)
		gcap_pipeline_request_flush(pl);
	else if (sig == SIGHUP)
		gcap_pipeline_request_rotate(pl);
}

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
	/* one read: the capture's end sets it to NULL meanwhile */
	struct gcap_pipeline *pl = g_pl;

	if (pl != NULL)
		gcap_pipeline_request_stop(pl);
}

int
app_signals_install(void)
{
	struct sigaction sa, hup;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
		return -1;
	sa.sa_handler = on_request;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || sigaction(SIGUSR2, &sa, NULL) != 0 ||
	    sigaction(SIGHUP, NULL, &hup) != 0)
		return -1;
	/* a SIGHUP ignored from the start (nohup) stays ignored, as tcpdump
	 * leaves it: the terminal's hangup is not a request to rotate */
	if (hup.sa_handler != SIG_IGN && sigaction(SIGHUP, &sa, NULL) != 0)
		return -1;
	/* a closed stdout (-w - | head) is the writer's EPIPE, which ends
	 * the capture cleanly, not a kill */
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

void
app_signals_remove_at_setup_stop(const char *path)
{
	if (g_ncreated < (int)GCAP_MAX_OUTPUTS + 1 && strlen(path) < PATH_MAX) {
		memcpy(g_created[g_ncreated], path, strlen(path) + 1);
		g_ncreated = g_ncreated + 1;
	}
}

bool
app_signalled(void)
{
	return g_signal != 0;
}

bool
app_stats_asked(void)
{
	if (!g_usr1)
		return false;
	g_usr1 = 0;
	return true;
}

/* gcap_writer_stats_fn: the counters for the ISBs of a rotated file */
static void
writer_stats(void *arg, struct gcap_writer_if_stats *st, unsigned nifs)
{
	(void)nifs; /* the writers have one interface per port, or one */
	app_report_if_stats(arg, st);
}

/* One program per output (an output without :EXPR takes the trailing one). */
int
app_compile_filters(struct app *a)
{
	struct app_opts *o = a->o;
	unsigned n = o->nouts ? o->nouts : 1;

	for (unsigned i = 0; i < n; i++) {
		const char *e = o->nouts ? o->outs[i].filter : o->expr;

		/* a file's own handle where there is one (libpcap builds some
		 * link types' programs differently for a savefile) */
		int r = gcap_filter_compile_opt(a->file, e, a->linktype, o->snaplen,
						!o->no_optimize, &a->progs[i], a->err);

		if (r < 0 && (e == NULL || e[0] == '\0')) {
			app_err("%s", a->err); /* the input's link type */
			return -1;
		}
		if (r < 0) {
			/* one line: a long expression is shown by its start */
			size_t len = strlen(e);

			/* -w FILE:EXPR: a ':' of a strftime name (%H:%M)
			 * made this an output's filter */
			bool own = o->nouts && o->outs[i].expr != NULL;

			app_err("bad filter '%.*s%s' (link type %s): %s%s",
				len > 120 ? 120 : (int)len, e, len > 120 ? "..." : "",
				pcap_datalink_val_to_name(a->linktype) ?: "?", a->err,
				own ? " (the part of -w after its first unescaped ':'; "
				      "a ':' of a file name is written '\\:')" :
				      "");
			return -1;
		}
		a->nprogs++;
	}
	return 0;
}

/* The empty expression as tcpdump -d prints it: libpcap's program for ""
 * returns the handle's snapshot length (the file's with -r, -s live). */
static int
dump_accept_all(struct app *a)
{
	pcap_t *p = a->file != NULL ? a->file :
				      pcap_open_dead(a->linktype, (int)a->o->snaplen);
	struct bpf_program prog;
	int r = -1;

	if (p != NULL && pcap_compile(p, &prog, "", a->o->no_optimize ? 0 : 1, 0) == 0) {
		r = gcap_filter_dump(stdout, &prog, a->o->dump_level);
		pcap_freecode(&prog);
	}
	if (p != NULL && p != a->file)
		pcap_close(p);
	return r;
}

int
app_dump_filters(struct app *a)
{
	for (unsigned i = 0; i < a->nprogs; i++) {
		if (a->nprogs > 1)
			printf("# output %s\n", a->o->outs[i].path);
		if (a->progs[i].bf_len == 0 ?
			    dump_accept_all(a) < 0 :
			    gcap_filter_dump(stdout, &a->progs[i], a->o->dump_level) < 0)
			return 1;
	}
	return 0;
}

int
app_choose_backend(struct app *a, bool files_cpu)
{
	struct app_opts *o = a->o;
	const struct gcap_exec_ops *gops = gcap_exec_gpu_ops();
	char why[GCAP_ERRBUF_SIZE] = "";
	int ndev = 0;

	if (o->backend == GCAP_BACKEND_CPU) {
		a->ops = &gcap_exec_cpu_ops;
		return 0;
	}
	if (app_files_want_cpu(o, files_cpu) && gops != NULL) {
		a->ops = &gcap_exec_cpu_ops;
		if (!o->quiet)
			fprintf(stderr,
				"gpu-capture: backend cpu (auto's choice for files; "
				"--backend gpu to filter them on the GPU)\n");
		return 0;
	}
	if (gops == NULL)
		snprintf(why, sizeof(why), "this build has no CUDA support");
	else if (gcap_gpu_probe(&ndev, why) < 0 || ndev == 0) {
		if (why[0] == '\0')
			snprintf(why, sizeof(why), "no GPU found");
	}
	if (why[0] != '\0') {
		if (o->backend == GCAP_BACKEND_GPU || o->mem != GCAP_MEM_AUTO ||
		    o->find_gpu == 1)
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
	a->gpus = ec->gpus;
	a->ngpus = ec->ngpus;
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

	app_meta_host(a);
	if (o->postrotate != NULL && app_postrotate_install() < 0) {
		app_err("-z: cannot watch the commands' ends");
		return -1;
	}
	for (unsigned i = 0; i < o->nouts; i++) {
		struct gcap_writer_conf wc = {
			.path = o->outs[i].path,
			.fmt = o->fmt,
			.snaplen = o->snaplen,
			.hdr_snaplen = a->out_snaplen,
			.nifs = nifs,
			.ifs = ifs,
			.rotate_bytes = o->rotate_bytes,
			.rotate_secs = o->rotate_secs,
			.max_files = o->max_files,
			.stop_bytes = o->autostop_bytes,
			.stop_files = o->autostop_files,
			.file_mode = o->group_read ? 0640 : 0,
			.set_owner = a->creds.drop,
			.owner = a->creds.uid,
			.group = a->creds.gid,
			/* if_filter only where there is a filter */
			.filter_expr = o->outs[i].filter != NULL &&
						       o->outs[i].filter[0] != '\0' ?
					       o->outs[i].filter :
					       NULL,
			.app_name = "gpu-capture " GCAP_VERSION,
			.flush_each = o->packet_buffered,
			/* the writer thread frames, its own writes */
			.write_behind = true,
			.ts_micro = o->ts_micro,
			.ts_override = o->ts_given,
			.epb_rx = a->nports > 0,
			.shb_os = a->host_os[0] != '\0' ? a->host_os : NULL,
			.shb_hardware = a->host_hw[0] != '\0' ? a->host_hw : NULL,
			.comments = o->comments,
			.ncomments = o->ncomments,
			.rotate_packets = o->rotate_packets,
			.names = !o->ring_buffer  ? GCAP_NAMES_TCPDUMP :
				 o->names_timenum ? GCAP_NAMES_DUMPCAP_TIMENUM :
						    GCAP_NAMES_DUMPCAP,
			.rotate_interval = o->rotate_interval,
			.stats_fn = writer_stats,
			.stats_arg = a,
			.closed_fn = o->postrotate != NULL ? app_postrotate_run : NULL,
			.closed_arg = (void *)(uintptr_t)o->postrotate,
		};

		struct stat st;
		bool existed = strcmp(wc.path, "-") == 0 || stat(wc.path, &st) == 0;

		a->writers[i] = gcap_writer_open(&wc, a->err);
		if (a->writers[i] == NULL) {
			/* tcpdump's header waits in stdio's buffer and its
			 * SIGPIPE comes later, a clean end: so does this one */
			a->reader_gone = errno == EPIPE && o->nouts == 1;
			if (!a->reader_gone)
				app_err("%s", a->err);
			return -1;
		}
		a->nwriters++;
		/* a file this run made (not one it truncated, not a FIFO, nor
		 * a tcpdump ring's numbered name, which may be an earlier
		 * run's) goes if set-up is interrupted; a name of dumpcap's is
		 * always made new */
		const char *fn = gcap_writer_filename(a->writers[i]);

		if (((!existed && strcmp(fn, wc.path) == 0) || o->ring_buffer) &&
		    strlen(fn) < PATH_MAX) {
			memcpy(g_created[g_ncreated], fn, strlen(fn) + 1);
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
		uint64_t n, ns;

		gcap_writer_io_wait(a->writers[i], &n, &ns);
		a->io_waits += n;
		a->io_wait_ns += ns;
		gcap_writer_counts(a->writers[i], &a->out_kept[i], NULL);
		/* a write error was reported when it happened: say it once;
		 * the reader of the only output gone (-w - | head) ended the
		 * capture as tcpdump's SIGPIPE does: no error */
		snprintf(prev, sizeof(prev), "%s", a->err);
		int cr = gcap_writer_close(a->writers[i], st, a->err);

		if (cr < 0 && !(cr == -EPIPE && a->nwriters == 1)) {
			if (strcmp(prev, a->err) != 0)
				app_err("%s", a->err);
			rc = -1;
		}
		a->writers[i] = NULL;
	}
	if (a->nwriters > 0)
		a->nclosed = a->nwriters;
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
		.time_order = !a->o->no_time_order,
		.order_window_ms = a->o->order_window_ms,
		.file_copiers = a->file_copiers,
		.file_spans = a->file_spans,
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
	/* tcpdump's --count: the count alone on stdout, after a read error
	 * too (what was read before it) */
	if (a->o->count_mode &&
	    (printf("%" PRIu64 " packet%s\n", captured, captured == 1 ? "" : "s") < 0 ||
	     fflush(stdout) != 0))
		rc = app_err("--count: cannot write to stdout");
	if (a->o->summary_json != NULL && app_report_json(a, secs) < 0)
		rc = 1;
	return rc;
}
