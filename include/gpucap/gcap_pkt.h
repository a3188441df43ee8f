/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Structures shared between the host and the GPU: packet descriptors and
 * export records. Plain C, fixed layout, no pointers wider than 64 bits;
 * this header compiles with a host C compiler, nvcc and NVRTC.
 */
#ifndef GCAP_PKT_H
#define GCAP_PKT_H

#ifdef __CUDACC_RTC__
typedef unsigned long long uint64_t;
typedef unsigned int uint32_t;
typedef unsigned short uint16_t;
typedef unsigned char uint8_t;
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Most packets in one batch of a live queue (the mbufs a batch keeps). */
#define GCAP_BATCH_MAX 512u

/** Most records in one batch read from a file (-r). A file's batch keeps
 *  no mbufs, and on the gpu backend each batch costs hand-offs (the
 *  copying threads, the doorbell, the writer) that larger batches share
 *  out over more records. */
#define GCAP_FILE_BATCH_MAX 8192u

/** Most outputs (-w FILE:EXPR); an output is one bit of a 64-bit mask. */
#define GCAP_MAX_OUTPUTS 64u

/**
 * One received packet, as the source (RX lcore or file reader) hands it to
 * the executor. 32 bytes.
 */
struct gcap_pkt {
	uint64_t addr;    /**< first byte, an address the executor can read */
	uint64_t ts_ns;   /**< capture time, nanoseconds since the Unix epoch */
	uint32_t caplen;  /**< bytes present at addr */
	uint32_t wirelen; /**< length on the wire */
	uint16_t port;    /**< interface index (pcapng IDB index) */
	uint16_t queue;   /**< RX queue within the port */
	uint32_t seq;     /**< sequence number within the pipeline queue */
};

/**
 * Header of one export record. The executor writes one per captured packet
 * into an export buffer, followed by caplen packet bytes, the whole record
 * padded to 8 bytes (GCAP_REC_SIZE). The writer turns records into pcap or
 * pcapng records without touching the packet bytes. 32 bytes.
 */
struct gcap_rec {
	uint64_t ts_ns;   /**< capture time, ns since the Unix epoch */
	uint64_t outmask; /**< bit i set: the packet goes to output i */
	uint32_t caplen;  /**< packet bytes that follow (after snap length) */
	uint32_t wirelen; /**< length on the wire */
	uint16_t port;    /**< interface index */
	uint16_t queue;   /**< RX queue */
	uint32_t seq;     /**< the descriptor's sequence number */
};

/** Bytes one record of caplen packet bytes takes in an export buffer. */
#define GCAP_REC_SIZE(caplen) \
	((uint32_t)sizeof(struct gcap_rec) + (((uint32_t)(caplen) + 7u) & ~7u))

#ifdef __cplusplus
}
#endif

#endif /* GCAP_PKT_H */
