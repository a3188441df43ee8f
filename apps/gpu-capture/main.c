/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture: capture from DPDK ports or read a file, filter with tcpdump
 * expressions on the GPU or the CPU, write pcap/pcapng.
 *
 * Everything the user can get wrong is checked before a port starts:
 * options, input, filters, backend, ports, outputs (in that order).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "gcap_config.h"
#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_gpu.h"
#include "gpucap/gcap_pipeline.h"
#include "gpucap/gcap_port.h"
#include "gpucap/gcap_writer.h"
#include "options.h"

#define STOP_TIMEOUT_MS 5000u

/* The signal handler's only way in: set once before a capture runs. */
static struct gcap_pipeline *volatile g_pl;
static volatile sig_atomic_t g_signal;

static void
on_signal(int sig)
{
	g_signal = sig;
	if (g_pl != NULL)
		gcap_pipeline_request_stop(g_pl);
}

struct app {
	struct app_opts *o;
	int linktype;
	pcap_t *file; /* -r: filters compile on its handle, as tcpdump's do */
	struct bpf_program progs[GCAP_MAX_OUTPUTS];
	unsigned nprogs;
	const struct gcap_exec_ops *ops;
	struct gcap_exec *ex;
	struct gcap_writer *writers[GCAP_MAX_OUTPUTS];
	unsigned nwriters;
	struct gcap_port ports[APP_MAX_PORTS];
	unsigned nports;
	struct gcap_pipeline_queue *queues;
	unsigned nqueues;
	struct gcap_pipeline *pl;
	uint64_t t_start;
	double cpu_start; /* cpu_seconds() at t_start */
	char err[GCAP_ERRBUF_SIZE];
};

static int
die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "gpu-capture: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return 1;
}

/* CPU time of the process so far (all threads), in seconds */
static double
cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One program per output (an output without :EXPR takes the trailing one). */
static int
compile_filters(struct app *a)
{
	struct app_opts *o = a->o;
	unsigned n = o->nouts ? o->nouts : 1;

	for (unsigned i = 0; i < n; i++) {
		const char *e = (o->nouts && o->outs[i].expr) ? o->outs[i].expr : o->expr;

		int r = a->file != NULL ?
			gcap_filter_compile_on(a->file, e, &a->progs[i], a->err) :
			gcap_filter_compile(e, a->linktype, o->snaplen, &a->progs[i], a->err);

		if (r < 0) {
			fprintf(stderr, "gpu-capture: bad filter '%s' (link type %s): %s\n", e,
				pcap_datalink_val_to_name(a->linktype) ?: "?", a->err);
			return -1;
		}
		a->nprogs++;
	}
	return 0;
}

static int
dump_filters(struct app *a)
{
	for (unsigned i = 0; i < a->nprogs; i++) {
		if (a->nprogs > 1)
			printf("# output %s\n", a->o->outs[i].path);
		if (gcap_filter_dump(stdout, &a->progs[i], a->o->dump_level) < 0)
			return 1;
	}
	return 0;
}

static int
choose_backend(struct app *a)
{
	struct app_opts *o = a->o;
	const struct gcap_exec_ops *gops = gcap_exec_gpu_ops();
	char why[GCAP_ERRBUF_SIZE] = "";
	int ndev = 0;

	if (o->backend == GCAP_BACKEND_CPU) {
		if (o->mem != GCAP_MEM_AUTO)
			return die("--mem %s needs the gpu backend%s", gcap_mem_name(o->mem), "");
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
			return die("the gpu backend is not available: %s%s", why, "");
		a->ops = &gcap_exec_cpu_ops;
		if (!o->quiet)
			fprintf(stderr, "gpu-capture: backend cpu (%s)\n", why);
		return 0;
	}
	for (unsigned i = 0; i < o->ngpus; i++)
		if (o->gpus[i] >= ndev) {
			char n[16];

			snprintf(n, sizeof(n), "%d", o->gpus[i]);
			return die("--gpu %s: no such GPU (this machine has %s)", n,
				   ndev == 1 ? "one" : "fewer");
		}
	a->ops = gops;
	if (!o->quiet && o->backend == GCAP_BACKEND_AUTO)
		fprintf(stderr, "gpu-capture: backend gpu (%d GPU%s found)\n", ndev,
			ndev > 1 ? "s" : "");
	return 0;
}

/* Export buffer descriptors per batch slot (see exec_conf). At 4 Mpps on
 * one queue with two GPU blocks the batches held about 11 packets, and
 * 32 descriptors a queue gave the writer under 0.1 ms. */

static void
exec_conf(const struct app *a, struct gcap_exec_conf *c, unsigned nqueues,
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
	(void)gcap_pipeline_xmem_size(o->ring, o->batch, cap, stage,
				      &c->nxbufs, &c->xbuf_size);
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
}

