/* SPDX-License-Identifier: BSD-3-Clause */
/* The writer suite's shared helpers (wt_util.h). */
#include <check.h>
#include <ftw.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wt_util.h"

/* ---- test records ---- */

void
wt_mkrec(struct wt_rec *r, unsigned i, uint32_t caplen, unsigned nifs)
{
	memset(r, 0, sizeof(*r));
	r->h.ts_ns = T0 + (uint64_t)i * 1000003ull + i % 7;
	r->h.caplen = caplen;
	r->h.wirelen = caplen + i % 5;
	r->h.port = (uint16_t)(i % nifs);
	r->h.seq = i;
	r->h.outmask = 1;
	for (uint32_t j = 0; j < caplen; j++)
		r->data[j] = (uint8_t)(i * 7 + j * 13 + 1);
}

void
wt_utc(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
}

/* caplen of record i in the varied sets */
uint32_t
wt_vlen(unsigned i)
{
	return 14 + (i * 37) % 1500;
}

/* ---- temporary directories ---- */

char wt_dir[64];

static int
rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

void
wt_setup(void)
{
	strcpy(wt_dir, "/tmp/gcap-writer-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(wt_dir));
}

void
wt_teardown(void)
{
	if (wt_dir[0] != '\0')
		nftw(wt_dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	wt_dir[0] = '\0';
}

char *
wt_path(const char *name)
{
	static char bufs[8][512];
	static int k;
	char *b = bufs[k++ % 8];

	snprintf(b, 512, "%s/%s", wt_dir, name);
	return b;
}

bool
wt_exists(const char *p)
{
	return access(p, F_OK) == 0;
}

long long
wt_fsize(const char *p)
{
	struct stat st;

	if (stat(p, &st) != 0)
		return -1;
	return st.st_size;
}

unsigned
wt_count_files(void)
{
	char cmd[600];
	FILE *f;
	unsigned n = 0;

	snprintf(cmd, sizeof(cmd), "ls -1 '%s' | wc -l", wt_dir);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%u", &n), 1);
	pclose(f);
	return n;
}

TCase *
wt_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, wt_setup, wt_teardown);
	return tc;
}

/* ---- writer helpers ---- */

bool wt_behind;

struct gcap_writer_if wt_eth1[1] = { { .name = "eth0", .linktype = DLT_EN10MB } };
struct gcap_writer_if wt_eth3[3] = {
	{ .name = "net_pcap0", .linktype = DLT_EN10MB },
	{ .name = "net_pcap1", .linktype = DLT_EN10MB },
	{ .name = "net_pcap2", .linktype = DLT_EN10MB },
};

struct gcap_writer_conf
wt_conf1(const char *path)
{
	struct gcap_writer_conf c = {
		.path = path,
		.fmt = GCAP_FMT_AUTO,
		.snaplen = 65535,
		.nifs = 1,
		.ifs = wt_eth1,
		.start_ns = T0,
		.write_behind = wt_behind,
	};
	return c;
}

struct gcap_writer *
wt_open(const struct gcap_writer_conf *c)
{
	char eb[GCAP_ERRBUF_SIZE] = "";
	struct gcap_writer *w = gcap_writer_open(c, eb);

	ck_assert_msg(w != NULL, "open '%s': %s", c->path, eb);
	return w;
}

void
wt_close(struct gcap_writer *w, const struct gcap_writer_if_stats *st)
{
	char eb[GCAP_ERRBUF_SIZE] = "";
	int rc = gcap_writer_close(w, st, eb);

	ck_assert_msg(rc == 0, "close: %d %s", rc, eb);
}

int
wt_write_at(struct gcap_writer *w, unsigned i, uint64_t ts_ns)
{
	struct wt_rec r;

	wt_mkrec(&r, i, 100, 1);
	r.h.ts_ns = ts_ns;
	return gcap_writer_write(w, &r.h, r.data);
}

/* write records [first, first+n) of the given lengths */
void
wt_write_n(struct gcap_writer *w, unsigned first, unsigned n, uint32_t caplen,
	   unsigned nifs)
{
	struct wt_rec r;

	for (unsigned i = first; i < first + n; i++) {
		wt_mkrec(&r, i, caplen != 0 ? caplen : wt_vlen(i), nifs);
		ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	}
}

/*
 * Read a file with libpcap (nanosecond precision) and check that it holds
 * exactly the records ids[0..n) made by wt_mkrec with caplen (0: varied),
 * cut to snaplen. @return records read.
 */
