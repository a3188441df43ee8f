/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rx_floor: the most packets an RX lcore can take from a port when it does
 * nothing else. Each RX queue gets an lcore that receives bursts and gives
 * the mbufs straight back to their pool: the part of an RX lcore's work
 * that no executor (cpu or gpu) can take off it. gpu-capture's RX lcores
 * add to it the batching, the descriptors, the doorbells, and with the cpu
 * backend the filtering. So with the same ports and lcores:
 *
 *   floor / cpu backend = the most any executor could beat the cpu backend
 *                         by on that source;
 *   gpu backend / floor = the share of the floor the gpu path reaches.
 *
 * Ports, queues, lcores and mempools are made as gpu-capture makes them for
 * the cpu backend (gcap_port, 256-mbuf per-lcore caches, the same number
 * of mbufs per queue, RSS over the queues, the same CPUs). With --mem gpu
 * the pools are made as gpu-capture --mem gpu makes them: by the gpu
 * executor, data rooms in VRAM as large as the port's largest frame, one
 * mbuf a frame; the executor is only made, never given a batch. That is
 * the floor of the --mem gpu rows (the emulated GPUDirect NIC), whose
 * rooms and chains differ from the host pools'.
 *
 * usage: rx_floor [-t SECONDS] [-q QUEUES] [--mbufs N] [--rxd N] [--burst N]
 *                 [--lcores CPULIST] [--read] [--mem host|gpu] [--json FILE]
 *                 [-v] -i PORT [-i PORT...]
 *   --burst  packets asked of each rx_burst (default 256: gpu-capture asks
 *            for what its open batch of --batch 256 has room for)
 *   --read   also read each packet's first 64 bytes (what a filter on the
 *            CPU cannot avoid), summed so that the loads stay
 *   -v       the EAL's and the ports' logs (the emulated NIC's counters
 *            per queue at the end), as gpu-capture -v
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <pcap/bpf.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_pipeline.h"
#include "gpucap/gcap_port.h"

#define MAX_PORTS 16
#define MAX_QUEUES 64
#define BURST_MAX 512

struct rxq {
	uint16_t port_id, queue;
	unsigned lcore;
	uint64_t pkts, bytes, sum; /* written by its lcore when it stops */
} __rte_cache_aligned;

/* set by main or a signal (lock-free, so async-signal-safe), read by the
 * lcores; exited: lcores done, release on their results (acquired by main
 * after the EAL's wait, which orders them inside DPDK, out of sight) */
static atomic_bool stop;
static atomic_uint exited;
static struct rxq rxqs[MAX_QUEUES];
static unsigned nrxq;
static bool read_bytes;
static uint16_t burst = 256;

/* Give n mbufs back: one put when each is a single segment that nothing
 * else references (what the PMDs here hand out), else DPDK's general
 * path. */
static inline void
give_back(struct rte_mbuf **m, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (m[i]->nb_segs != 1 || rte_mbuf_refcnt_read(m[i]) != 1 ||
		    m[i]->pool != m[0]->pool) {
			rte_pktmbuf_free_bulk(m, n);
			return;
		}
	rte_mempool_put_bulk(m[0]->pool, (void **)m, n);
}

static int
rx_lcore(void *arg)
{
	struct rxq *q = arg;
	struct rte_mbuf *m[BURST_MAX];
	uint64_t pkts = 0, bytes = 0, sum = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint16_t n = rte_eth_rx_burst(q->port_id, q->queue, m, burst);

		for (unsigned i = 0; i < n; i++) {
			bytes += m[i]->pkt_len;
			if (read_bytes) {
				const uint64_t *w =
					rte_pktmbuf_mtod(m[i], const uint64_t *);
				unsigned nw =
					m[i]->data_len >= 64 ? 8 : m[i]->data_len / 8;

				for (unsigned k = 0; k < nw; k++)
					sum += w[k];
			}
		}
		if (n > 0)
			give_back(m, n);
		pkts += n;
	}
	q->pkts = pkts;
	q->bytes = bytes;
	q->sum = sum;
	atomic_fetch_add_explicit(&exited, 1, memory_order_release);
	return 0;
}

static void
on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, true);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: rx_floor [-t SECONDS] [-q QUEUES] [--mbufs N] [--rxd N] "
		   "[--burst N]\n"
		   "                [--lcores CPULIST] [--read] [--mem host|gpu] "
		   "[--json FILE]\n"
		   "                [-v] -i PORT [-i PORT...]\n");
}

/* --mem gpu: a gpu executor only to make the pools (data rooms in VRAM,
 * its pool_create as gpu-capture calls it); its rings and export memory
 * are small, since no batch is ever submitted and its kernels never
 * start. @return it, or NULL after the message. */