/* --dump-gpu-code: the translation unit NVRTC would compile. */
static int
dump_gpu_code(struct app *a, const struct gcap_exec_conf *ec)
{
	char *src;

	if (gcap_exec_gpu_ops() == NULL)
		return die("--dump-gpu-code: this build has no CUDA support%s%s", "", "");
	src = gcap_gpu_code(ec, a->err);
	if (src == NULL)
		return die("%s%s", a->err, "");
	fputs(src, stdout);
	free(src);
	return fflush(stdout) == 0 ? 0 : 1;
}

static int
open_writers(struct app *a, const struct gcap_writer_if *ifs, unsigned nifs)
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
			.filter_expr = o->outs[i].expr ? o->outs[i].expr : o->expr,
			.app_name = "gpu-capture " GCAP_VERSION,
			.flush_each = o->packet_buffered,
		};

		a->writers[i] = gcap_writer_open(&wc, a->err);
		if (a->writers[i] == NULL) {
			fprintf(stderr, "gpu-capture: %s\n", a->err);
			return -1;
		}
		a->nwriters++;
	}
	return 0;
}

static int
close_writers(struct app *a, const struct gcap_writer_if_stats *st)
{
	int rc = 0;

	for (unsigned i = 0; i < a->nwriters; i++) {
		char prev[GCAP_ERRBUF_SIZE];

		/* a write error was reported when it happened: say it once */
		snprintf(prev, sizeof(prev), "%s", a->err);
		if (gcap_writer_close(a->writers[i], st, a->err) < 0) {
			if (strcmp(prev, a->err) != 0)
				fprintf(stderr, "gpu-capture: %s\n", a->err);
			rc = -1;
		}
		a->writers[i] = NULL;
	}
	a->nwriters = 0;
	return rc;
}

struct totals {
	struct gcap_queue_stats q;
	uint64_t imissed, rx_nombuf;
};

static void
sum_queues(const struct app *a, unsigned port_index, bool all, struct totals *t)
{
	struct gcap_queue_stats *s = malloc(sizeof(*s));

	memset(t, 0, sizeof(*t));
	if (s == NULL)
		return;
	for (unsigned i = 0; i < a->nqueues; i++) {
		if (!all && a->queues != NULL && a->queues[i].port_index != port_index)
			continue;
		gcap_pipeline_queue_stats(a->pl, i, s);
		t->q.rx_pkts += s->rx_pkts;
		t->q.rx_bytes += s->rx_bytes;
		t->q.captured += s->captured;
		t->q.captured_bytes += s->captured_bytes;
		t->q.filtered += s->filtered;
		t->q.drop_pipeline += s->drop_pipeline;
		t->q.drop_writer += s->drop_writer;
		t->q.batches += s->batches;
		t->q.exec_ns += s->exec_ns;
		t->q.cycle_ns += s->cycle_ns;
		t->q.polls += s->polls;
		for (unsigned k = 0; k < GCAP_POLL_GAP_BUCKETS; k++)
			t->q.poll_gaps[k] += s->poll_gaps[k];
		t->q.poll_gap_ns += s->poll_gap_ns;
		if (s->poll_gap_max_ns > t->q.poll_gap_max_ns)
			t->q.poll_gap_max_ns = s->poll_gap_max_ns;
		t->q.lcore_minflt += s->lcore_minflt;
		t->q.lcore_majflt += s->lcore_majflt;
		t->q.lcore_nvcsw += s->lcore_nvcsw;
		t->q.lcore_nivcsw += s->lcore_nivcsw;
		for (unsigned k = 0; k < GCAP_POLL_PHASES; k++) {
			t->q.phase_ns[k] += s->phase_ns[k];
			t->q.phase_long[k] += s->phase_long[k];
		}
	}
	free(s);
	for (unsigned p = 0; p < a->nports; p++) {
		struct gcap_port_stats ps;

		if (!all && p != port_index)
			continue;
		if (gcap_port_stats(&a->ports[p], &ps) == 0) {
			t->imissed += ps.imissed;
			t->rx_nombuf += ps.rx_nombuf;
		}
	}
}

static uint64_t
dropped(const struct totals *t)
{
	return t->imissed + t->rx_nombuf + t->q.drop_pipeline + t->q.drop_writer;
}

