/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Classic BPF -> C translator. The programs come from libpcap
 * (gcap_filter_compile()); the output is one self-contained C translation
 * unit that compiles as is with NVRTC or nvcc (device code) and with a host
 * C compiler (gnu11), and returns exactly what bpf_filter() returns.
 *
 * ## Shape of the generated code
 * A prelude, guarded by `GCAP_BPFC_PRELUDE_1` so that several units can be
 * concatenated:
 *  - `GCAP_BPFC_FN`: `__device__ __forceinline__` under `__CUDACC__` or
 *    `__CUDACC_RTC__`, else `static inline`; `GCAP_BPFC_API` (the entry
 *    points, defaults to GCAP_BPFC_FN). Both may be predefined, e.g.
 *    `-DGCAP_BPFC_API=` on the host to export the functions from a shared
 *    object;
 *  - no header is included: the code uses `unsigned int` (32 bits) and
 *    `unsigned long long` (64 bits) only;
 *  - `gcap_bpfc_ld32()` / `gcap_bpfc_ld16()`: big-endian byte loads.
 *
 * Then, for program i (0-based) of the `nprogs` given, with `P` the prefix:
 * @code
 * GCAP_BPFC_API unsigned int P_i(const unsigned char *p, unsigned int wirelen,
 *                                unsigned int caplen);
 * @endcode
 * returning what bpf_filter() returns (0xffffffff for a program with
 * bf_len 0, which matches everything), and one function that evaluates all
 * programs in one pass over the packet:
 * @code
 * GCAP_BPFC_API unsigned long long P_mask(const unsigned char *p,
 *                                         unsigned int wirelen,
 *                                         unsigned int caplen);
 * @endcode
 * whose bit i is set iff program i returns non-zero.
 *
 * With #GCAP_BPFC_F_KERNEL, under CUDA only, also a batch kernel
 * @code
 * extern "C" __global__ void P_kernel(const unsigned char *base,
 *     const unsigned long long *off, const unsigned int *wirelen,
 *     const unsigned int *caplen, unsigned int n, unsigned long long *mask);
 * @endcode
 * (mask[i] = P_mask(base + off[i], wirelen[i], caplen[i])), for tests and
 * benchmarks.
 *
 * Each instruction is one statement preceded by a comment in tcpdump -d
 * form; jump targets get labels, jumps are gotos (so libpcap's backward
 * jumps for "protochain" work as well).
 *
 * ## Semantics (identical on host and GPU)
 *  - loads past caplen, division or modulo by X == 0: the program returns 0
 *    (overflow of X + k is handled);
 *  - shift by X >= 32 gives 0 as bpf_filter() does; a constant shift by
 *    k >= 32 (accepted by libpcap 1.10's bpf_validate()) shifts by k & 31,
 *    which is what libpcap 1.10's bpf_filter() does on x86-64 and arm64;
 *  - backward jumps (protochain) are followed to the loop's end, as
 *    bpf_filter() follows them; a jump to itself, or one past
 *    GCAP_BPF_BACKWARD_LIMIT (gcap_bpf_interp.h: a bound no program
 *    libpcap emits reaches), returns 0 instead of looping forever;
 *  - scratch memory starts at 0.
 * gcap_bpf_interp() (gcap_bpf_interp.h) has the same semantics.
 */
#ifndef GCAP_BPFC_H
#define GCAP_BPFC_H

#include <pcap/pcap.h>

#include "gcap_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most programs one translation unit (and one mask) can hold. */
#define GCAP_BPFC_MAX_PROGS 64

/** Most instructions in one program. */
#define GCAP_BPFC_MAX_INSNS 1000000u

/** Flag: also emit the CUDA batch kernel P_kernel (see above). */
#define GCAP_BPFC_F_KERNEL (1u << 0)
/** Flag: no per-instruction comments (smaller source). */
#define GCAP_BPFC_F_NO_COMMENTS (1u << 1)
/**
 * Flag: before each instruction, emit `GCAP_BPFC_TRACE(prog, insn);`
 * (a macro the includer may define; the prelude defines it as nothing).
 * The tests use it to measure opcode coverage.
 */
#define GCAP_BPFC_F_TRACE (1u << 2)

/**
 * Tell whether a program can be translated (and run by gcap_bpf_interp()).
 * A program with bf_len 0 is accepted (it matches everything).
 *
 * @param prog    the program
 * @param errbuf  GCAP_ERRBUF_SIZE bytes or NULL: why it was refused,
 *                naming the instruction
 * Linux ancillary loads (k >= SKF_AD_OFF) are accepted: like bpf_filter()
 * without aux data, they are past the packet and make the filter return 0.
 *
 * @return 0;
 *         -EINVAL for anything bpf_filter() cannot run: an opcode it
 *         does not know, a constant division by 0, a scratch index >= 16, a
 *         jump out of the program or to itself, a last instruction that is
 *         not a RET, a program bpf_validate() rejects, or more than
 *         GCAP_BPFC_MAX_INSNS instructions.
 */
int gcap_bpfc_check(const struct bpf_program *prog, char *errbuf);

/**
 * Translate programs into one C translation unit (see the file comment).
 *
 * @param progs      nprogs programs (from gcap_filter_compile())
 * @param nprogs     1 to GCAP_BPFC_MAX_PROGS
 * @param fn_prefix  prefix of every function the unit defines: a C
 *                   identifier of at most 64 characters
 * @param flags      GCAP_BPFC_F_*
 * @param errbuf     GCAP_ERRBUF_SIZE bytes or NULL
 * @return the source, NUL-terminated, malloc'd (free() it); or NULL with
 *         errno: EINVAL (see gcap_bpfc_check(), the message names
 *         the program), EINVAL for a bad prefix, flags or nprogs 0, E2BIG for
 *         more than GCAP_BPFC_MAX_PROGS programs, ENOMEM.
 */
char *gcap_bpfc_translate(const struct bpf_program *progs, unsigned nprogs,
			  const char *fn_prefix, unsigned flags, char *errbuf);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_BPFC_H */
