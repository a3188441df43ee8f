/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Part of the inline kernel API (gcap_kernel.h): the entry points a
 * kernel source defines (gcap_kernel(), the optional order key
 * gcap_kernel_order(), the host build's optional hooks
 * gcap_kernel_init() and gcap_kernel_report()), their types for the
 * loader, and gcap_kernel_error() for init hooks. Kernel sources
 * include <gpucap/gcap_kernel.h>, not this part.
 */
#ifndef GCAP_KERN_ENTRY_H
#define GCAP_KERN_ENTRY_H

#include "gcap_kern_base.h"
#include "gcap_kern_pkt.h"

#ifndef GCAP_DEVICE
#include <stdarg.h>
#include <stdio.h>

#include "gcap_json.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct gcap_kstate;

/** The entry point every kernel source defines (see below). */
GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt, struct gcap_kstate *st);

/*
 * Required, in the kernel source:
 *   struct gcap_kstate { ... };   (at least one member)
 *   GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,
 *                                    struct gcap_kstate *st);
 * Optional, host build only (inside #ifndef GCAP_DEVICE):
 *   int gcap_kernel_init(struct gcap_kstate *st, const char *args);
 *       st is zeroed; args is --kernel-arg (NULL when not given).
 *       Return 0, or non-zero to refuse (the loader fails with the
 *       message the hook put with gcap_kernel_error()).
 *   void gcap_kernel_report(const struct gcap_kstate *st,
 *                           struct gcap_json *j);
 *       Write members of the top-level JSON object.
 * Optional, both builds: the order key (see "Ordered kernels" below)
 *   GCAP_KERNEL uint64_t gcap_kernel_order(const struct gcap_kpkt *pkt,
 *                                          const struct gcap_kstate *st);
 */

/* ------------------------------------------------------------------ */
/* Ordered kernels                                                     */
/* ------------------------------------------------------------------ */

/*
 * On the GPU the packets of one batch run gcap_kernel() at the same time.
 * A kernel whose verdict depends only on the packet and on state that
 * other packets of the batch do not change (a match, a commutative
 * counter) gives the same verdicts in any order. A kernel whose verdict
 * depends on what earlier packets of the same flow or host did (the first
 * N packets of a flow, the SYN that crosses a threshold) needs them in
 * arrival order: it defines
 *
 *     GCAP_KERNEL uint64_t gcap_kernel_order(const struct gcap_kpkt *pkt,
 *                                            const struct gcap_kstate *st);
 *
 * which returns the packet's order key (e.g. a hash of its flow), or
 * GCAP_ORDER_NONE when the packet's verdict does not depend on order. It
 * must not change the state. The gpu executor then runs the packets of a
 * batch that share a key one after the other, in arrival order, and the
 * others in parallel: every packet's verdict and the final state are the
 * cpu executor's (which runs packets one by one), queue by queue, as long
 * as all the order-dependent state a packet touches belongs to its key.
 * The executor finds the function by name (the host build exports it),
 * defines GCAP_KERNEL_ORDERED before gcap_kernel.h in the GPU build and
 * runs the block's packets with gcap_kernel_block_run()
 * (gpu/kernels/inline_kernel.cuh); other nvcc builds of a kernel source
 * pass -DGCAP_KERNEL_ORDERED themselves and run it the same way
 * (bench/kernel_bench.cu does).
 * Cost: the key call, and one step of the batch per packet of the most
 * frequent key of each 512-packet chunk. Order holds within one block per
 * queue (--gpu-blocks 1, which the executor then requires).
 */

/** gcap_kernel_order(): this packet's verdict does not depend on order. */
#define GCAP_ORDER_NONE (~0ull)

#ifdef GCAP_KERNEL_ORDERED
/** The order key of an ordered kernel (defined by the kernel source). */
GCAP_KERNEL uint64_t gcap_kernel_order(const struct gcap_kpkt *pkt,
				       const struct gcap_kstate *st);
#endif

#ifndef GCAP_DEVICE
/** Entry point type (host build). */
typedef uint32_t (*gcap_kernel_fn)(const struct gcap_kpkt *pkt, struct gcap_kstate *st);
/** Init hook type. */
typedef int (*gcap_kernel_init_fn)(struct gcap_kstate *st, const char *args);
/** Report hook type. */
typedef void (*gcap_kernel_report_fn)(const struct gcap_kstate *st, struct gcap_json *j);

/** Size of the message buffer gcap_kernel_error() fills. */
#define GCAP_KERNEL_ERR_SIZE 256

/**
 * Where an init hook leaves a one-line reason for refusing. The loader
 * defines it in the shared object it builds (after the kernel source) and
 * reads it when init fails.
 */
extern char gcap_kernel_errmsg[GCAP_KERNEL_ERR_SIZE];

/** Record why init failed. @return -1, for `return gcap_kernel_error(...)`. */
__attribute__((format(printf, 1, 2), unused)) static inline int
gcap_kernel_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(gcap_kernel_errmsg, GCAP_KERNEL_ERR_SIZE, fmt, ap);
	va_end(ap);
	return -1;
}

/** Optional init hook (host build only); see above. */
__attribute__((visibility("default"))) int
gcap_kernel_init(struct gcap_kstate *st, const char *args);
/** Optional report hook (host build only); see above. */
__attribute__((visibility("default"))) void
gcap_kernel_report(const struct gcap_kstate *st, struct gcap_json *j);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GCAP_KERN_ENTRY_H */
