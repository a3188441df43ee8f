/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for a plain pcap's or pcapng's records found ahead of
 * the reader (base/capfile_find.c: the guesses of record starts, the
 * finders' walks, the reader's joins; the seeds hold both formats).
 *
 * Input: [mode byte][a capture file]. The file is read to its end by the
 * reader alone, then with three finders (the mode's low bit: in batches
 * or in spans of at most 64 KiB; its next bit: the reader waits for the
 * finders first, or races them). Built with GCAP_CF_FIND_SHIFT=9 (chunks
 * of 512 bytes: scripts/run-fuzz.sh), so that a small file has many
 * chunks, lists cut short and guesses inside records.
 *
 * Both must give the same records (fields, bytes and order) and end the
 * same way (return code and message). Any difference abort()s.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpucap/gcap_capfile.h"

#define MAXB 64u
#define SPAN (64u << 10)

struct got {
	uint64_t hash;
	unsigned n;
	int rc;
	char msg[512];
};

static uint64_t
fold(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static struct got
read_all(int fd, unsigned finders, bool span, bool wait)
{
	static uint8_t buf[SPAN];
	char path[64], err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_conf conf = { .decoders = 1, .finders = finders };
	struct gcap_capfile *cf;
	struct gcap_pkt d[MAXB];
	uint64_t raw[MAXB];
	struct got g = { .hash = 0xcbf29ce484222325ull, .rc = 1 };

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	cf = gcap_capfile_open_conf(path, &conf, err);
	if (cf == NULL)
		return g;
	gcap_capfile_use_map(cf, true);
	for (unsigned t = 0; wait && t < 2000; t++) {
		uint64_t j, l, s;

		if (gcap_capfile_finders(cf, &j, &l, &s) == 0 || l >= 16)
			break;
		usleep(50);
	}
	for (;;) {
		uint32_t used = 0;
		const uint8_t *sp;
		int n;

		memset(d, 0x5a, sizeof(d));
		n = span ? gcap_capfile_fill_span(cf, buf, SPAN, d, raw, MAXB, &used,
						  &sp) :
			   gcap_capfile_fill(cf, buf, SPAN, d, raw, MAXB, &used);
		g.rc = n;
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++, g.n++) {
			const uint8_t *p = (const uint8_t *)(uintptr_t)d[i].addr;
			uint64_t h = g.hash;

			h = fold(h, d[i].caplen);
			h = fold(h, d[i].wirelen);
			h = fold(h, d[i].ts_ns);
			h = fold(h, raw[i]);
			h = fold(h, (uint64_t)d[i].port << 48 |
					    (uint64_t)d[i].queue << 32 | d[i].seq);
			for (uint32_t k = 0; k < d[i].caplen; k++)
				h = fold(h, p[k]);
			g.hash = h;
		}
	}
	if (g.rc < 0)
		snprintf(g.msg, sizeof(g.msg), "%s", gcap_capfile_errmsg(cf));
	gcap_capfile_close(cf);
	return g;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct got alone, found;
	bool span, wait;
	int fd;

	if (size < 1)
		return 0;
	span = data[0] & 1;
	wait = data[0] & 2;
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	alone = read_all(fd, 0, span, false);
	found = read_all(fd, 3, span, wait);
	close(fd);
	if (alone.n != found.n || alone.hash != found.hash || alone.rc != found.rc ||
	    strcmp(alone.msg, found.msg) != 0) {
		fprintf(stderr,
			"finders differ (%s, %s): alone %u records rc %d (%s); with "
			"finders "
			"%u rc %d (%s)\n",
			span ? "spans" : "batches", wait ? "ahead" : "racing", alone.n,
			alone.rc, alone.msg, found.n, found.rc, found.msg);
		abort();
	}
	return 0;
}
