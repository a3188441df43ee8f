/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --metrics: Prometheus' text exposition format (version 0.0.4) of the
 * capture's counters, per port, queue, drop reason, output and GPU, with
 * HELP and TYPE, names as Prometheus' conventions want them
 * (gpucap_..._total for counters, base units). Served by libmicrohttpd's
 * own polling thread; each scrape reads the published run under the
 * observation lock (observe.h) with the relaxed loads the summary uses,
 * so a scrape never waits on the packet path nor slows it.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "gpucap/gcap_thread.h"
#include "gcap_config.h"
#include "app_err.h"
#include "metrics.h"
#include "observe.h"
#include "report.h"

struct app_metrics {
	struct MHD_Daemon *d;
	int fd;
};

/* spec split into host and port (host without the brackets of IPv6) */
static int
split(const char *spec, char *host, size_t hsize, const char **port)
{
	const char *colon;
	size_t n;

	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');

		if (end == NULL || end[1] != ':')
			return -1;
		n = (size_t)(end - spec - 1);
		*port = end + 2;
		spec++;
	} else {
		colon = strrchr(spec, ':');
		if (colon == NULL || memchr(spec, ':', (size_t)(colon - spec)) != NULL)
			return -1;
		n = (size_t)(colon - spec);
		*port = colon + 1;
	}
	if (n == 0 || n >= hsize)
		return -1;
	memcpy(host, spec, n);
	host[n] = '\0';
	return 0;
}

static int
resolve(const char *spec, struct addrinfo **res)
{
	char host[256];
	const char *port;
	char *end;
	unsigned long pn;
	struct addrinfo hints;
	int r;

	if (split(spec, host, sizeof(host), &port) < 0 || port[0] < '0' || port[0] > '9')
		return -app_err("--metrics '%s': expected ADDR:PORT, e.g. 127.0.0.1:9464 "
				"or [::1]:9464",
				spec);
	errno = 0;
	pn = strtoul(port, &end, 10);
	if (errno != 0 || *end != '\0' || pn == 0 || pn > 65535)
		return -app_err("--metrics '%s': the port must be an integer from 1 to "
				"65535",
				spec);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
	r = getaddrinfo(host, port, &hints, res);
	if (r != 0)
		return -app_err("--metrics '%s': %s", spec, gai_strerror(r));
	return 0;
}

int
app_metrics_check(const char *spec)
{
	struct addrinfo *res;

	if (resolve(spec, &res) < 0)
		return -1;
	freeaddrinfo(res);
	return 0;
}

/* a label value, escaped as the format wants (\\, \", \n) */
static void
label(FILE *f, const char *name, const char *v)
{
	fprintf(f, "%s=\"", name);
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
	fputc('"', f);
}

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* the per-queue counters, each family once over every queue */
struct qfam {
	const char *name, *help;
	size_t off;      /* of the uint64_t in gcap_queue_stats */
	const char *why; /* reason label of a drop, or NULL */
	double scale;    /* ns to s, else 1 */
};

#define QF(n, h, f)                                                   \
	{                                                             \
		n, h, offsetof(struct gcap_queue_stats, f), NULL, 1.0 \
	}
#define QD(r, f)                                                     \
	{                                                            \
		"gpucap_dropped_packets_total", NULL,                \
			offsetof(struct gcap_queue_stats, f), r, 1.0 \
	}
#define QW(r, f)                                                      \
	{                                                             \
		"gpucap_backpressure_wait_seconds_total", bp_help,    \
			offsetof(struct gcap_queue_stats, f), r, 1e-9 \
	}
static const char bp_help[] =
	"Time the RX queue's port waited under --backpressure, its packets "
	"left in it, by reason: executor (no batch slot free) or writer (no "
	"export room).";
