/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports once the EAL has made them: the ethdev of a parsed `-i` argument
 * (named as its kind has it, port_internal.h), its RX queues and their
 * pools, start, stop and close, and the NIC's counters. What `-i`
 * accepts is port_kind.c's; the EAL set-up is eal.c's; the packets'
 * clock is port_clock.c's. Promiscuous mode is turned on at start and,
 * where it was off, off again at close (tcpdump's -p leaves it alone).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "port_internal.h"

int
gcap_port_find(struct gcap_port *p, char *errbuf)
{
	const struct gcap_port_kind_ops *k = gcap_port_kind(p->kind);
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t id;

	if (k->create != NULL)
		return p->kind_priv != NULL ? 0 : k->create(p, errbuf);
	if (k->ethdev_name != NULL)
		k->ethdev_name(p, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "%s", p->name);
	if (rte_eth_dev_get_port_by_name(name, &id) != 0)
		return gcap_err(errbuf, ENODEV,
				"%s: no such port (unknown driver, bad arguments, or no "
				"such device)",
				p->spec);
	p->port_id = id;
	p->socket = rte_eth_dev_socket_id(id);
	return 0;
}

uint32_t
gcap_port_max_frame(const struct gcap_port *p)
{
	const struct gcap_port_kind_ops *k = gcap_port_kind(p->kind);
	uint16_t mtu = 0;

	if (k->max_frame != NULL)
		return k->max_frame(p);
	if (rte_eth_dev_get_mtu(p->port_id, &mtu) != 0 || mtu == 0)
		return 0;
	return (uint32_t)mtu + RTE_ETHER_HDR_LEN + 2u * RTE_VLAN_HLEN;
}

uint16_t
gcap_port_whole_room(uint32_t max_frame)
{
	uint32_t room = RTE_PKTMBUF_HEADROOM + ((max_frame + 63u) & ~63u);

	if (room <= RTE_MBUF_DEFAULT_BUF_SIZE)
		return RTE_MBUF_DEFAULT_BUF_SIZE;
	return (uint16_t)(room > (UINT16_MAX & ~63u) ? UINT16_MAX & ~63u : room);
}

int
gcap_port_configure(struct gcap_port *p, uint16_t nqueues, uint16_t nb_rxd,
		    struct rte_mempool *const *pools, char *errbuf)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t nb_txd = 0;
	int r;

	r = rte_eth_dev_info_get(p->port_id, &info);
	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot get device info: %s", p->spec,
				rte_strerror(-r));
	if (nqueues == 0 || nqueues > info.max_rx_queues)
		return gcap_err(errbuf, EINVAL,
				"%s: %u RX queues asked, the port has at most %u",
				p->spec, nqueues, info.max_rx_queues);
	memset(&conf, 0, sizeof(conf));
	r = gcap_port_clock_conf(p, &info, &conf.rxmode.offloads, errbuf);
	if (r < 0)
		return r;
	if (nqueues > 1 && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
	}
	/* receive only: no TX queue (drivers that insist get one) */
	r = rte_eth_dev_configure(p->port_id, nqueues, 0, &conf);
	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot configure %u RX queues: %s",
				p->spec, nqueues, rte_strerror(-r));
	r = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot size the RX ring: %s", p->spec,
				rte_strerror(-r));
	for (uint16_t q = 0; q < nqueues; q++) {
		r = rte_eth_rx_queue_setup(p->port_id, q, nb_rxd,
					   (unsigned)p->socket < RTE_MAX_NUMA_NODES ?
						   (unsigned)p->socket :
						   SOCKET_ID_ANY,
					   NULL, pools[q]);
		if (r != 0)
			return gcap_err(errbuf, -r, "%s: cannot set up RX queue %u: %s",
					p->spec, q, rte_strerror(-r));
	}
	p->nqueues = nqueues;
	if (gcap_port_kind(p->kind)->attach != NULL)
		return gcap_port_kind(p->kind)->attach(p, pools, errbuf);
	return 0;
}

