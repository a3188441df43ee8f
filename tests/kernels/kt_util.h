/* SPDX-License-Identifier: BSD-3-Clause */
/* Test helpers for the inline kernel suite: packet crafting, guard-page
 * packets, an independent parser, the corpus. */
#ifndef KT_UTIL_H
#define KT_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include <check.h>
#include <pcap/pcap.h>

#include "gpucap/gcap_khost.h"

/** What kt_build() crafts. Zero means "absent / default". */
struct kt_spec {
	int nvlan;        /* 0..2 tags */
	uint16_t tpid[2]; /* 0x8100 / 0x88a8 (default 0x8100) */
	uint16_t tci[2];
	uint16_t ethertype;       /* raw ethertype when ipv == 0 */
	int ipv;                  /* 4, 6, or 0 (not IP) */
	uint8_t src[16], dst[16]; /* IPv4 in the first 4 bytes */
	int ip_optlen;            /* IPv4 option bytes (multiple of 4) */
	int next;                 /* IPv6 extension headers */
	uint8_t ext[4];           /* their types: 0, 43, 44, 60, 51 */
	uint16_t frag_off;        /* bytes, multiple of 8 */
	bool mf;
	uint8_t proto; /* 6, 17, 1, 58, or other */
	uint16_t sport, dport;
	uint8_t tcp_flags;
	int tcp_optlen; /* multiple of 4 */
	uint8_t icmp_type, icmp_code;
	const void *payload;
	uint32_t plen;
};

/** Build a frame into buf (>= 2048 bytes). @return its length. */
uint32_t kt_build(const struct kt_spec *s, uint8_t *buf);

/** A packet view over len bytes at d. */
struct gcap_kpkt kt_view(const uint8_t *d, uint32_t len);

/**
 * Copy len bytes into memory that ends exactly at a PROT_NONE page: any
 * read past the last byte faults. Free with kt_guard_free().
 */
uint8_t *kt_guard_copy(const void *src, uint32_t len);
void kt_guard_free(uint8_t *p, uint32_t len);

/** A DNS query for name (dotted). @return payload bytes written. */
uint32_t kt_dns_query(const char *name, uint16_t id, uint8_t *out);

/** Result of the independent parser. */
struct kt_flow {
	int ipv; /* 0: not IP (or IP header truncated) */
	uint8_t src[16], dst[16];
	uint8_t proto;
	bool ports; /* TCP/UDP header present */
	uint16_t sport, dport;
	uint8_t tcp_flags;
	bool later_frag;
	const uint8_t *pl; /* UDP/TCP payload (within caplen and IP length) */
	uint32_t pllen;
};

/** Parse Ethernet/VLAN/IPv4/IPv6(ext)/TCP/UDP without gcap_parse(). */
void kt_parse(const uint8_t *d, uint32_t caplen, struct kt_flow *f);

/** Path of a kernel example's source (static buffer). */
const char *kt_example(const char *name);

/** The shared corpus path, or NULL when it is absent. */
const char *kt_corpus(void);

/*
 * The main() of an example's suite: the crafted-packet tests (NULL
 * terminated), then the corpus test when the corpus exists (else a SKIP
 * line). @return the process exit status.
 */
int kt_run_example(const char *name, int timeout_s, const TTest *const *tests,
		   const TTest *corpus);

/** Write text to a fresh temporary .c file. @return its path (malloc'd). */
char *kt_write_tmp(const char *name, const char *text);

/** Load a kernel or fail the test with the loader's message. */
struct gcap_khost *kt_load(const char *path, const char *args);

#endif