static void
print_stats_line(const struct app *a, struct totals *prev, double dt)
{
	struct totals t;

	sum_queues(a, 0, true, &t);
	fprintf(stderr,
		"gpu-capture: %.3f Mpps %.3f Gb/s | received %" PRIu64 " captured %" PRIu64
		" written %" PRIu64 " dropped %" PRIu64,
		(double)(t.q.rx_pkts - prev->q.rx_pkts) / dt / 1e6,
		(double)(t.q.rx_bytes - prev->q.rx_bytes) * 8 / dt / 1e9, t.q.rx_pkts,
		t.q.captured, gcap_pipeline_written(a->pl), dropped(&t));
	for (unsigned p = 0; a->nports > 1 && p < a->nports; p++) {
		struct totals pt;

		sum_queues(a, p, false, &pt);
		fprintf(stderr, " | %s rx %" PRIu64 " drop %" PRIu64, a->ports[p].name,
			pt.q.rx_pkts, dropped(&pt));
	}
	/* busy RX lcores that lost their CPUs in this interval */
	if (a->o->busy_poll && t.q.poll_gaps[1] > prev->q.poll_gaps[1] && a->nqueues > 0)
		fprintf(stderr, " | poll gaps >= 10 us %.0f/s per queue (longest so far %.0f us)",
			(double)(t.q.poll_gaps[1] - prev->q.poll_gaps[1]) / dt / a->nqueues,
			(double)t.q.poll_gap_max_ns / 1e3);
	fputc('\n', stderr);
	*prev = t;
}

/* the poll gaps' bounds (us), as gcap_queue_stats.poll_gaps counts them */
static const unsigned gap_us[GCAP_POLL_GAP_BUCKETS] = GCAP_POLL_GAP_US;

/* Busy-polling RX lcores that paused >= 10 us: say so (what every packet
 * in flight waited, and how a NIC's ring fills); docs/tuning.md says what
 * to change on the host. */
static void
print_poll_gaps(const struct app *a, const struct totals *t, double secs)
{
	const unsigned *us = gap_us;

	if (!a->o->busy_poll || t->q.poll_gaps[1] == 0 || secs <= 0 || a->nqueues == 0)
		return;
	fprintf(stderr,
		"RX polls paused >= %u us %" PRIu64 " times (%.1f/s per queue; >= %u us: %.1f/s), "
		"longest %.0f us, %.2f%% of the time in gaps of %u us or more: the RX lcores "
		"lost their CPUs, or at full load a poll's own work took that long "
		"(their threads: %" PRIu64 " involuntary context switches, %" PRIu64
		" page faults; see docs/tuning.md)\n",
		us[1], t->q.poll_gaps[1], (double)t->q.poll_gaps[1] / secs / a->nqueues, us[3],
		(double)t->q.poll_gaps[3] / secs / a->nqueues, (double)t->q.poll_gap_max_ns / 1e3,
		(double)t->q.poll_gap_ns / 1e7 / secs / a->nqueues, us[0], t->q.lcore_nivcsw,
		t->q.lcore_minflt + t->q.lcore_majflt);
}

static const char *const phase_names[GCAP_POLL_PHASES] = GCAP_POLL_PHASE_NAMES;

/* --poll-phases: the RX lcores' timed polling, every phase together (ns) */
static uint64_t
phases_total(const struct gcap_queue_stats *st)
{
	uint64_t all = 0;

	for (unsigned k = 0; k < GCAP_POLL_PHASES; k++)
		all += st->phase_ns[k];
	return all;
}

/* --poll-phases: each phase's share of the RX lcores' polling time, and
 * its spans of GCAP_POLL_PHASE_LONG_US or more per second and queue */
static void
print_poll_phases(const struct app *a, const struct totals *t, double secs)
{
	uint64_t all = phases_total(&t->q);

	if (!a->o->poll_phases || secs <= 0 || a->nqueues == 0)
		return;
	if (all == 0)
		return;
	fprintf(stderr, "RX poll phases (share of the time; spans >= %u us per s per queue):",
		GCAP_POLL_PHASE_LONG_US);
	for (unsigned k = 0; k < GCAP_POLL_PHASES; k++)
		fprintf(stderr, "%s %s %.1f%% (%.0f)", k ? "," : "", phase_names[k],
			100.0 * (double)t->q.phase_ns[k] / (double)all,
			(double)t->q.phase_long[k] / secs / a->nqueues);
	fprintf(stderr, "\n");
}

