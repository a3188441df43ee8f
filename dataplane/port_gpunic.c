/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port kind of the emulated GPUDirect NIC (`-i gpunic0,rx_pcap=FILE`):
 * its row's functions for port_kind.c's table. The NIC itself (captures
 * staged in VRAM, the GPU writing the data rooms, the feeding threads) is
 * the gpu module's (gcap_gpunic.h); here it is only named, checked before
 * the EAL, made after it and tied to the port's life.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "gpucap/gcap_gpunic.h"
#include "port_internal.h"

/* "gpunic" and a number, then ",..." or nothing */
bool
gcap_gpunic_match(const char *s)
{
	size_t i = 6;

	if (strncmp(s, "gpunic", 6) != 0 || !isdigit((unsigned char)s[6]))
		return false;
	while (isdigit((unsigned char)s[i]))
		i++;
	return s[i] == ',' || s[i] == '\0';
}

int
gcap_gpunic_parse(const char *spec, struct gcap_port *p, char *errbuf)
{
	size_t n = strcspn(spec, ",");
	char why[GCAP_ERRBUF_SIZE];
	int rc;

	if (n >= 16)
		return gcap_err(errbuf, EINVAL, "bad emulated NIC name in '%s'", spec);
	memcpy(p->name, spec, n);
	p->name[n] = '\0';
	/* the arguments, for gcap_gpunic_create() after the EAL */
	snprintf(p->devargs, sizeof(p->devargs), "%s", spec[n] ? spec + n + 1 : "");
	rc = gcap_gpunic_check(p->devargs, why);
	if (rc)
		return gcap_err(errbuf, -rc, "%s: %s", p->name, why);
	return 0;
}

int
gcap_gpunic_port_create(struct gcap_port *p, char *errbuf)
{
	char name[RTE_ETH_NAME_MAX_LEN], why[GCAP_ERRBUF_SIZE];
	uint16_t id = 0;

	/* net_ring's name: rte_eth_from_rings() makes a net_ring device */
	snprintf(name, sizeof(name), "net_ring_%.16s", p->name);
	p->kind_priv = gcap_gpunic_create(name, p->devargs, p->nqueues ? p->nqueues : 1,
					  p->socket, &id, why);
	if (p->kind_priv == NULL)
		return gcap_err(errbuf, errno ? errno : EIO, "%s: %s", p->spec, why);
	p->port_id = id;
	p->socket = rte_eth_dev_socket_id(id);
	return 0;
}

int
gcap_gpunic_port_attach(struct gcap_port *p, struct rte_mempool *const *pools,
			char *errbuf)
{
	char why[GCAP_ERRBUF_SIZE];
	int rc = gcap_gpunic_attach(p->kind_priv, pools, why);

	if (rc)
		return gcap_err(errbuf, -rc, "%s: %s", p->name, why);
	return 0;
}

int
gcap_gpunic_port_start(struct gcap_port *p, char *errbuf)
{
	char why[GCAP_ERRBUF_SIZE];
	int rc = gcap_gpunic_start(p->kind_priv, why);

	if (rc)
		return gcap_err(errbuf, -rc, "%s: %s", p->name, why);
	/* its stamps (gcap_port_clock_start set the clock just before):
	 * idle marks for the writer's time order */
	if (p->clock.flag != 0) {
		p->clock.idle = gcap_gpunic_idle;
		p->clock.idle_ctx = p->kind_priv;
	}
	return 0;
}

/* the feeding threads joined, the driver's callbacks off, while the
 * ethdev still exists */
void
gcap_gpunic_port_stop(struct gcap_port *p)
{
	gcap_gpunic_stop(p->kind_priv);
}

void
gcap_gpunic_port_close(struct gcap_port *p)
{
	gcap_gpunic_destroy(p->kind_priv);
	p->kind_priv = NULL;
}

uint32_t
gcap_gpunic_port_max_frame(const struct gcap_port *p)
{
	return gcap_gpunic_max_frame(p->kind_priv);
}
