/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The /gpucap/ telemetry commands. Each reads the published run
 * (observe.h) through the same snapshot as the summary and
 * --summary-json (app_totals_read), so that once the capture stops their
 * answers are the summary's numbers. They run on DPDK's telemetry
 * threads; the packet path is never waited for.
 *
 *   /gpucap/summary           the run: counters, drops by reason, latency
 *   /gpucap/ports             port indexes;    /gpucap/port,N    one port
 *   /gpucap/queues            queue indexes;   /gpucap/queue,N   one queue
 *   /gpucap/outputs           output indexes;  /gpucap/output,N  one output
 *   /gpucap/gpus              GPU ordinals;    /gpucap/gpu,N     one GPU
 *   /gpucap/kernel            the inline kernel's state report (JSON text)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "gpucap/gcap_json.h"
#include "gpucap/gcap_pipeline.h"
#include "app_err.h"
#include "observe.h"
#include "report.h"
#include "telemetry.h"

/* what a command's callback hands to the reader under the lock */
struct tel_req {
	const char *params;
	struct rte_tel_data *d;
};

/* the index a command's parameter names: digits only, below n */
static int
param_index(const char *params, unsigned n)
{
	char *end;
	unsigned long v;

	if (params == NULL || params[0] < '0' || params[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(params, &end, 10);
	if (errno != 0 || *end != '\0' || v >= n)
		return -EINVAL;
	return (int)v;
}

/* the drops of t by reason, as --summary-json names them */
static void
add_drops(struct rte_tel_data *d, const struct app_totals *t, bool run)
{
	struct rte_tel_data *c = rte_tel_data_alloc();

	if (c == NULL)
		return;
	rte_tel_data_start_dict(c);
	rte_tel_data_add_dict_u64(c, "imissed", t->imissed);
	rte_tel_data_add_dict_u64(c, "rx_nombuf", t->rx_nombuf);
	rte_tel_data_add_dict_u64(c, "pipeline_full", t->q.drop_pipeline);
	rte_tel_data_add_dict_u64(c, "writer_behind", t->q.drop_writer);
	rte_tel_data_add_dict_u64(c, "chained", t->q.drop_chained);
	if (run)
		rte_tel_data_add_dict_u64(c, "write_failed", t->write_failed);
	rte_tel_data_add_dict_container(d, "dropped", c, 0);
}

static int
summary(const struct app *a, void *arg)
{
	struct rte_tel_data *d = ((struct tel_req *)arg)->d;
	struct rte_tel_data *lat = rte_tel_data_alloc();
	struct app_totals t;

	app_totals_read(a, -1, &t);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "backend", a->ops->name);
	rte_tel_data_add_dict_u64(d, "elapsed_ms",
				  (uint64_t)(app_observe_seconds(a) * 1000.0));
	rte_tel_data_add_dict_u64(d, "received", t.q.rx_pkts);
	rte_tel_data_add_dict_u64(d, "received_bytes", t.q.rx_bytes);
	rte_tel_data_add_dict_u64(d, "captured", t.q.captured);
	rte_tel_data_add_dict_u64(d, "captured_bytes", t.q.captured_bytes);
	rte_tel_data_add_dict_u64(d, "written", gcap_pipeline_written(a->pl));
	rte_tel_data_add_dict_u64(d, "order_forced", gcap_pipeline_order_forced(a->pl));
	rte_tel_data_add_dict_u64(d, "filtered", t.q.filtered);
	rte_tel_data_add_dict_u64(d, "dropped_total", app_totals_dropped(&t));
	add_drops(d, &t, true);
	rte_tel_data_add_dict_u64(d, "batches", t.q.batches);
	rte_tel_data_add_dict_u64(d, "rx_polls", t.q.polls);
	if (lat != NULL) {
		rte_tel_data_start_dict(lat);
		rte_tel_data_add_dict_u64(
			lat, "p50",
			gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_TOTAL, 50));
		rte_tel_data_add_dict_u64(
			lat, "p99",
			gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_TOTAL, 99));
		rte_tel_data_add_dict_u64(
			lat, "p999",
			gcap_pipeline_latency_of_ns(a->pl, GCAP_LAT_TOTAL, 99.9));
		rte_tel_data_add_dict_container(d, "latency_ns", lat, 0);
	}
	rte_tel_data_add_dict_u64(d, "ports", a->nports);
	rte_tel_data_add_dict_u64(d, "queues", a->nqueues);
	rte_tel_data_add_dict_u64(d, "outputs", a->nwriters);
	return 0;
}

/* an array of the indexes 0..n-1 */
static void
index_list(struct rte_tel_data *d, unsigned n)
{
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (unsigned i = 0; i < n && i < RTE_TEL_MAX_ARRAY_ENTRIES; i++)
		rte_tel_data_add_array_int(d, (int)i);
}

static int
ports(const struct app *a, void *arg)
{
	index_list(((struct tel_req *)arg)->d, a->nports);
	return 0;
}