static void
print_summary(const struct app *a, uint64_t captured, double secs)
{
	struct totals t;

	sum_queues(a, 0, true, &t);
	fprintf(stderr, "%" PRIu64 " packets captured\n", captured);
	fprintf(stderr, "%" PRIu64 " packets received by filter\n", t.q.rx_pkts);
	fprintf(stderr,
		"%" PRIu64 " packets dropped (imissed %" PRIu64 ", rx_nombuf %" PRIu64
		", pipeline full %" PRIu64 ", writer behind %" PRIu64 ")\n",
		dropped(&t), t.imissed, t.rx_nombuf, t.q.drop_pipeline, t.q.drop_writer);
	for (unsigned p = 0; a->nports > 1 && p < a->nports; p++) {
		struct totals pt;

		sum_queues(a, p, false, &pt);
		fprintf(stderr,
			"  %s: received %" PRIu64 ", captured %" PRIu64 ", filtered out %" PRIu64
			", dropped %" PRIu64 "\n",
			a->ports[p].name, pt.q.rx_pkts, pt.q.captured, pt.q.filtered, dropped(&pt));
	}
	print_poll_gaps(a, &t, secs);
	print_poll_phases(a, &t, secs);
}

static int
write_summary_json(const struct app *a, double secs)
{
	FILE *f = fopen(a->o->summary_json, "w");
	double cpu;
	struct totals t;
	struct gcap_queue_stats *s = malloc(sizeof(*s));

	if (f == NULL || s == NULL) {
		if (f != NULL)
			fclose(f);
		free(s);
		fprintf(stderr, "gpu-capture: cannot write %s: %s\n", a->o->summary_json,
			strerror(errno));
		return -1;
	}
	sum_queues(a, 0, true, &t);
	/* CPU time of every thread (RX lcores, writer, main, driver threads)
	 * since the capture started */
	cpu = cpu_seconds() - a->cpu_start;
	fprintf(f, "{\n  \"backend\": \"%s\",\n  \"seconds\": %.6f,\n", a->ops->name, secs);
	fprintf(f, "  \"cpu_seconds\": %.3f,\n  \"cores_used\": %.2f,\n", cpu,
		secs > 0 ? cpu / secs : 0.0);
	fprintf(f, "  \"received\": %" PRIu64 ",\n  \"received_bytes\": %" PRIu64 ",\n",
		t.q.rx_pkts, t.q.rx_bytes);
	fprintf(f, "  \"captured\": %" PRIu64 ",\n  \"written\": %" PRIu64 ",\n", t.q.captured,
		gcap_pipeline_written(a->pl));
	fprintf(f, "  \"filtered\": %" PRIu64 ",\n", t.q.filtered);
	fprintf(f, "  \"dropped\": {\"imissed\": %" PRIu64 ", \"rx_nombuf\": %" PRIu64
		   ", \"pipeline_full\": %" PRIu64 ", \"writer_behind\": %" PRIu64 "},\n",
		t.imissed, t.rx_nombuf, t.q.drop_pipeline, t.q.drop_writer);
	fprintf(f, "  \"rx_mpps\": %.4f,\n  \"rx_gbps\": %.4f,\n",
		secs > 0 ? (double)t.q.rx_pkts / secs / 1e6 : 0.0,
		secs > 0 ? (double)t.q.rx_bytes * 8 / secs / 1e9 : 0.0);
	fprintf(f, "  \"latency_us\": {\"p50\": %.1f, \"p99\": %.1f, \"p999\": %.1f},\n",
		gcap_pipeline_latency_ns(a->pl, 50) / 1e3, gcap_pipeline_latency_ns(a->pl, 99) / 1e3,
		gcap_pipeline_latency_ns(a->pl, 99.9) / 1e3);
	/* where the latency's tail is: the batch's round trip (submit to
	 * verdict) and the executor's own time, per packet */
	fprintf(f, "  \"latency_parts_us\": {\"cycle_p50\": %.1f, \"cycle_p99\": %.1f, "
		   "\"exec_p50\": %.1f, \"exec_p99\": %.1f, "
		   "\"in_p50\": %.1f, \"in_p99\": %.1f, \"back_p50\": %.1f, "
		   "\"back_p99\": %.1f},\n",
		gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_CYCLE, 50) / 1e3,
		gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_CYCLE, 99) / 1e3,
		gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_EXEC, 50) / 1e3,
		gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_EXEC, 99) / 1e3,
		gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_IN, 50) / 1e3,
		gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_IN, 99) / 1e3,
		gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_BACK, 50) / 1e3,
		gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_BACK, 99) / 1e3);
	/* batching as the load made it, and the executor's share of the
	 * latency (its own time per batch; the rest is doorbells and waits) */
	fprintf(f, "  \"batches\": %" PRIu64 ",\n  \"batch_mean\": %.1f,\n"
		   "  \"exec_us_mean\": %.2f,\n  \"cycle_us_mean\": %.2f,\n", t.q.batches,
		t.q.batches ? (double)(t.q.rx_pkts - t.q.drop_pipeline - t.q.drop_writer) /
			      (double)t.q.batches : 0.0,
		t.q.batches ? (double)t.q.exec_ns / (double)t.q.batches / 1e3 : 0.0,
		t.q.batches ? (double)t.q.cycle_ns / (double)t.q.batches / 1e3 : 0.0);
	/* how the RX lcores' polls cut the traffic: packets per poll that
	 * received some, and how often such a poll came on each queue */
	fprintf(f, "  \"rx_polls\": %" PRIu64 ",\n  \"pkts_per_poll\": %.1f,\n"
		   "  \"poll_interval_us\": %.2f,\n", t.q.polls,
		t.q.polls ? (double)t.q.rx_pkts / (double)t.q.polls : 0.0,
		t.q.polls ? secs * 1e6 * a->nqueues / (double)t.q.polls : 0.0);
	/* busy-poll gaps (docs/tuning.md): per queue and second, by bound */
	{
		const unsigned *us = gap_us;
		double per = secs > 0 && a->nqueues > 0 ? secs * a->nqueues : 0.0;

		fprintf(f, "  \"poll_gaps\": {");
		for (unsigned k = 0; k < GCAP_POLL_GAP_BUCKETS; k++)
			fprintf(f, "\"ge%uus_per_s\": %.1f, ", us[k],
				per > 0 ? (double)t.q.poll_gaps[k] / per : 0.0);
		fprintf(f, "\"longest_us\": %.1f, \"time_pct\": %.3f},\n",
			(double)t.q.poll_gap_max_ns / 1e3,
			per > 0 ? (double)t.q.poll_gap_ns / 1e7 / per : 0.0);
	}
	/* the RX lcore threads' page faults and context switches */
	fprintf(f, "  \"rx_lcores\": {\"minor_faults\": %" PRIu64 ", \"major_faults\": %" PRIu64
		   ", \"voluntary_switches\": %" PRIu64 ", \"involuntary_switches\": %" PRIu64 "},\n",
		t.q.lcore_minflt, t.q.lcore_majflt, t.q.lcore_nvcsw, t.q.lcore_nivcsw);
	/* the latency of the packets no poll gap reached, and their share:
	 * how much of the tail is the RX lcores losing their CPUs */
	if (a->o->busy_poll) {
		uint64_t all = gcap_pipeline_latency_count(a->pl, GCAP_LAT_TOTAL);
		uint64_t calm = gcap_pipeline_latency_count(a->pl, GCAP_LAT_NO_GAP);

		fprintf(f, "  \"latency_no_gap_us\": {\"p50\": %.1f, \"p99\": %.1f, "
			   "\"p999\": %.1f, \"share\": %.4f},\n",
			gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_NO_GAP, 50) / 1e3,
			gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_NO_GAP, 99) / 1e3,
			gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_NO_GAP, 99.9) / 1e3,
			all ? (double)calm / (double)all : 0.0);
	}
	/* --poll-phases: where the RX lcores' time and long spans went */
	if (a->o->poll_phases) {
		uint64_t all = phases_total(&t.q);
		double per = secs > 0 && a->nqueues > 0 ? secs * a->nqueues : 0.0;

		fprintf(f, "  \"poll_phases\": {");
		for (unsigned k = 0; k < GCAP_POLL_PHASES; k++)
			fprintf(f, "%s\"%s\": {\"time_pct\": %.2f, \"ge%uus_per_s\": %.1f}",
				k ? ", " : "", phase_names[k],
				all ? 100.0 * (double)t.q.phase_ns[k] / (double)all : 0.0,
				GCAP_POLL_PHASE_LONG_US,
				per > 0 ? (double)t.q.phase_long[k] / per : 0.0);
		fprintf(f, "},\n");
	}
	fprintf(f, "  \"queues\": [");
	for (unsigned i = 0; i < a->nqueues; i++) {
		gcap_pipeline_queue_stats(a->pl, i, s);
		fprintf(f, "%s\n    {\"rx\": %" PRIu64 ", \"captured\": %" PRIu64 ", \"filtered\": %" PRIu64
			   ", \"pipeline_full\": %" PRIu64 ", \"writer_behind\": %" PRIu64
			   ", \"batches\": %" PRIu64 ", \"poll_gaps_ge10us\": %" PRIu64
			   ", \"poll_gap_longest_us\": %.1f",
			i ? "," : "", s->rx_pkts, s->captured, s->filtered, s->drop_pipeline,
			s->drop_writer, s->batches, s->poll_gaps[1],
			(double)s->poll_gap_max_ns / 1e3);
		if (a->o->poll_phases) {
			/* per queue: their long spans by phase */
			fprintf(f, ", \"phase_long\": {");
			for (unsigned k = 0; k < GCAP_POLL_PHASES; k++)
				fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "",
					phase_names[k], s->phase_long[k]);
			fprintf(f, "}");
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n  ]\n}\n");
	free(s);
	return fclose(f) == 0 ? 0 : -1;
}