static const struct qfam qfams[] = {
	QF("gpucap_received_packets_total", "Packets the RX queue took from its port.",
	   rx_pkts),
	QF("gpucap_received_bytes_total", "Wire bytes of the packets received.",
	   rx_bytes),
	QF("gpucap_captured_packets_total",
	   "Packets an output wanted, handed to the writer.", captured),
	QF("gpucap_captured_bytes_total", "Wire bytes of the packets captured.",
	   captured_bytes),
	QF("gpucap_filtered_packets_total", "Packets no output's filter wanted.",
	   filtered),
	QF("gpucap_batches_total", "Batches the executor completed.", batches),
	{ "gpucap_executor_seconds_total", "Executor time spent on the queue's batches.",
	  offsetof(struct gcap_queue_stats, exec_ns), NULL, 1e-9 },
	{ "gpucap_poll_gaps_total",
	  "Busy polls that came 10 us or more after the one before (--busy-poll).",
	  offsetof(struct gcap_queue_stats, poll_gaps[1]), NULL, 1.0 },
	QW("executor", bp_wait_exec_ns),
	QW("writer", bp_wait_writer_ns),
	/* last: the drops' family goes on after the table (the ports' own,
	 * the run's write_failed), and a family is one group */
	QD("pipeline_full", drop_pipeline),
	QD("writer_behind", drop_writer),
	QD("chained", drop_chained),
};
#undef QF
#undef QD
#undef QW

static const char drop_help[] =
	"Packets lost, by reason: imissed and rx_nombuf at the port, pipeline_full "
	"(executor behind), writer_behind, chained (not copyable whole), write_failed.";

static void
queue_families(const struct app *a, FILE *f, const struct gcap_queue_stats *st)
{
	const char *last = NULL;

	for (unsigned k = 0; k < sizeof(qfams) / sizeof(qfams[0]); k++) {
		const struct qfam *m = &qfams[k];

		if (last == NULL || strcmp(last, m->name) != 0)
			family(f, m->name, "counter", m->help ? m->help : drop_help);
		last = m->name;
		for (unsigned q = 0; q < a->nqueues; q++) {
			uint64_t v = *(const uint64_t *)((const char *)&st[q] + m->off);
			unsigned pi = a->queues != NULL ? a->queues[q].port_index : 0;

			fprintf(f, "%s{", m->name);
			label(f, "port", a->ports[pi].name);
			fprintf(f, ",queue=\"%u\"",
				a->queues != NULL ? a->queues[q].rx_queue : q);
			if (m->why != NULL)
				fprintf(f, ",reason=\"%s\"", m->why);
			if (m->scale != 1.0)
				fprintf(f, "} %.9f\n", (double)v * m->scale);
			else
				fprintf(f, "} %" PRIu64 "\n", v);
		}
	}
	/* the rest of the drops: the ports' own, the writes that failed */
	for (unsigned p = 0; p < a->nports; p++) {
		struct app_totals t;

		app_totals_read(a, (int)p, &t);
		fputs("gpucap_dropped_packets_total{", f);
		label(f, "port", a->ports[p].name);
		fprintf(f, ",reason=\"imissed\"} %" PRIu64 "\n", t.imissed);
		fputs("gpucap_dropped_packets_total{", f);
		label(f, "port", a->ports[p].name);
		fprintf(f, ",reason=\"rx_nombuf\"} %" PRIu64 "\n", t.rx_nombuf);
	}
	fprintf(f, "gpucap_dropped_packets_total{reason=\"write_failed\"} %" PRIu64 "\n",
		gcap_pipeline_write_failed(a->pl));
}

static void
output_families(const struct app *a, FILE *f)
{
	static const char *const names[2] = { "gpucap_output_records_total",
					      "gpucap_output_bytes_total" };
	static const char *const helps[2] = {
		"Records written to the output's files.",
		"Bytes written to the output's files (headers and statistics too).",
	};

	for (unsigned k = 0; k < 2; k++) {
		family(f, names[k], "counter", helps[k]);
		for (unsigned i = 0; i < a->nwriters; i++) {
			uint64_t v[2];

			gcap_writer_counts(a->writers[i], &v[0], &v[1]);
			fprintf(f, "%s{output=\"%u\",", names[k], i);
			label(f, "path", a->o->outs[i].path);
			fprintf(f, "} %" PRIu64 "\n", v[k]);
		}
	}
	family(f, "gpucap_output_io_wait_seconds_total", "counter",
	       "Time the writer waited with every buffer of the output's I/O "
	       "thread full: where it grows, the storage is slower than the "
	       "records come.");
	for (unsigned i = 0; i < a->nwriters; i++) {
		uint64_t ns;

		gcap_writer_io_wait(a->writers[i], NULL, &ns);
		fprintf(f, "gpucap_output_io_wait_seconds_total{output=\"%u\",", i);
		label(f, "path", a->o->outs[i].path);
		fprintf(f, "} %.6f\n", (double)ns / 1e9);
	}
}

