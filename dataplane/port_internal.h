/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kinds of port that `-i` names, as the table in port_kind.c has them
 * (private to dataplane/): how each is recognised and checked, what the
 * EAL is given to create it (eal.c) and the name of the ethdev that
 * results (port.c). A new kind is a value of enum gcap_port_kind and one
 * row of the table.
 */
#ifndef GCAP_PORT_INTERNAL_H
#define GCAP_PORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpucap/gcap_port.h"

struct gcap_port_kind_ops {
	/* how a message lists the kinds: "a PCI address", ... */
	const char *what;
	/* whether spec is written as a port of this kind (syntax only) */
	bool (*match)(const char *spec);
	/* check spec (a spec that matched) and set p->name and p->devargs.
	 * @return 0, or a negative errno with a message in errbuf */
	int (*parse)(const char *spec, struct gcap_port *p, char *errbuf);
	/* the EAL option that creates the port from p->devargs: "-a" or
	 * "--vdev" */
	const char *eal_opt;
	/* a PCI device: the EAL keeps its PCI bus for it (else --no-pci) */
	bool pci;
	/* at EAL set-up, p->devargs from what is known only then (the RX
	 * queues), nth: the port's position among the EAL's ports; NULL:
	 * parse's stand */
	void (*eal_devargs)(struct gcap_port *p, unsigned nth);
	/* the name the EAL gives the port's ethdev; NULL: p->name */
	void (*ethdev_name)(const struct gcap_port *p, char *name, size_t size);
	/* a kind the EAL does not make (eal_opt NULL): after the EAL, make
	 * its ethdev and set p->port_id (gcap_port_find) */
	int (*create)(struct gcap_port *p, char *errbuf);
	/* optional: the pools its queues receive into (gcap_port_configure) */
	int (*attach)(struct gcap_port *p, struct rte_mempool *const *pools,
		      char *errbuf);
	/* optional: the largest frame it delivers (gcap_port_max_frame);
	 * NULL: from the ethdev's MTU */
	uint32_t (*max_frame)(const struct gcap_port *p);
	/* optional: after the ethdev started (gcap_port_start) */
	int (*start)(struct gcap_port *p, char *errbuf);
	/* optional: before a started ethdev stops (gcap_port_close), no
	 * lcore polling it: undo start while the port still exists */
	void (*stop)(struct gcap_port *p);
	/* optional: after the ethdev closed, free what create made */
	void (*close)(struct gcap_port *p);
};

/* The emulated GPUDirect NIC's row (port_gpunic.c). */
bool gcap_gpunic_match(const char *spec);
int gcap_gpunic_parse(const char *spec, struct gcap_port *p, char *errbuf);
int gcap_gpunic_port_create(struct gcap_port *p, char *errbuf);
int gcap_gpunic_port_attach(struct gcap_port *p, struct rte_mempool *const *pools,
			    char *errbuf);
int gcap_gpunic_port_start(struct gcap_port *p, char *errbuf);
void gcap_gpunic_port_stop(struct gcap_port *p);
void gcap_gpunic_port_close(struct gcap_port *p);
uint32_t gcap_gpunic_port_max_frame(const struct gcap_port *p);

/* The row of a kind. */
const struct gcap_port_kind_ops *gcap_port_kind(enum gcap_port_kind kind);

struct rte_eth_dev_info;

/* port_clock.c: before configure, the RX offloads p->tstamp needs (added
 * to *offloads). @return 0, or -ENOTSUP (message in errbuf) when the
 * port cannot give that time. */
int gcap_port_clock_conf(struct gcap_port *p, const struct rte_eth_dev_info *info,
			 uint64_t *offloads, char *errbuf);
/* port_clock.c: after start, p->clock (a NIC clock calibrated).
 * @return 0, or -ENOTSUP/-EINVAL (message in errbuf). */
int gcap_port_clock_start(struct gcap_port *p, char *errbuf);

#endif /* GCAP_PORT_INTERNAL_H */