int
wt_check_file_ids(const char *path, const unsigned *ids, int n, uint32_t caplen,
		  const uint32_t *caplens, uint32_t snaplen, int dlt)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(
		path, PCAP_TSTAMP_PRECISION_NANO, eb);
	struct pcap_pkthdr *h;
	const u_char *d;
	int k = 0, rc;

	ck_assert_msg(p != NULL, "libpcap cannot read '%s': %s", path, eb);
	ck_assert_int_eq(pcap_datalink(p), dlt);
	while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
		struct wt_rec r;

		ck_assert_msg(k < n, "%s: more than %d records", path, n);
		wt_mkrec(&r, ids[k],
			 caplens != NULL ? caplens[k] :
			 caplen != 0     ? caplen :
					   wt_vlen(ids[k]),
			 1);
		uint32_t incl = r.h.caplen < snaplen ? r.h.caplen : snaplen;

		ck_assert_uint_eq((uint64_t)h->ts.tv_sec, r.h.ts_ns / NS);
		ck_assert_uint_eq((uint64_t)h->ts.tv_usec, r.h.ts_ns % NS);
		ck_assert_uint_eq(h->caplen, incl);
		ck_assert_uint_eq(h->len, r.h.wirelen);
		ck_assert_mem_eq(d, r.data, incl);
		k++;
	}
	ck_assert_msg(rc == PCAP_ERROR_BREAK, "%s: read error after %d records: %s", path,
		      k, pcap_geterr(p));
	pcap_close(p);
	ck_assert_int_eq(k, n);
	return k;
}

int
wt_check_file(const char *path, unsigned first, int n, uint32_t caplen, uint32_t snaplen,
	      int dlt)
{
	unsigned ids[256] = { 0 };

	ck_assert_int_le(n, 256);
	for (int i = 0; i < n; i++)
		ids[i] = first + (unsigned)i;
	return wt_check_file_ids(path, ids, n, caplen, NULL, snaplen, dlt);
}

/* ---- pcapng parsing ---- */

uint32_t
wt_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

uint16_t
wt_rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

uint64_t
wt_rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