static void
gpu_families(const struct app *a, FILE *f)
{
	int ids[APP_MAX_GPUS];
	unsigned n = app_gpus_used(a, ids, APP_MAX_GPUS);
	struct app_gpu_totals t[APP_MAX_GPUS];

	if (n == 0)
		return;
	for (unsigned i = 0; i < n; i++)
		app_gpu_totals(a, ids[i], &t[i]);
	family(f, "gpucap_gpu_received_packets_total", "counter",
	       "Packets of the queues the GPU serves.");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "gpucap_gpu_received_packets_total{gpu=\"%d\"} %" PRIu64 "\n",
			ids[i], t[i].rx_pkts);
	family(f, "gpucap_gpu_dropped_packets_total", "counter",
	       "Packets of the GPU's queues lost in the pipeline (any reason).");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "gpucap_gpu_dropped_packets_total{gpu=\"%d\"} %" PRIu64 "\n",
			ids[i], t[i].dropped);
	family(f, "gpucap_gpu_batches_total", "counter", "Batches the GPU completed.");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "gpucap_gpu_batches_total{gpu=\"%d\"} %" PRIu64 "\n", ids[i],
			t[i].batches);
	family(f, "gpucap_gpu_busy_seconds_total", "counter",
	       "Time the GPU's blocks spent on batches, summed over its queues.");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "gpucap_gpu_busy_seconds_total{gpu=\"%d\"} %.9f\n", ids[i],
			(double)t[i].exec_ns / 1e9);
}

/* Receive-to-verdict latency as a Prometheus histogram: the queues' 1 us
 * buckets summed, cumulated at bounds that are whole microseconds (so
 * each count is exact); the sum from each bucket's middle. */
static void
latency_histogram(const struct app *a, FILE *f, const struct gcap_queue_stats *st)
{
	static const unsigned le_us[] = { 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000 };
	uint64_t acc = 0, total = 0;
	double sum = 0;
	unsigned k = 0;

	family(f, "gpucap_latency_seconds", "histogram",
	       "Packets' receive-to-verdict latency (the sum from 1 us buckets' "
	       "middles).");
	for (unsigned i = 0; i < GCAP_LAT_BUCKETS; i++) {
		uint64_t n = 0;

		for (unsigned q = 0; q < a->nqueues; q++)
			n += st[q].lat[i];
		for (; k < sizeof(le_us) / sizeof(le_us[0]) && le_us[k] <= i; k++)
			fprintf(f,
				"gpucap_latency_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
				le_us[k] / 1e6, acc);
		acc += n;
		sum += (double)n * (i + 1 < GCAP_LAT_BUCKETS ? i + 0.5 : i) / 1e6;
	}
	total = acc;
	for (; k < sizeof(le_us) / sizeof(le_us[0]); k++)
		fprintf(f, "gpucap_latency_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
			le_us[k] / 1e6, acc);
	fprintf(f, "gpucap_latency_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", total);
	fprintf(f, "gpucap_latency_seconds_sum %.9f\n", sum);
	fprintf(f, "gpucap_latency_seconds_count %" PRIu64 "\n", total);
}

