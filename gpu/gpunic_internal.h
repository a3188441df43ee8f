/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Internal to the emulated GPUDirect NIC: its arguments and the captures
 * it delivers, read into one buffer (gpunic_file.c, no CUDA), which
 * gpunic.c stages in VRAM and feeds to the RX queues.
 */
#ifndef GCAP_GPUNIC_INTERNAL_H
#define GCAP_GPUNIC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GCAP_NIC_MAX_FILES 1024

/** What follows "gpunicN,". */
struct gcap_nic_args {
	char *files[GCAP_NIC_MAX_FILES]; /**< rx_pcap=, in order (malloc'd) */
	unsigned nfiles;
	bool loop; /**< loop=1: deliver the captures again and again */
	int gpu;   /**< gpu=N: the GPU whose engines write (default 0) */
	unsigned feeders; /**< feeders=N: threads feeding the queues (0: the default, gpunic_feed.c) */
	bool prefill;   /**< prefill=1: start returns once the RX rings are filled */
	bool cpu_agent; /**< agent=cpu: the CPU writes the data rooms (no GPU) */
};

/** One packet of the captures. */
struct gcap_nic_pkt {
	uint64_t ts_ns;   /**< its time in the file, ns since the epoch */
	uint64_t off;     /**< first byte in gcap_nic_capture.bytes */
	uint32_t caplen;  /**< bytes in the file */
	uint32_t wirelen; /**< length on the wire */
	uint32_t hash;    /**< symmetric flow hash (0 for what is not IP) */
};

/** The captures, read. */
struct gcap_nic_capture {
	struct gcap_nic_pkt *pkts;
	size_t npkts;
	unsigned char *bytes; /**< every packet at an 8-byte aligned offset */
	size_t len;
	uint32_t maxlen; /**< largest caplen */
};

/**
 * Parse "k=v,k=v" (keys rx_pcap, loop, gpu, feeders, prefill, agent); with check_files,
 * every file must be readable by libpcap.
 * @return 0 or a negative errno with a message in errbuf (args zeroed
 *         first; gcap_nic_args_free() in either case).
 */
int gcap_nic_args_parse(const char *s, bool check_files, struct gcap_nic_args *a,
			char *errbuf);

/** Free what gcap_nic_args_parse() allocated. */
void gcap_nic_args_free(struct gcap_nic_args *a);

/**
 * Read every packet of the files, in order, into c (timestamps in ns).
 * @return 0 or a negative errno (ENOMEM, EINVAL: unreadable, larger than
 *         4 GiB) with a message.
 */
int gcap_nic_capture_read(const struct gcap_nic_args *a, struct gcap_nic_capture *c,
			  char *errbuf);

/** Free what gcap_nic_capture_read() allocated. */
void gcap_nic_capture_free(struct gcap_nic_capture *c);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_GPUNIC_INTERNAL_H */
