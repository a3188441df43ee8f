/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Ports: what `-i` names (a PCI address, a DPDK virtual device string or a
 * Linux interface), the EAL set-up that makes them exist, and their RX
 * queues. Users never write EAL syntax: gcap_eal_init() builds it.
 */
#ifndef GCAP_PORT_H
#define GCAP_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "gcap_common.h"
#include "gcap_pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mempool;

/** What kind of device a `-i` argument names (tried in this order). */
enum gcap_port_kind {
	GCAP_PORT_PCI,    /**< 0000:3b:00.0 or 3b:00.0 */
	GCAP_PORT_VDEV,   /**< net_pcap0,rx_pcap=x.pcap / net_null0 / ... */
	GCAP_PORT_GPUNIC, /**< gpunic0,rx_pcap=x.pcap: the emulated GPUDirect NIC */
	GCAP_PORT_IFACE,  /**< a Linux interface, through net_af_packet */
};

/** Where packets' times come from (tcpdump's -j). */
enum gcap_tstamp {
	GCAP_TSTAMP_AUTO = 0,         /**< the port's own where it has one, else host */
	GCAP_TSTAMP_HOST,             /**< the host's clock when the packets are polled */
	GCAP_TSTAMP_ADAPTER,          /**< the port's, as real time */
	GCAP_TSTAMP_ADAPTER_UNSYNCED, /**< the port's own clock, not set to real time */
};

/** One port. */
struct gcap_port {
	char spec[512];    /**< the -i argument */
	char name[64];     /**< ethdev name (RTE_ETH_NAME_MAX_LEN); if_name in pcapng */
	char devargs[640]; /**< what the EAL gets (-a or --vdev) */
	enum gcap_port_kind kind;
	unsigned index;   /**< position among -i (interface index) */
	uint16_t port_id; /**< after gcap_port_find() */
	uint16_t nqueues; /**< RX queues */
	int socket;       /**< NUMA node, or -1 */
	bool started;
	void *kind_priv;            /**< the kind's own state (the emulated NIC's) */
	int linktype;               /**< DLT_* of its packets (net_pcap: the file's) */
	enum gcap_tstamp tstamp;    /**< asked, before gcap_port_configure */
	bool no_promisc;            /**< tcpdump's -p: promiscuous mode left off */
	bool promisc_set;           /**< turned on at start, off again at close */
	bool hw_ts;                 /**< the NIC's RX timestamp offload is on */
	bool loopback;              /**< a Linux loopback interface */
	struct gcap_rx_clock clock; /**< its packets' time, after gcap_port_start */
};

/**
 * Parse and check one `-i` argument before the EAL exists: PCI address
 * syntax, vdev driver name, files named by rx_pcap= readable, Linux
 * interface present, a GPU for the emulated GPUDirect NIC.
 * @return 0; -EINVAL (bad syntax), -ENOENT (no such interface or file),
 *         -EACCES (unreadable file), -ENODEV or -ENOTSUP (gpunic without
 *         a GPU), with a message in errbuf.
 */
int gcap_port_parse(const char *spec, unsigned index, struct gcap_port *p, char *errbuf);

/** EAL set-up. */
struct gcap_eal_conf {
	const char *prog; /**< argv[0] */
	struct gcap_port *ports;
	unsigned nports;
	unsigned nlcores;  /**< lcores wanted: main + RX lcores */
	const char *cpus;  /**< --lcores CPU list for the RX lcores, or NULL */
	const char *extra; /**< --eal "ARGS", or NULL */
	unsigned mem_mb;   /**< memory without hugepages */
	bool verbose;      /**< DPDK logs at info, not error */
};

/**
 * Initialise the EAL for these ports (hugepages when reserved, else
 * --no-huge; --in-memory so that several instances can run).
 * @return 0, or a negative errno with a message in errbuf.
 */
int gcap_eal_init(const struct gcap_eal_conf *conf, char *errbuf);

/**
 * Find the ethdev of a parsed port after gcap_eal_init() (or make it, for
 * a kind the EAL does not make: the emulated GPUDirect NIC).
 * @return 0; -ENODEV with a message when the EAL made no such port; the
 *         kind's error when making it failed.
 */
int gcap_port_find(struct gcap_port *p, char *errbuf);

/**
 * Configure nqueues RX queues (RSS when more than one), each receiving into
 * pools[q]. The port is not started.
 * @return 0; -EINVAL (too many queues for the port); an ethdev error.
 */
int gcap_port_configure(struct gcap_port *p, uint16_t nqueues, uint16_t nb_rxd,
			struct rte_mempool *const *pools, char *errbuf);

/**
 * The largest frame (bytes, FCS excluded) a found port delivers: the
 * kind's own answer where it has one (the emulated NIC: its captures'
 * longest packet), else the port's MTU with an Ethernet header and two
 * VLAN tags. A pool whose data rooms hold it receives every packet in one
 * mbuf, which matters where no CPU may gather a chain (--mem gpu).
 * @return the bytes, or 0 when the port does not say.
 */
uint32_t gcap_port_max_frame(const struct gcap_port *p);

/**
 * The data room (headroom included) of an mbuf that holds a frame of
 * max_frame bytes whole: DPDK's default room where that is enough, at
 * most what a 16-bit room can be (a multiple of 64).
 */
uint16_t gcap_port_whole_room(uint32_t max_frame);

/**
 * Start a configured port: promiscuous mode on (unless no_promisc; it is
 * turned off again at close when it was off), and its clock (p->clock)
 * for p->tstamp; a NIC clock is calibrated against CLOCK_REALTIME here
 * (20 ms).
 * @return 0 or a negative errno: -ENOTSUP when p->tstamp asks for the
 *         port's clock and it has none that can be read.
 */
int gcap_port_start(struct gcap_port *p, char *errbuf);

/**
 * The time sources a found port offers (tcpdump's -J), host first.
 * @return how many were written to types (at most max).
 */
unsigned
gcap_port_tstamp_types(const struct gcap_port *p, enum gcap_tstamp *types, unsigned max);

/** @return the -j name of a time source ("host", "adapter", ...). */
const char *gcap_tstamp_name(enum gcap_tstamp t);

/** Stop and close a port (no-op if never found); promiscuous mode back
 *  off where gcap_port_start turned it on. */
void gcap_port_close(struct gcap_port *p);

/** What the capture files say about a port (pcapng IDB options). */
struct gcap_port_desc {
	char driver[64];    /**< the DPDK driver, e.g. "net_pcap", "mlx5_pci" */
	char hardware[160]; /**< the device on its bus: "pci 0000:3b:00.0 (vendor_id=...)" */
	uint8_t mac[6];
	bool has_mac;       /**< a MAC address other than all zeros */
	uint64_t speed_bps; /**< link speed, 0: unknown or down */
};

/** Describe a found port. @return 0 or a negative errno. */
int gcap_port_describe(const struct gcap_port *p, struct gcap_port_desc *d);

/** NIC-level counters. */
struct gcap_port_stats {
	uint64_t ipackets, ibytes, imissed, ierrors, rx_nombuf;
};

/** @return 0 or a negative errno. */
int gcap_port_stats(const struct gcap_port *p, struct gcap_port_stats *st);

/**
 * The lcore ids the EAL gave the RX lcores (all but the main lcore), in
 * order. @return how many were written to ids (at most max).
 */
unsigned gcap_rx_lcores(unsigned *ids, unsigned max);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_PORT_H */
