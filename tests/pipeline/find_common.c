/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The finders' tests' shared part (find_common.h): reading a file alone
 * and with finders, and the writers' helpers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpucap/gcap_capfile.h"

#include "find_common.h"

#define MAXB 512u
#define BUFSZ (1u << 20)

char find_dir[64];

uint32_t
mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	return x ^ (x >> 16);
}

void
put32(uint8_t *p, uint32_t v, bool swap)
{
	if (swap)
		v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
}

void
put16(uint8_t *p, uint16_t v, bool swap)
{
	if (swap)
		v = (uint16_t)(v >> 8 | v << 8);
	memcpy(p, &v, 2);
}

uint32_t
cl_mixed(unsigned i)
{
	return mix32(i * 7u + 1u) % 1600u;
}

static uint64_t
fold(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

struct got
read_all(const char *path, unsigned finders, bool span, bool wait, unsigned stop_after,
	 bool slow)
{
	char err[GCAP_ERRBUF_SIZE];
	struct gcap_capfile_conf conf = { .decoders = 1, .finders = finders };
	struct gcap_capfile *cf = gcap_capfile_open_conf(path, &conf, err);
	static uint8_t buf[BUFSZ];
	static struct gcap_pkt d[MAXB];
	static uint64_t raw[MAXB];
	struct got g = { .hash = 0xcbf29ce484222325ull };

	ck_assert_msg(cf != NULL, "%s: %s", path, err);
	gcap_capfile_use_map(cf, true);
	/* until a dozen lists are out (or every chunk's, in a smaller file) */
	struct stat st;
	uint64_t want;

	ck_assert_int_eq(stat(path, &st), 0);
	want = ((uint64_t)st.st_size - 24 + (1u << 20) - 1) >> 20;
	want = want < 12 ? want : 12;
	for (unsigned t = 0; wait && t < 10000; t++) {
		uint64_t j, l, s;

		if (gcap_capfile_finders(cf, &j, &l, &s) == 0 || l >= want)
			break;
		usleep(1000);
	}
	for (;;) {
		uint32_t used = 0;
		const uint8_t *sp;

		/* what the format does not fill must stay the caller's */
		memset(d, 0xa5, sizeof(d));
		int n = span ? gcap_capfile_fill_span(cf, buf, BUFSZ, d, raw, MAXB, &used,
						      &sp) :
			       gcap_capfile_fill(cf, buf, BUFSZ, d, raw, MAXB, &used);

		g.rc = n;
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++, g.recs++) {
			const uint8_t *p = (const uint8_t *)(uintptr_t)d[i].addr;
			uint64_t h = g.hash;

			h = fold(h, d[i].caplen);
			h = fold(h, d[i].wirelen);
			h = fold(h, d[i].ts_ns);
			h = fold(h, raw[i]);
			h = fold(h, d[i].port);
			h = fold(h, (uint64_t)d[i].queue << 32 | d[i].seq);
			for (uint32_t k = 0; k < d[i].caplen; k += 61)
				h = fold(h, p[k]);
			if (d[i].caplen > 0)
				h = fold(h, p[d[i].caplen - 1]);
			g.hash = h;
		}
		if (stop_after && g.recs >= stop_after)
			break;
		if (slow) /* the finders wait for the reader, slots are reused */
			usleep(200);
	}
	if (g.rc < 0)
		snprintf(g.msg, sizeof(g.msg), "%s", gcap_capfile_errmsg(cf));
	g.finders = gcap_capfile_finders(cf, &g.joined, &g.listed, &g.stepped);
	gcap_capfile_close(cf);
	return g;
}

struct got
same_records(const char *name, const char *path)
{
	struct got ref = read_all(path, 0, false, false, 0, false), wait = { 0 };

	ck_assert_uint_eq(ref.finders, 0);
	ck_assert_msg(ref.recs > 0, "%s: no records (rc %d: %s)", name, ref.rc, ref.msg);
	for (unsigned k = 0; k < 4; k++) {
		bool span = k & 1, w = !(k & 2);
		struct got g = read_all(path, 3, span, w, 0, false);
		struct got r = span ? read_all(path, 0, true, false, 0, false) : ref;

		ck_assert_msg(g.finders == 3, "%s: %u finders", name, g.finders);
		ck_assert_msg(g.recs == r.recs && g.hash == r.hash && g.rc == r.rc &&
				      strcmp(g.msg, r.msg) == 0,
			      "%s (%s, %s): %u records, rc %d (%s); alone %u, rc %d (%s)",
			      name, span ? "spans" : "batches", w ? "ahead" : "racing",
			      g.recs, g.rc, g.msg, r.recs, r.rc, r.msg);
		if (!span && w)
			wait = g;
	}
	return wait;
}

void
path_of(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", find_dir, name);
}

static void
setup(void)
{
	snprintf(find_dir, sizeof(find_dir), "/tmp/gcap-find-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(find_dir));
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", find_dir);
	ck_assert_int_eq(system(cmd), 0);
}

int
find_main(const char *name, const TTest *const *tests, unsigned n)
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create("find");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	for (unsigned i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