static int
port(const struct app *a, void *arg)
{
	struct tel_req *r = arg;
	int p = param_index(r->params, a->nports);
	struct app_totals t;

	if (p < 0)
		return p;
	app_totals_read(a, p, &t);
	rte_tel_data_start_dict(r->d);
	rte_tel_data_add_dict_u64(r->d, "index", (uint64_t)p);
	rte_tel_data_add_dict_string(r->d, "name", a->ports[p].name);
	rte_tel_data_add_dict_u64(r->d, "port_id", a->ports[p].port_id);
	rte_tel_data_add_dict_u64(r->d, "queues", a->ports[p].nqueues);
	rte_tel_data_add_dict_u64(r->d, "received", t.q.rx_pkts);
	rte_tel_data_add_dict_u64(r->d, "received_bytes", t.q.rx_bytes);
	rte_tel_data_add_dict_u64(r->d, "captured", t.q.captured);
	rte_tel_data_add_dict_u64(r->d, "filtered", t.q.filtered);
	rte_tel_data_add_dict_u64(r->d, "dropped_total", app_totals_dropped(&t));
	add_drops(r->d, &t, false);
	return 0;
}

static int
queues(const struct app *a, void *arg)
{
	index_list(((struct tel_req *)arg)->d, a->nqueues);
	return 0;
}

