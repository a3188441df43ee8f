/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * tcpdump filter expressions, compiled by libpcap into classic BPF for a
 * link type. gpucap never parses filters itself.
 */
#ifndef GCAP_FILTER_H
#define GCAP_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <pcap/pcap.h>

#include "gcap_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Compile a tcpdump expression for a link type, as tcpdump does
 * (pcap_open_dead + pcap_compile, optimised, netmask 0 as tcpdump -r).
 * An empty or NULL expression gives a program that accepts everything
 * (bf_len 0).
 *
 * @param expr      the expression
 * @param linktype  DLT_* value
 * @param snaplen   snap length the program is compiled for
 * @param prog      filled; free with gcap_filter_free()
 * @param errbuf    libpcap's message on failure
 * @return 0; -EINVAL if libpcap rejects the expression; -ENOMEM.
 */
int gcap_filter_compile(const char *expr, int linktype, uint32_t snaplen,
			struct bpf_program *prog, char *errbuf);

/**
 * Compile an expression on an open libpcap handle (a capture file), as
 * tcpdump -r does: for some link types (DLT_NULL, DLT_LOOP) libpcap builds
 * a different program for a savefile than for pcap_open_dead().
 * @return as gcap_filter_compile().
 */
int gcap_filter_compile_on(pcap_t *p, const char *expr, struct bpf_program *prog,
			   char *errbuf);

/**
 * Either of the above, with libpcap's optimizer on or off (tcpdump -O
 * turns it off: a longer program that matches the same packets).
 *
 * @param p         an open handle, as gcap_filter_compile_on(); or NULL:
 *                  compiled for linktype and snaplen, as
 *                  gcap_filter_compile()
 * @param optimize  whether libpcap optimizes the program
 * @return as gcap_filter_compile().
 */
int gcap_filter_compile_opt(pcap_t *p, const char *expr, int linktype, uint32_t snaplen,
			    bool optimize, struct bpf_program *prog, char *errbuf);

/** Free a program from gcap_filter_compile(). */
void gcap_filter_free(struct bpf_program *prog);

/**
 * Run a program on one packet as libpcap does (bpf_filter()).
 * @return non-zero if the packet matches. A program with bf_len 0 matches.
 */
uint32_t gcap_filter_run(const struct bpf_program *prog, const uint8_t *pkt,
			 uint32_t wirelen, uint32_t caplen);

/**
 * Print a program like tcpdump -d (level 1), -dd (2) or -ddd (3).
 * @return 0 or -EIO.
 */
int gcap_filter_dump(FILE *f, const struct bpf_program *prog, int level);

/**
 * Join argv words into one expression with single spaces, as tcpdump does.
 * @return a malloc'd string ("" when argc is 0), or NULL with errno ENOMEM.
 */
char *gcap_filter_join(int argc, char *const argv[]);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_FILTER_H */