static struct gcap_exec *
gpu_pools_exec(unsigned nqueues, char *err)
{
	static struct bpf_program all; /* bf_len 0: every packet */
	struct gcap_exec_conf c = {
		.nqueues = nqueues,
		.ring_size = 16,
		.batch_max = 256,
		.snaplen = 262144,
		.nfilters = 1,
		.filters = &all,
		.linktype = DLT_EN10MB,
		.mem = GCAP_MEM_GPU,
	};
	struct gcap_exec *ex;

	(void)gcap_pipeline_xmem_size(c.ring_size, c.batch_max, 2048, 0, &c.nxbufs,
				      &c.xbuf_size);
	ex = gcap_exec_gpu_ops()->create(&c, err);
	if (ex == NULL)
		fprintf(stderr, "rx_floor: --mem gpu: %s\n", err);
	return ex;
}

static unsigned long
num(const char *opt, const char *s, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "rx_floor: %s: '%s' is not a number in [%lu, %lu]\n", opt,
			s, min, max);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "mbufs", required_argument, NULL, 'm' },
		{ "rxd", required_argument, NULL, 'r' },
		{ "lcores", required_argument, NULL, 'l' },
		{ "read", no_argument, NULL, 'R' },
		{ "burst", required_argument, NULL, 'b' },
		{ "json", required_argument, NULL, 'j' },
		{ "queues", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 't' },
		{ "mem", required_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	static struct gcap_port ports[MAX_PORTS];
	const char *specs[MAX_PORTS], *cpus = NULL, *json = NULL;
	unsigned nports = 0, queues = 1, secs = 3, nb_rxd = 1024, mbufs = 0;
	unsigned ids[RTE_MAX_LCORE];
	struct rte_mempool *pools[MAX_QUEUES];
	char err[GCAP_ERRBUF_SIZE];
	struct gcap_exec *ex = NULL;
	bool gpu_mem = false, verbose = false;
	uint64_t t0, t1, pkts = 0, bytes = 0;
	double s;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "i:q:t:hv", lopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (nports == MAX_PORTS) {
				fprintf(stderr, "rx_floor: at most %d ports\n",
					MAX_PORTS);
				return 2;
			}
			specs[nports++] = optarg;
			break;
		case 'q': queues = (unsigned)num("-q", optarg, 1, MAX_QUEUES); break;
		case 't': secs = (unsigned)num("-t", optarg, 1, 3600); break;
		case 'm': mbufs = (unsigned)num("--mbufs", optarg, 64, 1u << 24); break;
		case 'r': nb_rxd = (unsigned)num("--rxd", optarg, 32, 32768); break;
		case 'l': cpus = optarg; break;
		case 'R': read_bytes = true; break;
		case 'b': burst = (uint16_t)num("--burst", optarg, 1, BURST_MAX); break;
		case 'j': json = optarg; break;
		case 'M':
			if (strcmp(optarg, "gpu") != 0 && strcmp(optarg, "host") != 0) {
				fprintf(stderr,
					"rx_floor: --mem '%s': host (the cpu "
					"backend's pools) or gpu\n",
					optarg);
				return 2;
			}
			gpu_mem = strcmp(optarg, "gpu") == 0;
			break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (nports == 0 || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (gpu_mem && read_bytes) {
		fprintf(stderr, "rx_floor: --read with --mem gpu: the packets are in "
				"VRAM, which the CPU does not read\n");
		return 2;
	}
	nrxq = nports * queues;
	if (nrxq > MAX_QUEUES) {
		fprintf(stderr, "rx_floor: at most %d queues in all\n", MAX_QUEUES);
		return 2;
	}
	/* as many mbufs a queue as gpu-capture's default (--rxd, --batch 256,
	 * --ring 16) */
	if (mbufs == 0)
		mbufs = nb_rxd + 256 * (16 + 2) + 512;
	for (unsigned i = 0; i < nports; i++)
		if (gcap_port_parse(specs[i], i, &ports[i], err) < 0) {
			fprintf(stderr, "rx_floor: %s\n", err);
			return 2;
		} else {
			ports[i].nqueues = (uint16_t)queues;
		}
	{
		struct gcap_eal_conf ec = {
			.prog = "rx_floor",
			.ports = ports,
			.nports = nports,
			.nlcores = 1 + nrxq,
			.cpus = cpus,
			.mem_mb = 256 + 32 * nrxq,
			.verbose = verbose,
		};

		if (gcap_eal_init(&ec, err) < 0) {
			fprintf(stderr, "rx_floor: %s\n", err);
			return 1;
		}
	}
	if (gcap_rx_lcores(ids, RTE_MAX_LCORE) < nrxq) {
		fprintf(stderr, "rx_floor: the EAL gave fewer lcores than queues\n");
		rc = 1;
		goto out;
	}
	for (unsigned p = 0; p < nports; p++)
		if (gcap_port_find(&ports[p], err) < 0) {
			fprintf(stderr, "rx_floor: %s\n", err);
			rc = 1;
			goto out;
		}
	if (gpu_mem && (ex = gpu_pools_exec(nrxq, err)) == NULL) {
		rc = 1;
		goto out;
	}
	for (unsigned p = 0; p < nports; p++) {
		for (unsigned k = 0; k < queues; k++) {
			unsigned qi = p * queues + k;
			char name[RTE_MEMPOOL_NAMESIZE];
			int socket = ports[p].socket >= 0 ? ports[p].socket :
							    (int)rte_socket_id();

			snprintf(name, sizeof(name), "rxf_p%u_q%u", p, k);
			if (ex != NULL) {
				pools[qi] = gcap_exec_gpu_ops()->pool_create(
					ex, qi, ports[p].port_id, name, mbufs,
					gcap_port_whole_room(
						gcap_port_max_frame(&ports[p])),
					socket, err);
				if (pools[qi] == NULL) {
					fprintf(stderr, "rx_floor: %s: %s\n", specs[p],
						err);
					rc = 1;
					goto out;
				}
			} else {
				pools[qi] = rte_pktmbuf_pool_create(
					name, mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					socket);
			}
			if (pools[qi] == NULL) {
				fprintf(stderr,
					"rx_floor: cannot create a pool of %u mbufs: "
					"%s\n",
					mbufs, rte_strerror(rte_errno));
				rc = 1;
				goto out;
			}
			rxqs[qi] = (struct rxq){ .port_id = ports[p].port_id,
						 .queue = (uint16_t)k,
						 .lcore = ids[qi] };
		}
		if (gcap_port_configure(&ports[p], (uint16_t)queues, (uint16_t)nb_rxd,
					pools + p * queues, err) < 0 ||
		    gcap_port_start(&ports[p], err) < 0) {
			fprintf(stderr, "rx_floor: %s\n", err);
			rc = 1;
			goto out;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = rte_get_timer_cycles();
	for (unsigned qi = 0; qi < nrxq; qi++)
		rte_eal_remote_launch(rx_lcore, &rxqs[qi], rxqs[qi].lcore);
	for (unsigned i = 0; i < secs * 10 && !atomic_load(&stop); i++)
		usleep(100000);
	atomic_store(&stop, true);
	rte_eal_mp_wait_lcore();
	(void)atomic_load_explicit(&exited, memory_order_acquire);
	t1 = rte_get_timer_cycles();
	s = (double)(t1 - t0) / (double)rte_get_timer_hz();
	for (unsigned qi = 0; qi < nrxq; qi++) {
		pkts += rxqs[qi].pkts;
		bytes += rxqs[qi].bytes;
	}
	printf("rx_floor: %u queue(s)%s%s, %.3f s: %.1f Mpps, %.2f Gb/s (per queue:",
	       nrxq, read_bytes ? ", reading 64 bytes a packet" : "",
	       gpu_mem ? ", data rooms in VRAM" : "", s, (double)pkts / s / 1e6,
	       (double)bytes * 8 / s / 1e9);
	for (unsigned qi = 0; qi < nrxq; qi++)
		printf(" %.1f", (double)rxqs[qi].pkts / s / 1e6);
	printf(" Mpps)\n");
	if (json != NULL) {
		FILE *f = fopen(json, "w");

		if (f == NULL) {
			fprintf(stderr, "rx_floor: %s: %s\n", json, strerror(errno));
			rc = 1;
		} else {
			fprintf(f,
				"{\"queues\": %u, \"read\": %s, \"mem\": \"%s\", "
				"\"seconds\": %.3f, "
				"\"rx_pkts\": %" PRIu64 ", \"rx_mpps\": %.3f, "
				"\"rx_gbps\": %.3f}\n",
				nrxq, read_bytes ? "true" : "false",
				gpu_mem ? "gpu" : "host", s, pkts, (double)pkts / s / 1e6,
				(double)bytes * 8 / s / 1e9);
			if (fclose(f) != 0)
				rc = 1;
		}
	}
out:
	for (unsigned p = 0; p < nports; p++)
		gcap_port_close(&ports[p]);
	if (ex != NULL) /* after the ports: the pools' memory is its */
		gcap_exec_gpu_ops()->destroy(ex);
	rte_eal_cleanup();
	return rc;
}