static int
finish(struct app *a, const struct gcap_writer_if_stats *st, int rc)
{
	double secs = (double)(mono_ns() - a->t_start) / 1e9;

	if (a->o->kernel_state != NULL && a->ex != NULL &&
	    a->ops->kernel_state(a->ex, a->o->kernel_state, a->err) < 0) {
		fprintf(stderr, "gpu-capture: kernel state: %s\n", a->err);
		rc = 1;
	}
	uint64_t captured = gcap_pipeline_written(a->pl), bytes;

	/* one output: what its files hold (after a write error, the records
	 * cut back are not counted) */
	if (a->nwriters == 1)
		gcap_writer_counts(a->writers[0], &captured, &bytes);
	if (close_writers(a, st) < 0)
		rc = 1;
	if (!a->o->quiet)
		print_summary(a, captured, secs);
	if (a->o->summary_json != NULL && write_summary_json(a, secs) < 0)
		rc = 1;
	return rc;
}

static int
setup_signals(void)
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

static int
create_exec(struct app *a, const struct gcap_exec_conf *ec)
{
	a->ex = a->ops->create(ec, a->err);
	if (a->ex == NULL) {
		fprintf(stderr, "gpu-capture: %s\n", a->err);
		return -1;
	}
	return 0;
}

static int
create_pipeline(struct app *a)
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
		fprintf(stderr, "gpu-capture: %s\n", a->err);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- offline */