static int
write_run(const struct app *a, void *arg)
{
	FILE *f = arg;
	struct gcap_queue_stats *st = calloc(a->nqueues ? a->nqueues : 1, sizeof(*st));

	if (st == NULL)
		return -ENOMEM;
	for (unsigned q = 0; q < a->nqueues; q++)
		gcap_pipeline_queue_stats(a->pl, q, &st[q]);
	family(f, "gpucap_up", "gauge", "Whether a capture is running.");
	fputs("gpucap_up 1\n", f);
	family(f, "gpucap_info", "gauge", "The capture's version and backend.");
	fprintf(f, "gpucap_info{version=\"%s\",backend=\"%s\"} 1\n", GCAP_VERSION,
		a->ops->name);
	family(f, "gpucap_capture_seconds", "gauge", "Seconds the capture has run.");
	fprintf(f, "gpucap_capture_seconds %.3f\n", app_observe_seconds(a));
	queue_families(a, f, st);
	family(f, "gpucap_written_packets_total", "counter",
	       "Records the writer wrote (each once, whatever its outputs).");
	fprintf(f, "gpucap_written_packets_total %" PRIu64 "\n",
		gcap_pipeline_written(a->pl));
	family(f, "gpucap_order_forced_packets_total", "counter",
	       "Records the time-order merge wrote before every queue had caught "
	       "up to them (the window passed or a queue's memory filled).");
	fprintf(f, "gpucap_order_forced_packets_total %" PRIu64 "\n",
		gcap_pipeline_order_forced(a->pl));
	output_families(a, f);
	gpu_families(a, f);
	latency_histogram(a, f, st);
	free(st);
	return 0;
}

int
app_metrics_write(FILE *f)
{
	if (app_observe(write_run, f) == -ENODATA) {
		family(f, "gpucap_up", "gauge", "Whether a capture is running.");
		fputs("gpucap_up 0\n", f);
	}
	return ferror(f) ? -EIO : 0;
}

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
      enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
	   const char *version, const char *upload, size_t *upload_size, void **state)
{
	static char not_found[] = "gpu-capture serves /metrics\n";
	static char not_allowed[] = "GET or HEAD only\n";
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)cls;
	(void)version;
	(void)upload;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed,
			     sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT);
	if (*upload_size != 0) {
		*upload_size = 0;
		return MHD_YES;
	}
	(void)state;
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found,
			     sizeof(not_found) - 1, MHD_RESPMEM_PERSISTENT);
	f = open_memstream(&body, &len);
	if (f == NULL)
		return MHD_NO;
	if (app_metrics_write(f) < 0 || fclose(f) != 0) {
		free(body);
		return MHD_NO;
	}
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body,
		     len, MHD_RESPMEM_MUST_FREE);
}

struct app_metrics *
app_metrics_start(const char *spec)
{
	struct app_metrics *m = calloc(1, sizeof(*m));
	struct addrinfo *res, *ai;
	int one = 1, e = 0;

	if (m == NULL) {
		app_err("out of memory");
		return NULL;
	}
	m->fd = -1;
	if (resolve(spec, &res) < 0) {
		free(m);
		return NULL;
	}
	for (ai = res; ai != NULL && m->fd < 0; ai = ai->ai_next) {
		m->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			       ai->ai_protocol);
		if (m->fd < 0) {
			e = errno;
			continue;
		}
		(void)setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(m->fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
		    listen(m->fd, 16) != 0) {
			e = errno;
			close(m->fd);
			m->fd = -1;
		}
	}
	freeaddrinfo(res);
	if (m->fd < 0) {
		app_err("--metrics %s: cannot listen: %s", spec, strerror(e));
		free(m);
		return NULL;
	}
	sigset_t old;

	gcap_sigs_hold(&old); /* its thread leaves us our signals */
	m->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
				on_request, m, MHD_OPTION_LISTEN_SOCKET, m->fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)16,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_END);
	gcap_sigs_restore(&old);
	if (m->d == NULL) {
		app_err("--metrics %s: the HTTP server did not start", spec);
		close(m->fd);
		free(m);
		return NULL;
	}
	return m;
}

void
app_metrics_stop(struct app_metrics *m)
{
	if (m == NULL)
		return;
	MHD_stop_daemon(m->d); /* closes the listening socket too */
	free(m);
}
