/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu-capture -i PORT...: capture DPDK ports. The EAL, the ports, their
 * queues and pools are set up here, every check done before a port
 * starts; then the main thread watches the capture (stop, --duration,
 * --stats) until it ends, and takes everything down in order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "gpucap/gcap_gpu.h"
#include "app_err.h"
#include "report.h"
#include "run.h"

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

/* The main thread while the RX lcores capture: every 20 ms, the stop
 * conditions (a signal, the pipeline done, --duration, its health), and
 * the --stats line with its kernel state snapshot. */
static int
capture_loop(struct app *a)
{
	const struct app_opts *o = a->o;
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
		if (now >= end)
			break;
		if (o->stats_secs && now >= next_stats) {
			app_report_stats_line(a, &prev, (double)(now - last) / 1e9);
			/* the kernel's state while running: the file is
			 * replaced (rename) with a snapshot every interval */
			if (o->kernel_state != NULL && a->ex != NULL &&
			    a->ops->kernel_state(a->ex, o->kernel_state, a->err) < 0 &&
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
	unsigned rx_ids[RTE_MAX_LCORE], nrx;
	int r, rc = 0;
	bool eal = false;

	for (unsigned i = 0; i < o->nports; i++) {
		if (gcap_port_parse(o->ports[i], i, &a->ports[i], a->err) < 0)
			return app_err("%s", a->err);
		a->ports[i].nqueues = (uint16_t)o->queues;
		a->nports++;
	}
	a->linktype = DLT_EN10MB;
	if (app_compile_filters(a) < 0)
		return 1;
	if (o->dump_level > 0)
		return app_dump_filters(a);
	if (app_choose_backend(a) != 0)
		return 1;
	a->nqueues = a->nports * o->queues;
	app_exec_conf(a, &ec, a->nqueues,
		      o->mem == GCAP_MEM_GPU ? 0 : GCAP_PIPELINE_STAGE_LIVE,
		      RTE_MBUF_DEFAULT_DATAROOM);
	if (o->dump_gpu_code)
		return app_dump_gpu_code(a, &ec);
	/* one RX lcore per queue, or as many as --lcores names when fewer */
	nrx = o->nlcores && o->nlcores < a->nqueues ? o->nlcores : a->nqueues;
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
			return app_err("%s", a->err);
		eal = true;
	}
	for (unsigned i = 0; i < a->nports; i++)
		if (gcap_port_find(&a->ports[i], a->err) < 0) {
			rc = app_err("%s", a->err);
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
	if (app_create_exec(a, &ec) < 0 ||
	    create_pools(a, pools, RTE_MBUF_DEFAULT_BUF_SIZE) < 0) {
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
	for (unsigned p = 0; p < a->nports; p++) {
		wifs[p].name = a->ports[p].name;
		wifs[p].linktype = DLT_EN10MB;
	}
	if (app_open_writers(a, wifs, a->nports) < 0 || app_create_pipeline(a) < 0) {
		rc = 1;
		goto out;
	}
	for (unsigned p = 0; p < a->nports; p++)
		if (gcap_port_start(&a->ports[p], a->err) < 0) {
			rc = app_err("%s", a->err);
			goto out;
		}
	a->t_start = app_mono_ns();
	a->cpu_start = app_cpu_seconds();
	app_signals_watch(a->pl);
	if (gcap_pipeline_start(a->pl, a->err) < 0) {
		rc = app_err("%s", a->err);
		goto out;
	}
	rc = capture_loop(a);
	r = gcap_pipeline_stop(a->pl, APP_STOP_TIMEOUT_MS, a->err);
	app_signals_watch(NULL);
	if (r < 0)
		rc = app_err("%s", a->err);
	app_report_if_stats(a, st);
	rc = app_finish(a, st, rc);
out:
	app_signals_watch(NULL);
	app_close_writers(a, NULL);
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