static int
run_file(struct app *a)
{
	struct app_opts *o = a->o;
	char perr[PCAP_ERRBUF_SIZE];
	struct gcap_exec_conf ec;
	struct gcap_writer_if wif;
	struct gcap_writer_if_stats st = {0};
	struct totals t;
	pcap_t *p;
	int r, rc = 0;

	p = pcap_open_offline_with_tstamp_precision(o->read_file, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (p == NULL)
		return die("%s%s", perr, "");
	a->linktype = pcap_datalink(p);
	a->file = p;
	if (compile_filters(a) < 0)
		goto fail;
	if (o->dump_level > 0) {
		rc = dump_filters(a);
		pcap_close(p);
		return rc;
	}
	if (choose_backend(a) != 0)
		goto fail;
	a->nqueues = 1;
	/* a file's packets are all in the staging area */
	exec_conf(a, &ec, 1, GCAP_PIPELINE_STAGE_FILE, 0);
	if (o->dump_gpu_code) {
		pcap_close(p);
		return dump_gpu_code(a, &ec);
	}
	wif.name = o->read_file;
	wif.linktype = a->linktype;
	if (create_exec(a, &ec) < 0 || open_writers(a, &wif, 1) < 0 || create_pipeline(a) < 0)
		goto fail;
	a->t_start = mono_ns();
	a->cpu_start = cpu_seconds();
	g_pl = a->pl;
	r = gcap_pipeline_run_file(a->pl, p, a->err);
	if (r < 0) {
		fprintf(stderr, "gpu-capture: %s: %s\n", o->read_file, a->err);
		rc = 1;
	}
	r = gcap_pipeline_stop(a->pl, STOP_TIMEOUT_MS, a->err);
	g_pl = NULL;
	if (r < 0 && rc == 0) {
		fprintf(stderr, "gpu-capture: %s\n", a->err);
		rc = 1;
	}
	sum_queues(a, 0, true, &t);
	st.received = t.q.rx_pkts;
	st.dropped = dropped(&t);
	st.filter_accepted = t.q.captured;
	rc = finish(a, &st, rc);
	pcap_close(p);
	return rc;
fail:
	pcap_close(p);
	close_writers(a, NULL);
	return 1;
}

/* ---------------------------------------------------------------- live */

static int
create_pools(struct app *a, struct rte_mempool **pools, uint16_t data_room)
{
	const struct app_opts *o = a->o;
	unsigned n_mbufs = o->mbufs ? o->mbufs : o->nb_rxd + o->batch * (o->ring + 2) + 512;

	for (unsigned q = 0; q < a->nqueues; q++) {
		const struct gcap_port *p = &a->ports[a->queues[q].port_index];
		char name[RTE_MEMPOOL_NAMESIZE];
		int socket = p->socket >= 0 ? p->socket : (int)rte_socket_id();

		snprintf(name, sizeof(name), "gcap_p%u_q%u", p->index, a->queues[q].rx_queue);
		if (a->ops->pool_create != NULL)
			pools[q] = a->ops->pool_create(a->ex, q, p->port_id, name, n_mbufs,
						       data_room, socket, a->err);
		else {
			pools[q] = rte_pktmbuf_pool_create(name, n_mbufs, 256, 0, data_room, socket);
			if (pools[q] == NULL)
				snprintf(a->err, sizeof(a->err),
					 "cannot create a pool of %u mbufs: %s", n_mbufs,
					 rte_strerror(rte_errno));
		}
		if (pools[q] == NULL) {
			fprintf(stderr, "gpu-capture: %s: %s\n", p->spec, a->err);
			return -1;
		}
	}
	return 0;
}

static void
port_if_stats(struct app *a, struct gcap_writer_if_stats *st)
{
	for (unsigned p = 0; p < a->nports; p++) {
		struct totals t;

		sum_queues(a, p, false, &t);
		st[p].received = t.q.rx_pkts + t.imissed + t.rx_nombuf;
		st[p].dropped = dropped(&t);
		st[p].filter_accepted = t.q.captured;
	}
}

static int
capture_loop(struct app *a)
{
	const struct app_opts *o = a->o;
	uint64_t next_stats = a->t_start + (uint64_t)o->stats_secs * 1000000000u;
	uint64_t last = a->t_start, end = o->duration ?
		a->t_start + (uint64_t)o->duration * 1000000000u : UINT64_MAX;
	struct totals prev;
	bool state_warned = false;
	int rc = 0;

	memset(&prev, 0, sizeof(prev));
	while (!g_signal && !gcap_pipeline_finished(a->pl)) {
		struct timespec ts = {0, 20000000};
		uint64_t now;

		nanosleep(&ts, NULL);
		now = mono_ns();
		if (gcap_pipeline_health(a->pl, a->err) < 0) {
			fprintf(stderr, "gpu-capture: %s\n", a->err);
			rc = 1;
			break;
		}
		if (now >= end)
			break;
		if (o->stats_secs && now >= next_stats) {
			print_stats_line(a, &prev, (double)(now - last) / 1e9);
			/* the kernel's state while running: the file is
			 * replaced (rename) with a snapshot every interval */
			if (o->kernel_state != NULL && a->ex != NULL &&
			    a->ops->kernel_state(a->ex, o->kernel_state,
						 a->err) < 0 && !state_warned) {
				fprintf(stderr, "gpu-capture: warning: kernel "
					"state snapshot: %s\n", a->err);
				state_warned = true;
			}
			last = now;
			next_stats += (uint64_t)o->stats_secs * 1000000000u;
		}
	}
	return rc;
}

static int
run_live(struct app *a)
{
	struct app_opts *o = a->o;
	struct gcap_writer_if wifs[APP_MAX_PORTS];
	struct gcap_writer_if_stats st[APP_MAX_PORTS];
	struct rte_mempool **pools = NULL;
	int *gpu_ids = NULL;
	struct gcap_exec_conf ec;
	unsigned rx_ids[RTE_MAX_LCORE], nrx, ncpu_list = 0;
	int r, rc = 0;
	bool eal = false;

	for (unsigned i = 0; i < o->nports; i++) {
		if (gcap_port_parse(o->ports[i], i, &a->ports[i], a->err) < 0)
			return die("%s%s", a->err, "");
		a->ports[i].nqueues = (uint16_t)o->queues;
		a->nports++;
	}
	a->linktype = DLT_EN10MB;
	if (compile_filters(a) < 0)
		return 1;
	if (o->dump_level > 0)
		return dump_filters(a);
	if (choose_backend(a) != 0)
		return 1;
	a->nqueues = a->nports * o->queues;
	exec_conf(a, &ec, a->nqueues, o->mem == GCAP_MEM_GPU ? 0 : GCAP_PIPELINE_STAGE_LIVE,
		  RTE_MBUF_DEFAULT_DATAROOM);
	if (o->dump_gpu_code)
		return dump_gpu_code(a, &ec);
	ncpu_list = o->nlcores;
	nrx = ncpu_list ? (ncpu_list < a->nqueues ? ncpu_list : a->nqueues) : a->nqueues;
	{
		struct gcap_eal_conf c = {
			.prog = "gpu-capture",
			.ports = a->ports,
			.nports = a->nports,
			.nlcores = 1 + nrx,
			.cpus = o->lcores,
			.extra = o->eal,
			.mem_mb = 256 + 32 * a->nqueues,
			.verbose = o->verbose,
		};

		if (gcap_eal_init(&c, a->err) < 0)
			return die("%s%s", a->err, "");
		eal = true;
	}
	for (unsigned i = 0; i < a->nports; i++)
		if (gcap_port_find(&a->ports[i], a->err) < 0) {
			fprintf(stderr, "gpu-capture: %s\n", a->err);
			rc = 1;
			goto out;
		}
	if (gcap_rx_lcores(rx_ids, RTE_MAX_LCORE) < nrx) {
		rc = die("the EAL gave fewer lcores than needed%s%s", "", "");
		goto out;
	}
	a->queues = calloc(a->nqueues, sizeof(*a->queues));
	pools = calloc(a->nqueues, sizeof(*pools));
	if (a->queues == NULL || pools == NULL) {
		rc = die("out of memory%s%s", "", "");
		goto out;
	}
	for (unsigned i = 0; i < a->nqueues; i++) {
		a->queues[i].port_index = (uint16_t)(i / o->queues);
		a->queues[i].rx_queue = (uint16_t)(i % o->queues);
		a->queues[i].port_id = a->ports[i / o->queues].port_id;
		a->queues[i].lcore = rx_ids[i % nrx];
	}
	if (a->ops != &gcap_exec_cpu_ops && o->ngpus == 0) {
		/* default: each queue on the GPU nearest its port */
		gpu_ids = calloc(a->nqueues, sizeof(*gpu_ids));
		if (gpu_ids == NULL) {
			rc = die("out of memory%s%s", "", "");
			goto out;
		}
		for (unsigned i = 0; i < a->nqueues; i++)
			gpu_ids[i] = gcap_gpu_pick(a->ports[a->queues[i].port_index].socket);
		ec.gpus = gpu_ids;
		ec.ngpus = a->nqueues;
	}
	if (create_exec(a, &ec) < 0 ||
	    create_pools(a, pools, RTE_MBUF_DEFAULT_BUF_SIZE) < 0) {
		rc = 1;
		goto out;
	}
	for (unsigned p = 0; p < a->nports; p++)
		if (gcap_port_configure(&a->ports[p], (uint16_t)o->queues, (uint16_t)o->nb_rxd,
					pools + p * o->queues, a->err) < 0) {
			rc = die("%s%s", a->err, "");
			goto out;
		}
	for (unsigned p = 0; p < a->nports; p++) {
		wifs[p].name = a->ports[p].name;
		wifs[p].linktype = DLT_EN10MB;
	}
	if (open_writers(a, wifs, a->nports) < 0 || create_pipeline(a) < 0) {
		rc = 1;
		goto out;
	}
	for (unsigned p = 0; p < a->nports; p++)
		if (gcap_port_start(&a->ports[p], a->err) < 0) {
			rc = die("%s%s", a->err, "");
			goto out;
		}
	a->t_start = mono_ns();
	a->cpu_start = cpu_seconds();
	g_pl = a->pl;
	if (gcap_pipeline_start(a->pl, a->err) < 0) {
		rc = die("%s%s", a->err, "");
		goto out;
	}
	rc = capture_loop(a);
	r = gcap_pipeline_stop(a->pl, STOP_TIMEOUT_MS, a->err);
	g_pl = NULL;
	if (r < 0) {
		fprintf(stderr, "gpu-capture: %s\n", a->err);
		rc = 1;
	}
	port_if_stats(a, st);
	rc = finish(a, st, rc);
out:
	g_pl = NULL;
	close_writers(a, NULL);
	if (eal) {
		for (unsigned p = 0; p < a->nports; p++)
			if (a->ports[p].started || a->queues != NULL)
				gcap_port_close(&a->ports[p]);
	}
	gcap_pipeline_destroy(a->pl);
	a->pl = NULL;
	/* the pools' data rooms belong to the executor: pools go first */
	for (unsigned q = 0; pools != NULL && q < a->nqueues; q++)
		rte_mempool_free(pools[q]);
	if (a->ops != NULL)
		a->ops->destroy(a->ex);
	a->ex = NULL;
	free(pools);
	free(gpu_ids);
	free(a->queues);
	if (eal)
		rte_eal_cleanup();
	return rc;
}

int
main(int argc, char **argv)
{
	struct app_opts o;
	struct app a;
	int r;

	r = app_parse_options(argc, argv, &o);
	if (r != 0) {
		app_free_options(&o);
		return r > 0 ? 0 : 1;
	}
	memset(&a, 0, sizeof(a));
	a.o = &o;
	if (o.doctor) {
		r = gcap_doctor_run(&o.doctor_conf, stdout, a.err);
		app_free_options(&o);
		return r < 0 ? die("%s%s", a.err, "") : r;
	}
	if (setup_signals() < 0) {
		app_free_options(&o);
		return die("cannot install signal handlers%s%s", "", "");
	}
	if (o.read_file != NULL) {
		r = run_file(&a);
		gcap_pipeline_destroy(a.pl);
		if (a.ops != NULL)
			a.ops->destroy(a.ex);
	} else {
		r = run_live(&a);
	}
	for (unsigned i = 0; i < a.nprogs; i++)
		gcap_filter_free(&a.progs[i]);
	app_free_options(&o);
	return r;
}
