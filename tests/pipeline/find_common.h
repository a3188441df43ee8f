/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the tests of records found ahead of the reader
 * (test_capfile_find.c: pcap; test_capfile_find_ng.c: pcapng; the
 * cut-file test takes its hash): a file
 * read alone and with finders, compared record for record, and the
 * helpers that write their files.
 */
#ifndef GCAP_TEST_FIND_COMMON_H
#define GCAP_TEST_FIND_COMMON_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP 262144u

/* What a read gave. */
struct got {
	unsigned recs;
	int rc;
	char msg[512];
	uint64_t hash; /* every record's fields and bytes, in order */
	uint64_t joined, listed, stepped;
	unsigned finders;
};

/* The test's scratch directory (made and removed around each test). */
extern char find_dir[64];

uint32_t mix32(uint32_t x);
/* v into p in the file's byte order (swap: the other one). */
void put32(uint8_t *p, uint32_t v, bool swap);
void put16(uint8_t *p, uint16_t v, bool swap);
/* record i's captured length: 0-1599 bytes, mixed */
uint32_t cl_mixed(unsigned i);
/* Read path on finders threads: in batches, or in spans (span); first
 * wait until the finders listed ahead what their ring holds (wait); stop
 * after stop_after records (0: the end); sleep between batches (slow). */
struct got read_all(const char *path, unsigned finders, bool span, bool wait,
		    unsigned stop_after, bool slow);
/* The file read with finders, waiting for them and racing them, in
 * batches and in spans, gives what the reader alone gives. @return the
 * waiting read's counts (batches). */
struct got same_records(const char *name, const char *path);
/* name in the scratch directory. */
void path_of(char *path, size_t len, const char *name);
/* Run the tests of suite name, each in a fresh scratch directory.
 * @return the exit status. */
int find_main(const char *name, const TTest *const *tests, unsigned n);

#endif
