/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture -i PORT...: capture DPDK ports. The EAL, the ports, their
 * queues and pools are set up here, every check done before a port
 * starts; then the main thread watches the capture (stop, --duration,
 * --stats) until it ends, and takes everything down in order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "gpucap/gcap_gpu.h"
#include "app_err.h"
#include "metrics.h"
#include "observe.h"
#include "preflight.h"
#include "meta.h"
#include "report.h"
#include "run.h"
#include "telemetry.h"

/* One pool per queue, from the executor where its buffers are its own
 * (GPU memory), else from DPDK on the port's socket. */
static int
create_pools(struct app *a, struct rte_mempool **pools, uint16_t data_room)
{
	const struct app_opts *o = a->o;

	for (unsigned q = 0; q < a->nqueues; q++) {
		const struct gcap_port *p = &a->ports[a->queues[q].port_index];
		char name[RTE_MEMPOOL_NAMESIZE];
		int socket = p->socket >= 0 ? p->socket : (int)rte_socket_id();

		snprintf(name, sizeof(name), "gcap_p%u_q%u", p->index,
			 a->queues[q].rx_queue);
		if (a->ops->pool_create != NULL)
			pools[q] =
				a->ops->pool_create(a->ex, q, p->port_id, name, o->mbufs,
						    data_room, socket, a->err);
		else {
			pools[q] = rte_pktmbuf_pool_create(name, o->mbufs, 256, 0,
							   data_room, socket);
			if (pools[q] == NULL)
				snprintf(a->err, sizeof(a->err),
					 "cannot create a pool of %u mbufs: %s", o->mbufs,
					 rte_strerror(rte_errno));
		}
		if (pools[q] == NULL) {
			app_err("%s: %s", p->spec, a->err);
			return -1;
		}
	}
	return 0;
}

/* The pools' data rooms: DPDK's default, or, where no CPU may gather a
 * chained packet (data rooms in GPU memory: --mem gpu, or auto with the
 * gpu backend, which picks it where the NIC writes VRAM), rooms that
 * hold the ports' largest frame whole, as a GPUDirect capture sizes its
 * mempool for the MTU. Frames larger still (above 64 KiB) arrive chained
 * and are counted as dropped (chained). */
static uint16_t
data_room_of(const struct app *a)
{
	uint32_t most = 0;
	uint16_t room;

	if (a->ops == &gcap_exec_cpu_ops ||
	    (a->o->mem != GCAP_MEM_GPU && a->o->mem != GCAP_MEM_AUTO))
		return RTE_MBUF_DEFAULT_BUF_SIZE;
	for (unsigned i = 0; i < a->nports; i++) {
		uint32_t f = gcap_port_max_frame(&a->ports[i]);

		if (f > most)
			most = f;
	}
	room = gcap_port_whole_room(most);
	if (room == RTE_MBUF_DEFAULT_BUF_SIZE)
		return room;
	if (a->o->verbose)
		fprintf(stderr,
			"gpu-capture: data rooms of %u bytes, for frames of up to "
			"%u bytes\n",
			room, most);
	return room;
}

/* Before anything starts: the ports' link type (the filters compile for
 * it; one for all), one interface per pcap file (dumpcap's rule), and a
 * loopback interface's single queue. @return 0, or -1 after the error. */
static int
check_ports(struct app *a)
{
	const struct app_opts *o = a->o;

	a->linktype = a->ports[0].linktype;
	for (unsigned i = 1; i < a->nports; i++)
		if (a->ports[i].linktype != a->linktype)
			return -app_err("%s has link type %s, %s has %s: the ports of a "
					"capture share one",
					a->ports[i].spec,
					pcap_datalink_val_to_name(a->ports[i].linktype) ?:
						"?",
					a->ports[0].spec,
					pcap_datalink_val_to_name(a->linktype) ?: "?");
	for (unsigned i = 0; i < a->nports; i++)
		if (a->ports[i].loopback && o->queues > 1)
			return -app_err(
				"%s: a loopback interface has one queue (--queues 1)",
				a->ports[i].spec);
	for (unsigned i = 0; i < o->nouts && a->nports > 1; i++)
		if (gcap_writer_fmt_of(o->outs[i].path, o->fmt) == GCAP_FMT_PCAP)
			return -app_err("-w %s: pcap holds one interface, and %u ports "
					"are captured: write pcapng (a file name ending "
					"in .pcapng)",
					o->outs[i].path, a->nports);
	return 0;
}