/* Whether the port is promiscuous now: a Linux interface's own flag (the
 * ethdev does not know what others set), else the ethdev's. */
static bool
promisc_now(const struct gcap_port *p)
{
	if (p->kind == GCAP_PORT_IFACE) {
		struct ifreq ifr;
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		bool on = false;

		memset(&ifr, 0, sizeof(ifr));
		/* (iface_match: the name is shorter than IF_NAMESIZE) */
		memcpy(ifr.ifr_name, p->name, strnlen(p->name, sizeof(ifr.ifr_name) - 1));
		if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
			on = (ifr.ifr_flags & IFF_PROMISC) != 0;
		if (fd >= 0)
			close(fd);
		return on;
	}
	return rte_eth_promiscuous_get(p->port_id) == 1;
}

int
gcap_port_start(struct gcap_port *p, char *errbuf)
{
	bool was = p->no_promisc || promisc_now(p);
	int r = rte_eth_dev_start(p->port_id);

	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot start: %s", p->spec,
				rte_strerror(-r));
	p->started = true;
	/* not every driver has a promiscuous mode (virtual ones) */
	if (!was)
		p->promisc_set = rte_eth_promiscuous_enable(p->port_id) == 0;
	r = gcap_port_clock_start(p, errbuf);
	if (r < 0)
		return r;
	rte_eth_stats_reset(p->port_id);
	if (gcap_port_kind(p->kind)->start != NULL)
		return gcap_port_kind(p->kind)->start(p, errbuf);
	return 0;
}

void
gcap_port_close(struct gcap_port *p)
{
	if (p->promisc_set) {
		(void)rte_eth_promiscuous_disable(p->port_id);
		p->promisc_set = false;
	}
	if (p->started) {
		if (gcap_port_kind(p->kind)->stop != NULL)
			gcap_port_kind(p->kind)->stop(p);
		rte_eth_dev_stop(p->port_id);
		p->started = false;
	}
	rte_eth_dev_close(p->port_id);
	if (gcap_port_kind(p->kind)->close != NULL)
		gcap_port_kind(p->kind)->close(p);
}

int
gcap_port_stats(const struct gcap_port *p, struct gcap_port_stats *st)
{
	struct rte_eth_stats s;
	int r = rte_eth_stats_get(p->port_id, &s);

	memset(st, 0, sizeof(*st));
	if (r != 0)
		return r;
	st->ipackets = s.ipackets;
	st->ibytes = s.ibytes;
	st->imissed = s.imissed;
	st->ierrors = s.ierrors;
	st->rx_nombuf = s.rx_nombuf;
	return 0;
}

int
gcap_port_describe(const struct gcap_port *p, struct gcap_port_desc *d)
{
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	struct rte_eth_link link;
	int r;

	memset(d, 0, sizeof(*d));
	r = rte_eth_dev_info_get(p->port_id, &info);
	if (r != 0)
		return r;
	snprintf(d->driver, sizeof(d->driver), "%s", info.driver_name ?: "?");
	if (info.device != NULL) {
		const struct rte_bus *bus = rte_dev_bus(info.device);
		const char *bi = rte_dev_bus_info(info.device);

		snprintf(d->hardware, sizeof(d->hardware), "%s %s%s%s%s",
			 bus != NULL ? rte_bus_name(bus) : "?", rte_dev_name(info.device),
			 bi != NULL ? " (" : "", bi != NULL ? bi : "",
			 bi != NULL ? ")" : "");
	}
	if (rte_eth_macaddr_get(p->port_id, &mac) == 0 && !rte_is_zero_ether_addr(&mac)) {
		memcpy(d->mac, mac.addr_bytes, sizeof(d->mac));
		d->has_mac = true;
	}
	/* (a port not started yet may say its link is down, with its speed) */
	if (rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
	    link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
	    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		d->speed_bps = (uint64_t)link.link_speed * 1000000u;
	return 0;
}
