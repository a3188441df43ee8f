/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The inline packet kernel API: what a kernel source includes.
 *
 * A kernel is one C function run for every packet that passed the filter:
 *
 *     #include <gpucap/gcap_kernel.h>
 *     struct gcap_kstate { uint64_t tcp; };
 *     GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,
 *                                      struct gcap_kstate *st)
 *     {
 *             struct gcap_parsed p;
 *             gcap_parse(pkt, &p);
 *             if (!(p.flags & GCAP_PF_TCP))
 *                     return GCAP_DROP;
 *             gcap_atomic_add_u64(&st->tcp, 1);
 *             return GCAP_SNAP(128);
 *     }
 *
 * The same source compiles three ways and must mean the same thing:
 * - NVRTC (the gpu executor; C++ device code, no system headers),
 * - nvcc (`-x cu`, device code),
 * - a host C compiler (gnu11; the cpu executor, unit tests), where the
 *   optional host hooks gcap_kernel_init() and gcap_kernel_report() exist.
 *
 * GCAP_DEVICE is defined to 1 in the two CUDA builds; put everything
 * host-only (system headers, the hooks) under `#ifndef GCAP_DEVICE`.
 *
 * This header only gathers the parts, one concern each:
 * - gcap_kern_base.h     GCAP_DEVICE, the types under NVRTC, GCAP_DEV,
 *                        GCAP_KERNEL, GCAP_ARRAY_SIZE, GCAP_KSTATE_MAX
 * - gcap_kern_pkt.h      struct gcap_kpkt and the bounded loads
 * - gcap_kern_verdict.h  GCAP_DROP, GCAP_SNAP(), GCAP_OUTPUT(), applying one
 * - gcap_kern_atomic.h   atomics on the state
 * - gcap_kern_parse.h    gcap_parse(): Ethernet, VLAN, IP, L4
 * - gcap_kern_hash.h     hashes, the hash table, its sorted listing (host)
 * - gcap_kern_entry.h    the entry points, ordered kernels, the host hooks
 * - gcap_json.h          the JSON writer report hooks use (host build)
 * Parts include only each other, by quoted includes of files beside this
 * one: a host build needs -I<incdir> only, and the loader
 * (kernels/lib/khost.c) inlines them, each once, into the one
 * self-contained text that NVRTC compiles. See docs/kernels.md for the
 * tutorial, the rules and the examples.
 */
#ifndef GCAP_KERNEL_H
#define GCAP_KERNEL_H

#include "gcap_kern_base.h"
#include "gcap_kern_pkt.h"
#include "gcap_kern_verdict.h"
#include "gcap_kern_atomic.h"
#include "gcap_kern_parse.h"
#include "gcap_kern_hash.h"
#include "gcap_kern_entry.h"

#endif /* GCAP_KERNEL_H */
