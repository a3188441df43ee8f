/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The emulated GPUDirect NIC (`-i gpunic0,rx_pcap=FILE`): an ethdev made
 * with rte_eth_from_rings() whose RX queues receive the packets of capture
 * files, written into the mbufs' data rooms by the GPU (a "DMA" kernel
 * reading the captures staged once in VRAM), never by the CPU. As with a
 * real RX queue, the RX lcore's rte_eth_rx_burst() reads completions
 * (lengths, timestamps) and hands out buffers (an RX callback: the
 * driver); feeding threads play the NIC. See docs/gpu.md for what it
 * proves and what it cannot.
 */
#ifndef GCAP_GPUNIC_H
#define GCAP_GPUNIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mempool;

/** One emulated NIC (opaque). */
struct gcap_gpunic;

/**
 * Check the arguments after "gpunicN," before the EAL exists: keys
 * rx_pcap=FILE (one or more, delivered in the order given), loop=0|1,
 * gpu=N, feeders=N, prefill=0|1, agent=gpu|cpu; every file readable by
 * libpcap; a GPU and its driver present (not with agent=cpu).
 * @return 0; -EINVAL (bad key or value, no rx_pcap), -ENOENT, -EACCES
 *         (a file), -ENODEV or -ENOTSUP (no GPU, no driver, no CUDA in
 *         this build), with one line in errbuf.
 */
int gcap_gpunic_check(const char *args, char *errbuf);

/**
 * After the EAL: read and stage the captures in VRAM, spread their
 * packets over nqueues RX queues by flow hash (file order within a queue),
 * and make the ethdev (named ethdev_name) whose queues the emulator feeds.
 * @param port_id  out: the ethdev's port
 * @return the NIC, or NULL with errno (EINVAL, ENOMEM, ENODEV, EIO) and a
 *         message in errbuf.
 */
struct gcap_gpunic *
gcap_gpunic_create(const char *ethdev_name, const char *args, unsigned nqueues,
		   int socket, uint16_t *port_id, char *errbuf);

/**
 * The pools the port's queues receive into (one per queue): checks that
 * the GPU can write each one's data rooms (device memory of its GPU,
 * pinned host memory, or host memory it then registers, as a NIC's DMA
 * mapping) and logs which.
 * @return 0; -EINVAL, -ENOTSUP (memory of another GPU), a CUDA error as a
 *         negative errno; message in errbuf.
 */
int gcap_gpunic_attach(struct gcap_gpunic *nic, struct rte_mempool *const *pools,
		       char *errbuf);

/**
 * Start delivering: every queue handed its buffers, the driver's RX
 * callbacks added, the feeding threads started. Call before any lcore
 * polls the port.
 * @return 0 or a negative errno with a message (-EINVAL: a queue without
 * a pool; rte_eth_add_rx_callback's error; -ENOMEM).
 */
int gcap_gpunic_start(struct gcap_gpunic *nic, char *errbuf);

/** Stop delivering; the mbufs the emulator holds go back to their pools
 * and the driver's callbacks come off. No lcore may poll the port. */
void gcap_gpunic_stop(struct gcap_gpunic *nic);

/** Stop, then free everything (the ethdev is the caller's to close). */
void gcap_gpunic_destroy(struct gcap_gpunic *nic);

/**
 * The largest frame the NIC delivers: the longest packet of its captures
 * (a pool whose data rooms hold it receives every packet in one mbuf).
 */
uint32_t gcap_gpunic_max_frame(const struct gcap_gpunic *nic);

/**
 * RX queue's idle mark, for gcap_rx_clock.idle (nic a struct gcap_gpunic):
 * with loop=1, a time (ns since the epoch, as the NIC stamps) before which
 * no packet the queue delivers after an empty poll is stamped, known as
 * that poll began; 0 without loop=1 (the files' times) or before the
 * queue's second poll. Call it on the queue's RX lcore after a poll.
 */
uint64_t gcap_gpunic_idle(void *nic, uint16_t queue);

/**
 * Whether port_id is an emulated GPUDirect NIC (its packets carry their
 * time in the RX timestamp field: the files' times, or with loop=1 the
 * host's clock when each batch arrived).
 */
bool gcap_gpunic_is(uint16_t port_id);

/**
 * Whether port_id is an emulated GPUDirect NIC whose packets the GPU, not
 * the CPU, writes (not agent=cpu): --mem gpu is allowed on it.
 */
bool gcap_gpunic_gpu_writes(uint16_t port_id);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_GPUNIC_H */