/* -J: each port's time stamp types, as tcpdump lists them. @return 0. */
static int
list_tstamp_types(const struct app *a)
{
	for (unsigned i = 0; i < a->nports; i++) {
		enum gcap_tstamp t[4];
		unsigned n = gcap_port_tstamp_types(&a->ports[i], t, 4);

		printf("Time stamp types for %s (use option -j to set):\n",
		       a->ports[i].spec);
		for (unsigned k = 0; k < n; k++)
			printf("  %s (%s)\n", gcap_tstamp_name(t[k]),
			       pcap_tstamp_type_val_to_description(pcap_tstamp_type_name_to_val(gcap_tstamp_name(t[k]))) ?:
				       gcap_tstamp_name(t[k]));
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

/* tcpdump -v -w: "Got N" (the records written) once a second where it
 * changed, over itself (\r); on a terminal only, where a person reads it,
 * not into a service's journal. */
static void
got_line(const struct app *a, uint64_t *prev)
{
	uint64_t n = gcap_pipeline_written(a->pl);

	if (n != *prev) {
		fprintf(stderr, "Got %" PRIu64 "\r", n);
		fflush(stderr);
		*prev = n;
	}
}

/* The main thread while the RX lcores capture: every 20 ms, the stop
 * conditions (a signal, the pipeline done, --duration, its health), the
 * --stats line with its kernel state snapshot and -v's count. */
static int
capture_loop(struct app *a)
{
	const struct app_opts *o = a->o;
	const bool got = o->verbose && !o->quiet && isatty(STDERR_FILENO);
	uint64_t next_got = a->t_start + 1000000000u, got_prev = UINT64_MAX;
	uint64_t next_stats = a->t_start + (uint64_t)o->stats_secs * 1000000000u;
	uint64_t last = a->t_start,
		 end = o->duration ? a->t_start + (uint64_t)o->duration * 1000000000u :
				     UINT64_MAX;
	struct app_totals prev;
	bool state_warned = false;
	int rc = 0;

	memset(&prev, 0, sizeof(prev));
	while (!app_signalled() && !gcap_pipeline_finished(a->pl)) {
		struct timespec ts = { 0, 20000000 };
		uint64_t now;

		nanosleep(&ts, NULL);
		now = app_mono_ns();
		if (gcap_pipeline_health(a->pl, a->err) < 0) {
			rc = app_err("%s", a->err);
			break;
		}
		app_service_tick(a, now);
		if (now >= end)
			break;
		if (got && now >= next_got) {
			got_line(a, &got_prev);
			next_got += 1000000000u;
		}
		if (app_stats_asked()) { /* SIGUSR1: the line now, the capture goes on */
			app_report_stats_line(a, &prev, (double)(now - last) / 1e9);
			last = now; /* the next line's rates: since this one */
		}
		if (o->stats_secs && now >= next_stats) {
			app_report_stats_line(a, &prev, (double)(now - last) / 1e9);
			/* the kernel's state while running: the file is
			 * replaced (rename) with a snapshot every interval */
			if (o->kernel_state != NULL && a->ex != NULL &&
			    app_kernel_state_write(a, o->kernel_state) < 0 &&
			    !state_warned) {
				app_err("warning: kernel state snapshot: %s", a->err);
				state_warned = true;
			}
			last = now;
			next_stats += (uint64_t)o->stats_secs * 1000000000u;
		}
	}
	return rc;
}

int
app_run_live(struct app *a)
{
	struct app_opts *o = a->o;
	struct gcap_writer_if wifs[APP_MAX_PORTS] = { { 0 } }; /* unset options stay off */
	struct gcap_writer_if_stats st[APP_MAX_PORTS];
	struct rte_mempool **pools = NULL;
	int *gpu_ids = NULL;
	struct gcap_exec_conf ec;
	unsigned rx_ids[RTE_MAX_LCORE], nrx, mem_mb;
	struct app_cost cost;
	int r, rc = 0;
	bool eal = false;

	for (unsigned i = 0; i < o->nports; i++) {
		if (gcap_port_parse(o->ports[i], i, &a->ports[i], a->err) < 0)
			return app_err("%s", a->err);
		a->ports[i].nqueues = (uint16_t)o->queues;
		a->ports[i].tstamp = o->tstamp;
		a->ports[i].no_promisc = o->no_promisc;
		a->nports++;
	}
	if (check_ports(a) < 0)
		return 1;
	if (app_compile_filters(a) < 0)
		return 1;
	if (o->dump_level > 0)
		return app_dump_filters(a);
	if (app_choose_backend(a, false) != 0)
		return 1;
	a->nqueues = a->nports * o->queues;
	app_exec_conf(a, &ec, a->nqueues,
		      o->mem == GCAP_MEM_GPU ? 0 : GCAP_PIPELINE_STAGE_LIVE,
		      RTE_MBUF_DEFAULT_DATAROOM);
	if (o->dump_gpu_code)
		return app_dump_gpu_code(a, &ec);
	/* one RX lcore per queue, or as many as --lcores names when fewer */
	nrx = o->nlcores && o->nlcores < a->nqueues ? o->nlcores : a->nqueues;
	if (app_telemetry_register() < 0)
		return 1;
	/* the EAL's memory holds the packet pools whatever --mbufs asks */
	app_preflight_cost(o, &cost);
	mem_mb = 256 + 32 * a->nqueues + (unsigned)(cost.pools >> 20);
	if (app_privs_lookup(o->user, &a->creds) < 0)
		return 1;
	app_service_dpdk_log();
	{
		struct gcap_eal_conf c = {
			.prog = "gpu-capture",
			.ports = a->ports,
			.nports = a->nports,
			.nlcores = 1 + nrx,
			.cpus = o->lcores,
			.extra = o->eal,
			.mem_mb = mem_mb,
			.verbose = o->verbose,
		};

		if (gcap_eal_init(&c, a->err) < 0)
			return app_err("%s", a->err);
		eal = true;
	}
	/* after the EAL: its thread floats with the main lcore, off the RX
	 * lcores' CPUs */
	if (o->metrics != NULL && (a->metrics = app_metrics_start(o->metrics)) == NULL) {
		rc = 1;
		goto out;
	}
	for (unsigned i = 0; i < a->nports; i++)
		if (gcap_port_find(&a->ports[i], a->err) < 0) {
			rc = app_err("%s", a->err);
			goto out;
		}
	if (o->list_tstamp) {
		rc = list_tstamp_types(a);
		goto out;
	}
	if (gcap_rx_lcores(rx_ids, RTE_MAX_LCORE) < nrx) {
		rc = app_err("the EAL gave fewer lcores than needed");
		goto out;
	}
	a->queues = calloc(a->nqueues, sizeof(*a->queues));
	pools = calloc(a->nqueues, sizeof(*pools));
	if (a->queues == NULL || pools == NULL) {
		rc = app_err("out of memory");
		goto out;
	}
	for (unsigned i = 0; i < a->nqueues; i++) {
		a->queues[i].port_index = (uint16_t)(i / o->queues);
		a->queues[i].rx_queue = (uint16_t)(i % o->queues);
		a->queues[i].port_id = a->ports[i / o->queues].port_id;
		a->queues[i].lcore = rx_ids[i % nrx];
		a->queues[i].clock = &a->ports[i / o->queues].clock;
	}
	if (a->ops != &gcap_exec_cpu_ops && o->ngpus == 0) {
		/* default: each queue on the GPU nearest its port */
		gpu_ids = calloc(a->nqueues, sizeof(*gpu_ids));
		if (gpu_ids == NULL) {
			rc = app_err("out of memory");
			goto out;
		}
		for (unsigned i = 0; i < a->nqueues; i++)
			gpu_ids[i] =
				gcap_gpu_pick(a->ports[a->queues[i].port_index].socket);
		ec.gpus = gpu_ids;
		ec.ngpus = a->nqueues;
	}
	if (app_create_exec(a, &ec) < 0 || create_pools(a, pools, data_room_of(a)) < 0) {
		rc = 1;
		goto out;
	}
	for (unsigned p = 0; p < a->nports; p++)
		if (gcap_port_configure(&a->ports[p], (uint16_t)o->queues,
					(uint16_t)o->nb_rxd, pools + p * o->queues,
					a->err) < 0) {
			rc = app_err("%s", a->err);
			goto out;
		}
	app_meta_ifs(a, wifs);
	if (app_open_writers(a, wifs, a->nports) < 0 || app_create_pipeline(a) < 0) {
		rc = a->reader_gone ? 0 : 1;
		goto out;
	}
	for (unsigned p = 0; p < a->nports; p++)
		if (gcap_port_start(&a->ports[p], a->err) < 0) {
			rc = app_err("%s", a->err);
			goto out;
		}
	/* -Z: everything that needs root is set up */
	if (app_privs_drop(&a->creds, o->quiet) < 0) {
		rc = 1;
		goto out;
	}
	a->t_start = app_mono_ns();
	a->cpu_start = app_cpu_seconds();
	app_signals_watch(a->pl);
	app_observe_publish(a);
	if (gcap_pipeline_start(a->pl, a->err) < 0) {
		rc = app_err("%s", a->err);
		goto out;
	}
	app_service_ready(a);
	rc = capture_loop(a);
	/* the readers go first: none reads the kernel state while the
	 * executor stops */
	app_observe_unpublish();
	app_service_stopping(a);
	{
		/* an error the loop printed is not printed again */
		char prev[GCAP_ERRBUF_SIZE];

		snprintf(prev, sizeof(prev), "%s", rc != 0 ? a->err : "");
		r = gcap_pipeline_stop(a->pl, APP_STOP_TIMEOUT_MS, a->err);
		app_signals_watch(NULL);
		if (r < 0 && strcmp(prev, a->err) != 0)
			rc = app_err("%s", a->err);
		else if (r < 0)
			rc = 1;
	}
	a->abandoned = gcap_pipeline_abandoned(a->pl);
	app_report_if_stats(a, st);
	rc = app_finish(a, st, rc);
out:
	app_observe_unpublish();
	app_metrics_stop(a->metrics);
	a->metrics = NULL;
	app_signals_watch(NULL);
	app_close_writers(a, NULL);
	if (a->abandoned)
		return rc; /* a thread still runs in the kernel: leave it all */
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
