/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a port's packets get their time (tcpdump's -j and -J): the RX
 * timestamp a driver puts in each mbuf (DPDK's rte_mbuf_dyn_rx_timestamp
 * field), converted to nanoseconds since the epoch, else the host's clock.
 * A NIC with RTE_ETH_RX_OFFLOAD_TIMESTAMP (mlx5) counts its own clock: it
 * is read with rte_eth_read_clock() against CLOCK_REALTIME twice, 20 ms
 * apart, at start (its rate and offset: "adapter"), or only scaled to
 * nanoseconds ("adapter_unsynced"). A driver that stamps packets with a
 * time of its own (net_pcap: each packet's time in the file) is taken as
 * it says.
 */
/* rte_eth_read_clock() is still experimental in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf_dyn.h>

#include "port_internal.h"

/* Drivers whose RX timestamp is a time since the epoch, not a NIC
 * counter, and its unit. Any other driver that stamps packets without
 * the offload is taken as nanoseconds since the epoch. */
static const struct {
	const char *driver;
	uint64_t ns_per_unit;
} epoch_clocks[] = {
	{ "net_pcap", 1000 }, /* DPDK 22.11: the file's time, in microseconds */
};

static const char *const tstamp_names[] = {
	[GCAP_TSTAMP_AUTO] = "auto",
	[GCAP_TSTAMP_HOST] = "host",
	[GCAP_TSTAMP_ADAPTER] = "adapter",
	[GCAP_TSTAMP_ADAPTER_UNSYNCED] = "adapter_unsynced",
};

const char *
gcap_tstamp_name(enum gcap_tstamp t)
{
	return (unsigned)t < sizeof(tstamp_names) / sizeof(tstamp_names[0]) ?
		       tstamp_names[t] :
		       "?";
}

/* The unit of a driver in epoch_clocks (ns), or 0. */
static uint64_t
epoch_unit(const char *driver)
{
	for (size_t i = 0; i < sizeof(epoch_clocks) / sizeof(epoch_clocks[0]); i++)
		if (driver != NULL && strcmp(driver, epoch_clocks[i].driver) == 0)
			return epoch_clocks[i].ns_per_unit;
	return 0;
}

unsigned
gcap_port_tstamp_types(const struct gcap_port *p, enum gcap_tstamp *types, unsigned max)
{
	struct rte_eth_dev_info info;
	enum gcap_tstamp t[3];
	unsigned n = 0;

	t[n++] = GCAP_TSTAMP_HOST;
	if (rte_eth_dev_info_get(p->port_id, &info) == 0) {
		if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) {
			t[n++] = GCAP_TSTAMP_ADAPTER;
			t[n++] = GCAP_TSTAMP_ADAPTER_UNSYNCED;
		} else if (epoch_unit(info.driver_name) != 0) {
			t[n++] = GCAP_TSTAMP_ADAPTER;
		}
	}
	for (unsigned i = 0; i < n && i < max; i++)
		types[i] = t[i];
	return n < max ? n : max;
}

int
gcap_port_clock_conf(struct gcap_port *p, const struct rte_eth_dev_info *info,
		     uint64_t *offloads, char *errbuf)
{
	bool hw = (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0;

	p->hw_ts = false;
	if (p->tstamp == GCAP_TSTAMP_HOST)
		return 0;
	if (!hw && p->tstamp == GCAP_TSTAMP_ADAPTER_UNSYNCED)
		return gcap_err(errbuf, ENOTSUP,
				"%s: no time stamp type adapter_unsynced: the port has "
				"no clock of its own (-J lists its types)",
				p->spec);
	if (!hw && p->tstamp == GCAP_TSTAMP_ADAPTER && epoch_unit(info->driver_name) == 0)
		return gcap_err(errbuf, ENOTSUP,
				"%s: no time stamp type adapter: the port does not "
				"time stamp packets (-J lists its types)",
				p->spec);
	if (hw) {
		*offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
		p->hw_ts = true;
	}
	return 0;
}

/* One reading of the NIC's clock and the real time it was taken at (the
 * middle of the two clock_gettime() around it). */
static int
clock_pair(uint16_t port_id, uint64_t *raw, uint64_t *ns)
{
	struct timespec a, b;
	int r;

	clock_gettime(CLOCK_REALTIME, &a);
	r = rte_eth_read_clock(port_id, raw);
	clock_gettime(CLOCK_REALTIME, &b);
	*ns = ((uint64_t)a.tv_sec * 1000000000u + (uint64_t)a.tv_nsec +
	       (uint64_t)b.tv_sec * 1000000000u + (uint64_t)b.tv_nsec) /
	      2;
	return r;
}

/* The NIC clock's rate (and, for adapter, its offset to real time). */
static int
calibrate(struct gcap_port *p, char *errbuf)
{
	struct timespec gap = { 0, 20000000 };
	uint64_t r1, r2, n1, n2;
	int r = clock_pair(p->port_id, &r1, &n1);

	if (r == 0) {
		nanosleep(&gap, NULL);
		r = clock_pair(p->port_id, &r2, &n2);
	}
	if (r == 0 && (r2 <= r1 || n2 <= n1))
		r = -EINVAL;
	if (r != 0)
		return gcap_err(errbuf, r == -EINVAL ? EINVAL : ENOTSUP,
				"%s: cannot read the port's clock (%s): use -j host",
				p->spec, rte_strerror(r < 0 ? -r : r));
	p->clock.mult = (uint64_t)(((unsigned __int128)(n2 - n1) << 32) / (r2 - r1));
	if (p->tstamp == GCAP_TSTAMP_ADAPTER_UNSYNCED) {
		p->clock.raw0 = 0;
		p->clock.ns0 = 0;
	} else {
		p->clock.raw0 = r2;
		p->clock.ns0 = n2;
	}
	return 0;
}

int
gcap_port_clock_start(struct gcap_port *p, char *errbuf)
{
	struct rte_eth_dev_info info;
	int off, bit;

	memset(&p->clock, 0, sizeof(p->clock));
	if (p->tstamp == GCAP_TSTAMP_HOST)
		return 0;
	/* the driver registers the field when it can stamp packets */
	off = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);
	if (off < 0 || bit < 0) {
		if (p->tstamp == GCAP_TSTAMP_AUTO)
			return 0;
		return gcap_err(errbuf, ENOTSUP,
				"%s: the driver registered no RX time stamp: use -j "
				"host",
				p->spec);
	}
	p->clock.off = off;
	if (p->hw_ts) {
		int r = calibrate(p, errbuf);

		if (r < 0) {
			memset(&p->clock, 0, sizeof(p->clock));
			return p->tstamp == GCAP_TSTAMP_AUTO ? 0 : r;
		}
	} else {
		uint64_t unit = 1;

		if (rte_eth_dev_info_get(p->port_id, &info) == 0 &&
		    epoch_unit(info.driver_name) != 0)
			unit = epoch_unit(info.driver_name);
		p->clock.mult = unit << 32;
	}
	p->clock.flag = UINT64_C(1) << bit;
	return 0;
}