static int
queue(const struct app *a, void *arg)
{
	struct tel_req *r = arg;
	int q = param_index(r->params, a->nqueues);
	struct gcap_queue_stats *s;

	if (q < 0)
		return q;
	s = malloc(sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	gcap_pipeline_queue_stats(a->pl, (unsigned)q, s);
	rte_tel_data_start_dict(r->d);
	rte_tel_data_add_dict_u64(r->d, "index", (uint64_t)q);
	if (a->queues != NULL) {
		const struct gcap_pipeline_queue *pq = &a->queues[q];

		rte_tel_data_add_dict_string(r->d, "port", a->ports[pq->port_index].name);
		rte_tel_data_add_dict_u64(r->d, "rx_queue", pq->rx_queue);
		rte_tel_data_add_dict_u64(r->d, "lcore", pq->lcore);
	}
	rte_tel_data_add_dict_int(r->d, "gpu", app_queue_gpu(a, (unsigned)q));
	/* the keys of --summary-json's queues, then the bytes and times */
	rte_tel_data_add_dict_u64(r->d, "rx", s->rx_pkts);
	rte_tel_data_add_dict_u64(r->d, "captured", s->captured);
	rte_tel_data_add_dict_u64(r->d, "filtered", s->filtered);
	rte_tel_data_add_dict_u64(r->d, "pipeline_full", s->drop_pipeline);
	rte_tel_data_add_dict_u64(r->d, "writer_behind", s->drop_writer);
	rte_tel_data_add_dict_u64(r->d, "batches", s->batches);
	rte_tel_data_add_dict_u64(r->d, "poll_gaps_ge10us", s->poll_gaps[1]);
	rte_tel_data_add_dict_u64(r->d, "chained", s->drop_chained);
	rte_tel_data_add_dict_u64(r->d, "rx_bytes", s->rx_bytes);
	rte_tel_data_add_dict_u64(r->d, "captured_bytes", s->captured_bytes);
	rte_tel_data_add_dict_u64(r->d, "exec_ns", s->exec_ns);
	rte_tel_data_add_dict_u64(r->d, "bp_wait_exec_ns", s->bp_wait_exec_ns);
	rte_tel_data_add_dict_u64(r->d, "bp_wait_writer_ns", s->bp_wait_writer_ns);
	free(s);
	return 0;
}

static int
outputs(const struct app *a, void *arg)
{
	index_list(((struct tel_req *)arg)->d, a->nwriters);
	return 0;
}

static int
output(const struct app *a, void *arg)
{
	struct tel_req *r = arg;
	int i = param_index(r->params, a->nwriters);
	uint64_t recs, bytes, waits, wait_ns;

	if (i < 0)
		return i;
	gcap_writer_counts(a->writers[i], &recs, &bytes);
	rte_tel_data_start_dict(r->d);
	rte_tel_data_add_dict_u64(r->d, "index", (uint64_t)i);
	/* names longer than a telemetry string (128 bytes) are cut */
	rte_tel_data_add_dict_string(r->d, "path", a->o->outs[i].path);
	rte_tel_data_add_dict_string(r->d, "filter", a->o->outs[i].filter);
	rte_tel_data_add_dict_u64(r->d, "records", recs);
	rte_tel_data_add_dict_u64(r->d, "bytes", bytes);
	gcap_writer_io_wait(a->writers[i], &waits, &wait_ns);
	rte_tel_data_add_dict_u64(r->d, "io_waits", waits);
	rte_tel_data_add_dict_u64(r->d, "io_wait_ns", wait_ns);
	return 0;
}

static int
gpus(const struct app *a, void *arg)
{
	struct rte_tel_data *d = ((struct tel_req *)arg)->d;
	int ids[APP_MAX_GPUS];
	unsigned n = app_gpus_used(a, ids, APP_MAX_GPUS);

	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (unsigned i = 0; i < n; i++)
		rte_tel_data_add_array_int(d, ids[i]);
	return 0;
}

static int
gpu(const struct app *a, void *arg)
{
	struct tel_req *r = arg;
	int ids[APP_MAX_GPUS], g = param_index(r->params, 256);
	unsigned n = app_gpus_used(a, ids, APP_MAX_GPUS), i;
	struct app_gpu_totals t;

	for (i = 0; i < n && ids[i] != g; i++)
		;
	if (g < 0 || i == n)
		return -EINVAL;
	app_gpu_totals(a, g, &t);
	rte_tel_data_start_dict(r->d);
	rte_tel_data_add_dict_int(r->d, "gpu", g);
	rte_tel_data_add_dict_u64(r->d, "queues", t.queues);
	rte_tel_data_add_dict_u64(r->d, "rx", t.rx_pkts);
	rte_tel_data_add_dict_u64(r->d, "captured", t.captured);
	rte_tel_data_add_dict_u64(r->d, "filtered", t.filtered);
	rte_tel_data_add_dict_u64(r->d, "dropped", t.dropped);
	rte_tel_data_add_dict_u64(r->d, "batches", t.batches);
	rte_tel_data_add_dict_u64(r->d, "exec_ns", t.exec_ns);
	return 0;
}

/* {"error": "msg"}, escaped, in buf */
static void
error_doc(char *buf, size_t size, const char *msg)
{
	FILE *f = fmemopen(buf, size, "w");
	struct gcap_json j;

	if (f == NULL) {
		snprintf(buf, size, "{}");
		return;
	}
	gcap_json_begin(&j, f);
	gcap_json_key_str(&j, "error", msg);
	if (gcap_json_end(&j) < 0 || fclose(f) != 0)
		snprintf(buf, size, "{}");
}

static int
kernel(const struct app *a, void *arg)
{
	struct rte_tel_data *d = ((struct tel_req *)arg)->d;
	char *buf = malloc(RTE_TEL_MAX_SINGLE_STRING_LEN);
	char eb[GCAP_ERRBUF_SIZE];
	long n;

	if (buf == NULL)
		return -ENOMEM;
	n = app_kernel_state_read(a, buf, RTE_TEL_MAX_SINGLE_STRING_LEN, eb);
	if (n == -ENOENT)
		snprintf(buf, RTE_TEL_MAX_SINGLE_STRING_LEN, "{}");
	else if (n == -E2BIG)
		error_doc(buf, RTE_TEL_MAX_SINGLE_STRING_LEN,
			  "the state report is larger than a telemetry reply: "
			  "use --kernel-state with --stats");
	else if (n < 0)
		error_doc(buf, RTE_TEL_MAX_SINGLE_STRING_LEN, eb);
	rte_tel_data_string(d, buf);
	free(buf);
	return 0;
}

#define CMD(fn)                                                                          \
	static int tel_##fn(const char *cmd, const char *params, struct rte_tel_data *d) \
	{                                                                                \
		struct tel_req r = { params, d };                                        \
		(void)cmd;                                                               \
		return app_observe(fn, &r);                                              \
	}
CMD(summary)
CMD(ports)
CMD(port)
CMD(queues)
CMD(queue)
CMD(outputs)
CMD(output)
CMD(gpus)
CMD(gpu)
CMD(kernel)
#undef CMD

int
app_telemetry_register(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/gpucap/summary", tel_summary,
		  "gpu-capture's counters, drops by reason and latency. No parameters" },
		{ "/gpucap/ports", tel_ports,
		  "gpu-capture's port indexes. No parameters" },
		{ "/gpucap/port", tel_port, "A port's counters. Parameters: int index" },
		{ "/gpucap/queues", tel_queues,
		  "gpu-capture's queue indexes. No parameters" },
		{ "/gpucap/queue", tel_queue,
		  "A queue's counters. Parameters: int index" },
		{ "/gpucap/outputs", tel_outputs,
		  "gpu-capture's output indexes (-w). No parameters" },
		{ "/gpucap/output", tel_output,
		  "An output's records and bytes. Parameters: int index" },
		{ "/gpucap/gpus", tel_gpus, "The GPUs the queues run on. No parameters" },
		{ "/gpucap/gpu", tel_gpu, "A GPU's counters. Parameters: int ordinal" },
		{ "/gpucap/kernel", tel_kernel,
		  "The inline kernel's state report as JSON text. No parameters" },
	};

	for (unsigned i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int r = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help);

		if (r < 0)
			return -app_err("telemetry: cannot register %s: %s", cmds[i].cmd,
					strerror(-r));
	}
	return 0;
}