void
wt_ng_parse(const char *path, struct wt_ng *ni)
{
	FILE *f = fopen(path, "rb");
	static uint8_t b[4 << 20];
	size_t n, pos = 0;

	memset(ni, 0, sizeof(*ni));
	ck_assert_ptr_nonnull(f);
	n = fread(b, 1, sizeof(b), f);
	fclose(f);
	ck_assert_uint_lt(n, sizeof(b));
	while (pos < n) {
		ck_assert_uint_ge(n - pos, 12);
		uint32_t type = wt_rd32(b + pos), len = wt_rd32(b + pos + 4);

		ck_assert_uint_eq(len % 4, 0);
		ck_assert_uint_ge(len, 12);
		ck_assert_uint_le(pos + len, n);
		ck_assert_uint_eq(wt_rd32(b + pos + len - 4), len);
		const uint8_t *opt = NULL, *end = b + pos + len - 4;

		switch (type) {
		case 0x0a0d0d0a:
			ck_assert_uint_eq(wt_rd32(b + pos + 8), 0x1a2b3c4d);
			ck_assert_uint_eq(wt_rd16(b + pos + 12), 1);
			ck_assert_uint_eq(wt_rd16(b + pos + 14), 0);
			opt = b + pos + 24;
			ni->nshb++;
			break;
		case 1:
			ck_assert_uint_lt(ni->nidb, 8);
			ni->linktype[ni->nidb] = wt_rd16(b + pos + 8);
			ni->snaplen[ni->nidb] = wt_rd32(b + pos + 12);
			ni->tsresol[ni->nidb] = -1;
			opt = b + pos + 16;
			ni->nidb++;
			break;
		case 6:
			ck_assert_uint_lt(ni->nepb, 512);
			ni->epb_ts[ni->nepb] = ((uint64_t)wt_rd32(b + pos + 12) << 32) |
					       wt_rd32(b + pos + 16);
			ni->epb_if[ni->nepb++] = wt_rd32(b + pos + 8);
			ck_assert_uint_le(28 + ((wt_rd32(b + pos + 20) + 3) & ~3u) + 4,
					  len);
			opt = b + pos + 28 + ((wt_rd32(b + pos + 20) + 3) & ~3u);
			break;
		case 5:
			ck_assert_uint_lt(ni->nisb, 8);
			ni->isb_if[ni->nisb] = wt_rd32(b + pos + 8);
			opt = b + pos + 20;
			ni->nisb++;
			break;
		default: ni->nother++; break;
		}
		while (opt != NULL && opt + 4 <= end) {
			uint16_t code = wt_rd16(opt), olen = wt_rd16(opt + 2);
			const uint8_t *v = opt + 4;

			if (code == 0)
				break;
			ck_assert(v + olen <= end);
			if (type == 0x0a0d0d0a && code == 4)
				snprintf(ni->userappl, sizeof(ni->userappl), "%.*s", olen,
					 (const char *)v);
			if (type == 0x0a0d0d0a && code == 3)
				snprintf(ni->shb_os, sizeof(ni->shb_os), "%.*s", olen,
					 (const char *)v);
			if (type == 0x0a0d0d0a && code == 2)
				snprintf(ni->shb_hw, sizeof(ni->shb_hw), "%.*s", olen,
					 (const char *)v);
			if (type == 6) {
				unsigned i = ni->nepb - 1;

				ni->epb_nopts[i]++;
				if (code == 2 && olen == 4)
					ni->epb_flags[i] = wt_rd32(v);
				if (code == 6 && olen == 4)
					ni->epb_queue[i] = wt_rd32(v);
			}
			if (type == 1) {
				unsigned i = ni->nidb - 1;

				if (code == 3)
					snprintf(ni->if_descr[i], 128, "%.*s", olen,
						 (const char *)v);
				if (code == 12)
					snprintf(ni->if_os[i], 128, "%.*s", olen,
						 (const char *)v);
				if (code == 15)
					snprintf(ni->if_hw[i], 128, "%.*s", olen,
						 (const char *)v);
				if (code == 6 && olen == 6) {
					memcpy(ni->if_mac[i], v, 6);
					ni->if_has_mac[i] = true;
				}
				if (code == 8 && olen == 8)
					ni->if_speed[i] = wt_rd64(v);
				if (code == 11)
					ni->if_has_filter[i] = true;
			}
			if (type == 1) {
				unsigned i = ni->nidb - 1;

				if (code == 2)
					snprintf(ni->ifname[i], 64, "%.*s", olen,
						 (const char *)v);
				if (code == 9 && olen == 1)
					ni->tsresol[i] = v[0];
				if (code == 11 && olen >= 1) {
					ck_assert_uint_eq(v[0], 0);
					snprintf(ni->filter[i], 256, "%.*s", olen - 1,
						 (const char *)v + 1);
				}
			}
			if (type == 5) {
				unsigned i = ni->nisb - 1;
				uint64_t ts =
					((uint64_t)wt_rd32(v) << 32) | wt_rd32(v + 4);

				ck_assert_uint_eq(olen, 8);
				if (code == 2) {
					ni->isb_start[i] = ts;
					ni->isb_has_start[i] = true;
				}
				if (code == 3) {
					ni->isb_end[i] = ts;
					ni->isb_has_end[i] = true;
				}
				if (code == 4)
					ni->isb_recv[i] = wt_rd64(v);
				if (code == 5)
					ni->isb_drop[i] = wt_rd64(v);
				if (code == 6)
					ni->isb_acc[i] = wt_rd64(v);
				if (code == 7)
					ni->isb_osdrop[i] = wt_rd64(v);
				if (code == 8)
					ni->isb_usrdeliv[i] = wt_rd64(v);
			}
			opt = v + ((olen + 3u) & ~3u);
		}
		pos += len;
	}
	ck_assert_uint_eq(pos, n);
}

/* ---- external readers ---- */

bool
wt_have_tool(const char *p)
{
	if (access(p, X_OK) == 0)
		return true;
	fprintf(stderr, "writer: %s not installed, check skipped\n", p);
	return false;
}

/*
 * tshark -r path: every frame's interface id and length. @return frames,
 * -1 if tshark failed.
 */
int
wt_tshark_read(const char *path, unsigned *ifid, unsigned *len, int max)
{
	char cmd[700], line[256];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/tshark -n -r '%s' -T fields -e frame.len "
		 "-e frame.interface_id 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned a = 0, b = 0;

		/* a pcap file may have no interface id */
		if (sscanf(line, "%u %u", &a, &b) >= 1 && n < max) {
			len[n] = a;
			ifid[n] = b;
		}
		n++;
	}
	int st = pclose(f);

	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? n : -1;
}

/* capinfos: the value of one "Name: value" line, as a number. */
long
wt_capinfos_num(const char *path, const char *opt, const char *key)
{
	char cmd[700], line[256];
	FILE *f;
	long v = -1;

	snprintf(cmd, sizeof(cmd), "/usr/bin/capinfos %s '%s' 2>&1", opt, path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *c = strstr(line, key);

		if (c != NULL && (c = strchr(c, ':')) != NULL)
			v = strtol(c + 1, NULL, 10);
	}
	pclose(f);
	return v;
}
