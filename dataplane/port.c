/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports once the EAL has made them: the ethdev of a parsed `-i` argument
 * (named as its kind has it, port_internal.h), its RX queues and their
 * pools, start, stop and close, and the NIC's counters. What `-i`
 * accepts is port_kind.c's; the EAL set-up is eal.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int
gcap_port_start(struct gcap_port *p, char *errbuf)
{
	int r = rte_eth_dev_start(p->port_id);

	if (r != 0)
		return gcap_err(errbuf, -r, "%s: cannot start: %s", p->spec,
				rte_strerror(-r));
	p->started = true;
	/* not every driver has a promiscuous mode (virtual ones) */
	(void)rte_eth_promiscuous_enable(p->port_id);
	rte_eth_stats_reset(p->port_id);
	if (gcap_port_kind(p->kind)->start != NULL)
		return gcap_port_kind(p->kind)->start(p, errbuf);
	return 0;
}

void
gcap_port_close(struct gcap_port *p)
{
	if (p->started) {
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
