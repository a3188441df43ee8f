/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer suite: files are written, then read back with libpcap (and with
 * tshark/capinfos when installed), and pcapng blocks are parsed here to
 * check what libpcap does not expose (interface ids, IDB options, ISBs).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpucap/gcap_writer.h"

#define NS 1000000000ull
/* 2024-01-02 03:04:05 UTC */
#define T0 (1704164645ull * NS)

/* ---- test records ---- */

struct trec {
	struct gcap_rec h;
	uint8_t data[1600];
};

static void
mkrec(struct trec *r, unsigned i, uint32_t caplen, unsigned nifs)
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

/* caplen of record i in the varied sets */
static uint32_t
vlen(unsigned i)
{
	return 14 + (i * 37) % 1500;
}

/* ---- temporary directories ---- */

static char tdir[64];

static int
rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

static void
setup(void)
{
	strcpy(tdir, "/tmp/gcap-writer-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
}

static void
teardown(void)
{
	if (tdir[0] != '\0')
		nftw(tdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	tdir[0] = '\0';
}

static char *
tpath(const char *name)
{
	static char bufs[8][512];
	static int k;
	char *b = bufs[k++ % 8];

	snprintf(b, 512, "%s/%s", tdir, name);
	return b;
}

static bool
exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static long long
fsize(const char *p)
{
	struct stat st;

	if (stat(p, &st) != 0)
		return -1;
	return st.st_size;
}

static unsigned
count_files(void)
{
	char cmd[600];
	FILE *f;
	unsigned n = 0;

	snprintf(cmd, sizeof(cmd), "ls -1 '%s' | wc -l", tdir);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%u", &n), 1);
	pclose(f);
	return n;
}

/* ---- writer helpers ---- */

static struct gcap_writer_if eth1[] = { { "eth0", DLT_EN10MB } };
static struct gcap_writer_if eth3[] = {
	{ "net_pcap0", DLT_EN10MB },
	{ "net_pcap1", DLT_EN10MB },
	{ "net_pcap2", DLT_EN10MB },
};

static struct gcap_writer_conf
conf1(const char *path)
{
	struct gcap_writer_conf c = {
		.path = path,
		.fmt = GCAP_FMT_AUTO,
		.snaplen = 65535,
		.nifs = 1,
		.ifs = eth1,
		.start_ns = T0,
	};
	return c;
}

static struct gcap_writer *
xopen(const struct gcap_writer_conf *c)
{
	char eb[GCAP_ERRBUF_SIZE] = "";
	struct gcap_writer *w = gcap_writer_open(c, eb);

	ck_assert_msg(w != NULL, "open '%s': %s", c->path, eb);
	return w;
}

static void
xclose(struct gcap_writer *w, const struct gcap_writer_if_stats *st)
{
	char eb[GCAP_ERRBUF_SIZE] = "";
	int rc = gcap_writer_close(w, st, eb);

	ck_assert_msg(rc == 0, "close: %d %s", rc, eb);
}

/* write records [first, first+n) of the given lengths */
static void
write_n(struct gcap_writer *w, unsigned first, unsigned n, uint32_t caplen,
	unsigned nifs)
{
	struct trec r;

	for (unsigned i = first; i < first + n; i++) {
		mkrec(&r, i, caplen != 0 ? caplen : vlen(i), nifs);
		ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	}
}

/*
 * Read a file with libpcap (nanosecond precision) and check that it holds
 * exactly the records ids[0..n) made by mkrec with caplen (0: varied),
 * cut to snaplen. @return records read.
 */
static int
check_file_ids(const char *path, const unsigned *ids, int n, uint32_t caplen,
	       const uint32_t *caplens, uint32_t snaplen, int dlt)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path,
		PCAP_TSTAMP_PRECISION_NANO, eb);
	struct pcap_pkthdr *h;
	const u_char *d;
	int k = 0, rc;

	ck_assert_msg(p != NULL, "libpcap cannot read '%s': %s", path, eb);
	ck_assert_int_eq(pcap_datalink(p), dlt);
	while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
		struct trec r;

		ck_assert_msg(k < n, "%s: more than %d records", path, n);
		mkrec(&r, ids[k], caplens != NULL ? caplens[k] :
		      caplen != 0 ? caplen : vlen(ids[k]), 1);
		uint32_t incl = r.h.caplen < snaplen ? r.h.caplen : snaplen;

		ck_assert_uint_eq((uint64_t)h->ts.tv_sec, r.h.ts_ns / NS);
		ck_assert_uint_eq((uint64_t)h->ts.tv_usec, r.h.ts_ns % NS);
		ck_assert_uint_eq(h->caplen, incl);
		ck_assert_uint_eq(h->len, r.h.wirelen);
		ck_assert_mem_eq(d, r.data, incl);
		k++;
	}
	ck_assert_msg(rc == PCAP_ERROR_BREAK, "%s: read error after %d records: %s",
		      path, k, pcap_geterr(p));
	pcap_close(p);
	ck_assert_int_eq(k, n);
	return k;
}

static int
check_file(const char *path, unsigned first, int n, uint32_t caplen,
	   uint32_t snaplen, int dlt)
{
	unsigned ids[256] = { 0 };

	ck_assert_int_le(n, 256);
	for (int i = 0; i < n; i++)
		ids[i] = first + (unsigned)i;
	return check_file_ids(path, ids, n, caplen, NULL, snaplen, dlt);
}

/* ---- pcapng parsing ---- */

struct ng_info {
	unsigned nshb, nidb, nepb, nisb, nother;
	char userappl[128];
	uint16_t linktype[8];
	uint32_t snaplen[8];
	char ifname[8][64];
	int tsresol[8];
	char filter[8][256];
	uint32_t epb_if[512];
	uint32_t isb_if[8];
	uint64_t isb_recv[8], isb_drop[8], isb_acc[8], isb_start[8], isb_end[8];
	bool isb_has_start[8], isb_has_end[8];
};

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t
rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void
ng_parse(const char *path, struct ng_info *ni)
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
		uint32_t type = rd32(b + pos), len = rd32(b + pos + 4);

		ck_assert_uint_eq(len % 4, 0);
		ck_assert_uint_ge(len, 12);
		ck_assert_uint_le(pos + len, n);
		ck_assert_uint_eq(rd32(b + pos + len - 4), len);
		const uint8_t *opt = NULL, *end = b + pos + len - 4;

		switch (type) {
		case 0x0a0d0d0a:
			ck_assert_uint_eq(rd32(b + pos + 8), 0x1a2b3c4d);
			ck_assert_uint_eq(rd16(b + pos + 12), 1);
			ck_assert_uint_eq(rd16(b + pos + 14), 0);
			opt = b + pos + 24;
			ni->nshb++;
			break;
		case 1:
			ck_assert_uint_lt(ni->nidb, 8);
			ni->linktype[ni->nidb] = rd16(b + pos + 8);
			ni->snaplen[ni->nidb] = rd32(b + pos + 12);
			ni->tsresol[ni->nidb] = -1;
			opt = b + pos + 16;
			ni->nidb++;
			break;
		case 6:
			ck_assert_uint_lt(ni->nepb, 512);
			ni->epb_if[ni->nepb++] = rd32(b + pos + 8);
			ck_assert_uint_le(28 + ((rd32(b + pos + 20) + 3) & ~3u) + 4, len);
			break;
		case 5:
			ck_assert_uint_lt(ni->nisb, 8);
			ni->isb_if[ni->nisb] = rd32(b + pos + 8);
			opt = b + pos + 20;
			ni->nisb++;
			break;
		default:
			ni->nother++;
			break;
		}
		while (opt != NULL && opt + 4 <= end) {
			uint16_t code = rd16(opt), olen = rd16(opt + 2);
			const uint8_t *v = opt + 4;

			if (code == 0)
				break;
			ck_assert(v + olen <= end);
			if (type == 0x0a0d0d0a && code == 4)
				snprintf(ni->userappl, sizeof(ni->userappl), "%.*s",
					 olen, (const char *)v);
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
				uint64_t ts = ((uint64_t)rd32(v) << 32) | rd32(v + 4);

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
					ni->isb_recv[i] = rd64(v);
				if (code == 5)
					ni->isb_drop[i] = rd64(v);
				if (code == 6)
					ni->isb_acc[i] = rd64(v);
			}
			opt = v + ((olen + 3u) & ~3u);
		}
		pos += len;
	}
	ck_assert_uint_eq(pos, n);
}

static uint32_t
file_magic(const char *path)
{
	uint32_t m = 0;
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fread(&m, 4, 1, f), 1);
	fclose(f);
	return m;
}

/* ---- external readers ---- */

static bool
have_tool(const char *p)
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
static int
tshark_read(const char *path, unsigned *ifid, unsigned *len, int max)
{
	char cmd[700], line[256];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/tshark -n -r '%s' -T fields -e frame.len "
		 "-e frame.interface_id 2>/dev/null", path);
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
static long
capinfos_num(const char *path, const char *opt, const char *key)
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

/* ==== pcap ==== */

START_TEST(test_pcap_roundtrip)
{
	const char *p = tpath("a.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w = xopen(&c);
	uint64_t nrec, nbytes, want = 24;

	ck_assert_str_eq(gcap_writer_filename(w), p);
	write_n(w, 0, 200, 0, 1);
	for (unsigned i = 0; i < 200; i++)
		want += 16 + vlen(i);
	gcap_writer_counts(w, &nrec, &nbytes);
	ck_assert_uint_eq(nrec, 200);
	ck_assert_uint_eq(nbytes, want);
	xclose(w, NULL);

	ck_assert_int_eq(fsize(p), (long long)want);
	/* the file header, byte by byte */
	uint8_t h[24];
	FILE *f = fopen(p, "rb");

	ck_assert_int_eq(fread(h, 1, 24, f), 24);
	fclose(f);
	ck_assert_uint_eq(rd32(h), 0xa1b23c4d);
	ck_assert_uint_eq(rd16(h + 4), 2);
	ck_assert_uint_eq(rd16(h + 6), 4);
	ck_assert_uint_eq(rd32(h + 8), 0);
	ck_assert_uint_eq(rd32(h + 12), 0);
	ck_assert_uint_eq(rd32(h + 16), 65535);
	ck_assert_uint_eq(rd32(h + 20), 1);
	check_file(p, 0, 200, 0, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_pcap_snaplen)
{
	const char *p = tpath("snap.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;

	c.snaplen = 64;
	w = xopen(&c);
	write_n(w, 0, 50, 0, 1);   /* 14..1500 bytes: most are cut */
	xclose(w, NULL);
	check_file(p, 0, 50, 0, 64, DLT_EN10MB);
}
END_TEST

/* around the snap length: shorter, exactly, one more, much longer */
START_TEST(test_pcap_snaplen_exact)
{
	static const uint32_t lens[] = { 10, 63, 64, 65, 200, 1500, 0, 64 };
	const char *p = tpath("snap2.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;
	unsigned ids[8];
	long long want = 24;

	for (int fmt = 0; fmt < 2; fmt++) {
		c.fmt = fmt ? GCAP_FMT_PCAPNG : GCAP_FMT_PCAP;
		c.snaplen = 64;
		w = xopen(&c);
		for (unsigned i = 0; i < 8; i++) {
			struct trec r;

			mkrec(&r, i, lens[i], 1);
			ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
			ids[i] = i;
			if (!fmt)
				want += 16 + (lens[i] < 64 ? lens[i] : 64);
		}
		xclose(w, NULL);
		/* 64 bytes kept at most, len stays the wire length */
		check_file_ids(p, ids, 8, 0, lens, 64, DLT_EN10MB);
		if (!fmt)
			ck_assert_int_eq(fsize(p), want);
	}
}
END_TEST

START_TEST(test_pcap_dlt_raw)
{
	static struct gcap_writer_if raw[] = { { "tun0", DLT_RAW } };
	const char *p = tpath("raw.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;

	c.ifs = raw;
	w = xopen(&c);
	write_n(w, 0, 3, 40, 1);
	xclose(w, NULL);
	/* LINKTYPE_RAW (101) in the file, DLT_RAW again through libpcap */
	FILE *f = fopen(p, "rb");
	uint8_t h[24];

	ck_assert_int_eq(fread(h, 1, 24, f), 24);
	fclose(f);
	ck_assert_uint_eq(rd32(h + 20), 101);
	check_file(p, 0, 3, 40, 65535, DLT_RAW);
}
END_TEST

START_TEST(test_pcap_multi_if_same_linktype)
{
	const char *p = tpath("m.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;

	c.nifs = 3;
	c.ifs = eth3;
	w = xopen(&c);
	write_n(w, 0, 9, 0, 3); /* ports 0,1,2: pcap ignores the port */
	xclose(w, NULL);
	check_file(p, 0, 9, 0, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_pcap_mixed_linktypes_einval)
{
	static struct gcap_writer_if mixed[] = {
		{ "eth0", DLT_EN10MB }, { "tun0", DLT_RAW },
	};
	const char *p = tpath("mixed.pcap");
	struct gcap_writer_conf c = conf1(p);
	char eb[GCAP_ERRBUF_SIZE] = "";

	c.nifs = 2;
	c.ifs = mixed;
	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(eb, "pcap has one link type") != NULL, "%s", eb);
	ck_assert_msg(strstr(eb, "pcapng") != NULL, "%s", eb);
	ck_assert(!exists(p));
}
END_TEST

START_TEST(test_tshark_pcap)
{
	const char *p = tpath("t.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;
	unsigned ifid[64], len[64];

	if (!have_tool("/usr/bin/tshark"))
		return;
	w = xopen(&c);
	write_n(w, 0, 37, 0, 1);
	xclose(w, NULL);
	ck_assert_int_eq(tshark_read(p, ifid, len, 64), 37);
	for (unsigned i = 0; i < 37; i++) {
		struct trec r;

		mkrec(&r, i, vlen(i), 1);
		ck_assert_uint_eq(len[i], r.h.wirelen);
	}
	if (have_tool("/usr/bin/capinfos"))
		ck_assert_int_eq(capinfos_num(p, "-c", "Number of packets"), 37);
}
END_TEST

/* ==== pcapng ==== */

START_TEST(test_pcapng_three_ifs)
{
	const char *p = tpath("n.pcapng");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer_if_stats st[3] = {
		{ 100, 1, 10 }, { 200, 2, 20 }, { 300, 3, 30 },
	};
	struct gcap_writer *w;
	struct ng_info ni;

	c.nifs = 3;
	c.ifs = eth3;
	c.filter_expr = "tcp port 80 or udp";
	c.app_name = "gpucap test";
	c.snaplen = 1000;
	w = xopen(&c);
	ck_assert_int_eq(file_magic(p), 0x0a0d0d0a); /* AUTO: .pcapng */
	write_n(w, 0, 120, 0, 3);
	xclose(w, st);

	check_file(p, 0, 120, 0, 1000, DLT_EN10MB);
	ng_parse(p, &ni);
	ck_assert_uint_eq(ni.nshb, 1);
	ck_assert_str_eq(ni.userappl, "gpucap test");
	ck_assert_uint_eq(ni.nidb, 3);
	ck_assert_uint_eq(ni.nepb, 120);
	ck_assert_uint_eq(ni.nisb, 3);
	ck_assert_uint_eq(ni.nother, 0);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_uint_eq(ni.linktype[i], 1);
		ck_assert_uint_eq(ni.snaplen[i], 1000);
		ck_assert_str_eq(ni.ifname[i], eth3[i].name);
		ck_assert_int_eq(ni.tsresol[i], 9);
		ck_assert_str_eq(ni.filter[i], "tcp port 80 or udp");
		ck_assert_uint_eq(ni.isb_if[i], i);
		ck_assert_uint_eq(ni.isb_recv[i], st[i].received);
		ck_assert_uint_eq(ni.isb_drop[i], st[i].dropped);
		ck_assert_uint_eq(ni.isb_acc[i], st[i].filter_accepted);
		ck_assert(ni.isb_has_start[i] && ni.isb_has_end[i]);
		ck_assert_uint_eq(ni.isb_start[i], T0);
		ck_assert_uint_ge(ni.isb_end[i], T0);
	}
	for (unsigned i = 0; i < 120; i++)
		ck_assert_uint_eq(ni.epb_if[i], i % 3);

	if (have_tool("/usr/bin/tshark")) {
		unsigned ifid[128], len[128];

		ck_assert_int_eq(tshark_read(p, ifid, len, 128), 120);
		for (unsigned i = 0; i < 120; i++) {
			struct trec r;

			mkrec(&r, i, vlen(i), 3);
			ck_assert_uint_eq(ifid[i], i % 3);
			ck_assert_uint_eq(len[i], r.h.wirelen);
		}
	}
	if (have_tool("/usr/bin/capinfos")) {
		ck_assert_int_eq(capinfos_num(p, "-c", "Number of packets"), 120);
		ck_assert_int_eq(capinfos_num(p, "-I", "Number of interfaces"), 3);
	}
}
END_TEST

START_TEST(test_pcapng_minimal_no_stats)
{
	static struct gcap_writer_if noname[] = { { NULL, DLT_EN10MB } };
	const char *p = tpath("min.pcapng");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;
	struct ng_info ni;

	c.ifs = noname;
	w = xopen(&c);
	write_n(w, 0, 4, 0, 1);
	xclose(w, NULL);
	check_file(p, 0, 4, 0, 65535, DLT_EN10MB);
	ng_parse(p, &ni);
	ck_assert_uint_eq(ni.nshb, 1);
	ck_assert_str_eq(ni.userappl, "");
	ck_assert_uint_eq(ni.nidb, 1);
	ck_assert_str_eq(ni.ifname[0], "");
	ck_assert_str_eq(ni.filter[0], "");
	ck_assert_int_eq(ni.tsresol[0], 9);
	ck_assert_uint_eq(ni.nepb, 4);
	ck_assert_uint_eq(ni.nisb, 0); /* no stats: no ISB */
}
END_TEST

START_TEST(test_pcapng_mixed_linktypes)
{
	static struct gcap_writer_if mixed[] = {
		{ "eth0", DLT_EN10MB }, { "tun0", DLT_RAW },
	};
	const char *p = tpath("mixed.pcapng");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer_if_stats st[2] = { { 5, 0, 5 }, { 7, 1, 6 } };
	struct gcap_writer *w;
	struct ng_info ni;

	c.nifs = 2;
	c.ifs = mixed;
	w = xopen(&c);
	write_n(w, 0, 10, 60, 2);
	xclose(w, st);
	ng_parse(p, &ni);
	ck_assert_uint_eq(ni.nidb, 2);
	ck_assert_uint_eq(ni.linktype[0], 1);
	ck_assert_uint_eq(ni.linktype[1], 101);
	ck_assert_uint_eq(ni.nepb, 10);
	ck_assert_uint_eq(ni.nisb, 2);
	if (have_tool("/usr/bin/tshark")) {
		unsigned ifid[16], len[16];

		ck_assert_int_eq(tshark_read(p, ifid, len, 16), 10);
		for (unsigned i = 0; i < 10; i++)
			ck_assert_uint_eq(ifid[i], i % 2);
	}
}
END_TEST

START_TEST(test_pcapng_bad_port)
{
	const char *p = tpath("port.pcapng");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w = xopen(&c);
	struct trec r;

	mkrec(&r, 0, 60, 1);
	r.h.port = 1; /* one interface only */
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), -EINVAL);
	/* not sticky: the writer goes on */
	write_n(w, 0, 2, 60, 1);
	xclose(w, NULL);
	check_file(p, 0, 2, 60, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_fmt_select)
{
	struct gcap_writer_conf c;
	struct gcap_writer *w;

	c = conf1(tpath("x.cap"));
	xclose(xopen(&c), NULL);
	ck_assert_uint_eq(file_magic(tpath("x.cap")), 0xa1b23c4d);

	c = conf1(tpath("x.pcapng.gz"));
	xclose(xopen(&c), NULL);
	ck_assert_uint_eq(file_magic(tpath("x.pcapng.gz")), 0xa1b23c4d);

	c = conf1(tpath("y.pcapng"));
	c.fmt = GCAP_FMT_PCAP;
	xclose(xopen(&c), NULL);
	ck_assert_uint_eq(file_magic(tpath("y.pcapng")), 0xa1b23c4d);

	c = conf1(tpath("z.pcap"));
	c.fmt = GCAP_FMT_PCAPNG;
	w = xopen(&c);
	write_n(w, 0, 3, 0, 1);
	xclose(w, NULL);
	ck_assert_uint_eq(file_magic(tpath("z.pcap")), 0x0a0d0d0a);
	check_file(tpath("z.pcap"), 0, 3, 0, 65535, DLT_EN10MB);
}
END_TEST

/* ==== durability and flushing ==== */

START_TEST(test_header_on_open_and_flush)
{
	const char *p = tpath("d.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w = xopen(&c);

	/* the header is in the file before any flush or close */
	ck_assert_int_eq(fsize(p), 24);
	check_file(p, 0, 0, 0, 65535, DLT_EN10MB);
	write_n(w, 0, 3, 100, 1);
	ck_assert_int_eq(fsize(p), 24); /* buffered */
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	ck_assert_int_eq(fsize(p), 24 + 3 * 116);
	check_file(p, 0, 3, 100, 65535, DLT_EN10MB);
	xclose(w, NULL);

	/* -U: every write call reaches the file */
	c.flush_each = true;
	w = xopen(&c);
	write_n(w, 0, 1, 100, 1);
	ck_assert_int_eq(fsize(p), 24 + 116);
	write_n(w, 1, 1, 100, 1);
	ck_assert_int_eq(fsize(p), 24 + 2 * 116);
	check_file(p, 0, 2, 100, 65535, DLT_EN10MB);
	xclose(w, NULL);

	/* pcapng: SHB and IDB on disk at open */
	c = conf1(tpath("d.pcapng"));
	w = xopen(&c);
	struct ng_info ni;

	ng_parse(tpath("d.pcapng"), &ni);
	ck_assert_uint_eq(ni.nshb, 1);
	ck_assert_uint_eq(ni.nidb, 1);
	xclose(w, NULL);
}
END_TEST

START_TEST(test_large_records)
{
	/* records larger than the 1 MiB buffer go straight to the file */
	static uint8_t big[3 << 20];
	const char *p = tpath("big.pcapng");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;
	struct gcap_rec h = { .ts_ns = T0 + 5, .caplen = sizeof(big),
			      .wirelen = sizeof(big), .outmask = 1 };
	struct ng_info ni;
	struct trec r;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 31);
	c.snaplen = sizeof(big);
	w = xopen(&c);
	mkrec(&r, 0, 100, 1);
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	ck_assert_int_eq(gcap_writer_write(w, &h, big), 0);
	mkrec(&r, 1, 101, 1); /* odd length: EPB padding */
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	xclose(w, NULL);
	ng_parse(p, &ni);
	ck_assert_uint_eq(ni.nepb, 3);

	/* check the big record's bytes in place */
	FILE *f = fopen(p, "rb");
	static uint8_t rd[4 << 20];
	size_t n = fread(rd, 1, sizeof(rd), f), pos = 0;
	int k = 0;

	fclose(f);
	while (pos < n) {
		uint32_t len = rd32(rd + pos + 4);

		if (rd32(rd + pos) == 6 && k++ == 1) {
			ck_assert_uint_eq(rd32(rd + pos + 20), sizeof(big));
			ck_assert_mem_eq(rd + pos + 28, big, sizeof(big));
		}
		pos += len;
	}
	ck_assert_int_eq(k, 3);

	/* and pcap */
	p = tpath("big.pcap");
	c = conf1(p);
	c.snaplen = sizeof(big);
	w = xopen(&c);
	ck_assert_int_eq(gcap_writer_write(w, &h, big), 0);
	xclose(w, NULL);
	ck_assert_int_eq(fsize(p), 24 + 16 + (long long)sizeof(big));
}
END_TEST

/* ==== export buffers ==== */

static size_t
add_rec(uint8_t *buf, size_t off, const struct trec *r)
{
	memcpy(buf + off, &r->h, sizeof(r->h));
	memcpy(buf + off + sizeof(r->h), r->data, r->h.caplen);
	memset(buf + off + sizeof(r->h) + r->h.caplen, 0xee,
	       GCAP_REC_SIZE(r->h.caplen) - sizeof(r->h) - r->h.caplen);
	return off + GCAP_REC_SIZE(r->h.caplen);
}

START_TEST(test_write_buf_bits)
{
	static uint8_t buf[64 << 10] __attribute__((aligned(8)));
	const char *p0 = tpath("b0.pcap"), *p3 = tpath("b3.pcap");
	struct gcap_writer_conf c0 = conf1(p0), c3 = conf1(p3);
	struct gcap_writer *w0, *w3;
	unsigned ids0[40], ids3[40];
	uint32_t lens0[40], lens3[40];
	int n0 = 0, n3 = 0;
	size_t off = 0;

	for (unsigned i = 0; i < 40; i++) {
		struct trec r;

		mkrec(&r, i, vlen(i) % 700 + 1, 1);
		r.h.outmask = (i % 2 ? 1ull : 0) | (i % 3 == 0 ? 1ull << 3 : 0) |
			      (1ull << 63);
		if (r.h.outmask & 1) {
			lens0[n0] = r.h.caplen;
			ids0[n0++] = i;
		}
		if (r.h.outmask & 8) {
			lens3[n3] = r.h.caplen;
			ids3[n3++] = i;
		}
		off = add_rec(buf, off, &r);
	}
	w0 = xopen(&c0);
	w3 = xopen(&c3);
	ck_assert_int_eq(gcap_writer_write_buf(w0, buf, (uint32_t)off, 0), n0);
	ck_assert_int_eq(gcap_writer_write_buf(w3, buf, (uint32_t)off, 3), n3);
	ck_assert_int_eq(gcap_writer_write_buf(w3, buf, (uint32_t)off, 5), 0);
	ck_assert_int_eq(gcap_writer_write_buf(w3, buf, 0, 3), 0);
	ck_assert_int_eq(gcap_writer_write_buf(w3, buf, (uint32_t)off, 64), -EINVAL);
	xclose(w0, NULL);
	xclose(w3, NULL);
	ck_assert_int_eq(n0, 20);
	ck_assert_int_eq(n3, 14);
	check_file_ids(p0, ids0, n0, 0, lens0, 65535, DLT_EN10MB);
	check_file_ids(p3, ids3, n3, 0, lens3, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_write_buf_corrupt)
{
	static uint8_t buf[16 << 10] __attribute__((aligned(8)));
	const char *p = tpath("corrupt.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w = xopen(&c);
	size_t off = 0, last;
	struct trec r;

	for (unsigned i = 0; i < 5; i++) {
		mkrec(&r, i, 100, 1);
		last = off;
		off = add_rec(buf, off, &r);
	}
	/* the last record claims more bytes than the buffer holds */
	((struct gcap_rec *)(buf + last))->caplen = 200;
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)off, 0), -EINVAL);
	/* a huge caplen must not wrap around */
	((struct gcap_rec *)(buf + last))->caplen = 0xfffffffcu;
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)off, 0), -EINVAL);
	((struct gcap_rec *)(buf + last))->caplen = 100;
	/* a buffer that ends inside a record header */
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)last + 8, 0),
			 -EINVAL);
	/* a buffer that ends inside the record's padding */
	((struct gcap_rec *)(buf + last))->caplen = 97;
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)off - 8, 0),
			 -EINVAL);
	((struct gcap_rec *)(buf + last))->caplen = 100;
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	/* nothing of the corrupt buffers was written */
	check_file(p, 0, 0, 100, 65535, DLT_EN10MB);
	/* the writer still works: the whole buffer goes through */
	ck_assert_int_eq(gcap_writer_write_buf(w, buf, (uint32_t)off, 0), 5);
	xclose(w, NULL);
	check_file(p, 0, 5, 100, 65535, DLT_EN10MB);
}
END_TEST

/* ==== rotation ==== */

/* 100-byte records: 116 bytes each in pcap; header 24 */
#define R100 116

START_TEST(test_rotate_C)
{
	const char *p = tpath("c.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;

	/* larger than 24 + 2 records: a file takes 3 records */
	c.rotate_bytes = 24 + 2 * R100;
	w = xopen(&c);
	ck_assert_str_eq(gcap_writer_filename(w), p);
	write_n(w, 0, 10, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("c.pcap3"));
	xclose(w, NULL);
	check_file(tpath("c.pcap"), 0, 3, 100, 65535, DLT_EN10MB);
	check_file(tpath("c.pcap1"), 3, 3, 100, 65535, DLT_EN10MB);
	check_file(tpath("c.pcap2"), 6, 3, 100, 65535, DLT_EN10MB);
	check_file(tpath("c.pcap3"), 9, 1, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(count_files(), 4);
}
END_TEST

START_TEST(test_rotate_C_W_ring)
{
	const char *p = tpath("ring.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;

	c.rotate_bytes = 24 + 2 * R100;
	c.max_files = 3;
	w = xopen(&c);
	/* with -W the first file is numbered too, width of W-1 = 1 digit */
	ck_assert_str_eq(gcap_writer_filename(w), tpath("ring.pcap0"));
	write_n(w, 0, 11, 100, 1);
	xclose(w, NULL);
	/* 0-2 went to ring0, 3-5 ring1, 6-8 ring2, 9-10 ring0 again */
	check_file(tpath("ring.pcap0"), 9, 2, 100, 65535, DLT_EN10MB);
	check_file(tpath("ring.pcap1"), 3, 3, 100, 65535, DLT_EN10MB);
	check_file(tpath("ring.pcap2"), 6, 3, 100, 65535, DLT_EN10MB);
	ck_assert(!exists(p));
	ck_assert(!exists(tpath("ring.pcap3")));
	ck_assert_uint_eq(count_files(), 3);
}
END_TEST

START_TEST(test_rotate_C_W_padding)
{
	struct gcap_writer_conf c = conf1(tpath("pad.pcapng"));
	struct gcap_writer *w;
	struct ng_info ni;

	/* W=11: numbers 0..10, two digits; a pcapng file per record */
	c.rotate_bytes = 1;
	c.max_files = 11;
	w = xopen(&c);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("pad.pcapng00"));
	write_n(w, 0, 10, 0, 1);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("pad.pcapng10"));
	/* the first record already found file 00 (header only) too large */
	ng_parse(tpath("pad.pcapng00"), &ni);
	ck_assert_uint_eq(ni.nshb, 1);
	ck_assert_uint_eq(ni.nepb, 0);
	/* records 10 and 11 wrap to 00 and 01 */
	write_n(w, 10, 2, 0, 1);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("pad.pcapng01"));
	xclose(w, NULL);
	ck_assert_uint_eq(count_files(), 11);
	check_file(tpath("pad.pcapng00"), 10, 1, 0, 65535, DLT_EN10MB);
	check_file(tpath("pad.pcapng01"), 11, 1, 0, 65535, DLT_EN10MB);
	for (unsigned k = 2; k <= 10; k++) {
		char n[32];

		snprintf(n, sizeof(n), "pad.pcapng%02u", k);
		check_file(tpath(n), k - 1, 1, 0, 65535, DLT_EN10MB);
		ng_parse(tpath(n), &ni);
		ck_assert_uint_eq(ni.nshb, 1);
		ck_assert_uint_eq(ni.nidb, 1);
		ck_assert_uint_eq(ni.nepb, 1);
	}

	/* W=10: still one digit (9 is the largest number), W=1: no number */
	teardown();
	setup();
	c = conf1(tpath("w10.pcap"));
	c.rotate_bytes = 1000;
	c.max_files = 10;
	w = xopen(&c);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("w10.pcap0"));
	xclose(w, NULL);
	c = conf1(tpath("w1.pcap"));
	c.rotate_bytes = 24 + R100 - 1;
	c.max_files = 1;
	w = xopen(&c);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("w1.pcap"));
	write_n(w, 0, 3, 100, 1);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("w1.pcap"));
	xclose(w, NULL);
	check_file(tpath("w1.pcap"), 2, 1, 100, 65535, DLT_EN10MB);
}
END_TEST

static void
utc(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
}

START_TEST(test_rotate_G)
{
	struct gcap_writer_conf c = conf1(tpath("g-%Y%m%d-%H%M%S.pcap"));
	struct gcap_writer *w;
	struct trec r;

	utc();
	c.rotate_secs = 10;
	w = xopen(&c);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("g-20240102-030405.pcap"));
	mkrec(&r, 0, 100, 1); /* at T0 + 0 */
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 5 * NS), 0);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 10 * NS - 1), 0);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("g-20240102-030405.pcap"));
	/* 10 s: a tick rotates, the new period starts at the tick's time */
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 12 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("g-20240102-030417.pcap"));
	/* the clock never goes back */
	ck_assert_int_eq(gcap_writer_tick(w, T0), 0);
	mkrec(&r, 1, 100, 1);
	r.h.ts_ns = T0 + 13 * NS;
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	/* a record's own time rotates too (the writer's clock) */
	mkrec(&r, 2, 100, 1);
	r.h.ts_ns = T0 + 25 * NS;
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("g-20240102-030430.pcap"));
	xclose(w, NULL);
	check_file(tpath("g-20240102-030405.pcap"), 0, 1, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(count_files(), 3);
	ck_assert_int_eq(fsize(tpath("g-20240102-030417.pcap")), 24 + R100);
	ck_assert_int_eq(fsize(tpath("g-20240102-030430.pcap")), 24 + R100);
}
END_TEST

START_TEST(test_rotate_G_W_stops)
{
	struct gcap_writer_conf c = conf1(tpath("gw-%H%M%S.pcapng"));
	struct gcap_writer_if_stats st = { 9, 8, 7 };
	struct gcap_writer *w;
	struct ng_info ni;
	struct trec r;

	utc();
	c.rotate_secs = 60;
	c.max_files = 2;
	w = xopen(&c);
	/* -W alone with -G: no number in the name */
	ck_assert_str_eq(gcap_writer_filename(w), tpath("gw-030405.pcapng"));
	write_n(w, 0, 2, 100, 1);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 60 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("gw-030505.pcapng"));
	mkrec(&r, 2, 100, 1);
	r.h.ts_ns = T0 + 61 * NS;
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	/* the next period would be file 3: done */
	mkrec(&r, 3, 100, 1);
	r.h.ts_ns = T0 + 121 * NS;
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), -ECANCELED);
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), -ECANCELED);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + 500 * NS), -ECANCELED);
	ck_assert_int_eq(gcap_writer_write_buf(w, (const uint8_t *)&r, 
			 GCAP_REC_SIZE(100), 0), -ECANCELED);
	uint64_t nrec;

	gcap_writer_counts(w, &nrec, NULL);
	ck_assert_uint_eq(nrec, 3);
	xclose(w, &st); /* done is not an error */
	ck_assert_uint_eq(count_files(), 2);
	ng_parse(tpath("gw-030505.pcapng"), &ni);
	ck_assert_uint_eq(ni.nepb, 1);
	ck_assert_uint_eq(ni.nisb, 1); /* stats land in the last file */
	ck_assert_uint_eq(ni.isb_recv[0], 9);
	ng_parse(tpath("gw-030405.pcapng"), &ni);
	ck_assert_uint_eq(ni.nepb, 2);
	ck_assert_uint_eq(ni.nisb, 0);

	/* tick alone ends it, too */
	teardown();
	setup();
	c = conf1(tpath("gt.pcap"));
	c.rotate_secs = 1;
	c.max_files = 1;
	w = xopen(&c);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + NS / 2), 0);
	ck_assert_int_eq(gcap_writer_tick(w, T0 + NS), -ECANCELED);
	xclose(w, NULL);
	ck_assert_uint_eq(count_files(), 1);
}
END_TEST

START_TEST(test_rotate_G_C)
{
	struct gcap_writer_conf c = conf1(tpath("gc-%M%S.pcap"));
	struct gcap_writer *w;
	struct trec r;

	utc();
	c.rotate_secs = 10;
	c.rotate_bytes = 24 + R100; /* 2 records a file */
	w = xopen(&c);
	/* tcpdump: -G with -C and no -W: the first file has no number */
	ck_assert_str_eq(gcap_writer_filename(w), tpath("gc-0405.pcap"));
	write_n(w, 0, 5, 100, 1); /* all at T0 + ~5 ms */
	ck_assert_str_eq(gcap_writer_filename(w), tpath("gc-0405.pcap2"));
	/* a time rotation restarts the numbering */
	mkrec(&r, 5, 100, 1);
	r.h.ts_ns = T0 + 10 * NS;
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), 0);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("gc-0415.pcap"));
	xclose(w, NULL);
	check_file(tpath("gc-0405.pcap"), 0, 2, 100, 65535, DLT_EN10MB);
	check_file(tpath("gc-0405.pcap1"), 2, 2, 100, 65535, DLT_EN10MB);
	check_file(tpath("gc-0405.pcap2"), 4, 1, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(count_files(), 4);

	/* with -W: numbered from 0, the ring wraps, -W does not stop */
	teardown();
	setup();
	c = conf1(tpath("gcw-%M%S.pcap"));
	c.rotate_secs = 10;
	c.rotate_bytes = 24 + R100;
	c.max_files = 2;
	w = xopen(&c);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("gcw-0405.pcap0"));
	write_n(w, 0, 5, 100, 1);
	for (unsigned k = 1; k <= 3; k++)
		ck_assert_int_eq(gcap_writer_tick(w, T0 + k * 10 * NS), 0);
	ck_assert_str_eq(gcap_writer_filename(w), tpath("gcw-0435.pcap0"));
	xclose(w, NULL);
	check_file(tpath("gcw-0405.pcap0"), 4, 1, 100, 65535, DLT_EN10MB);
	check_file(tpath("gcw-0405.pcap1"), 2, 2, 100, 65535, DLT_EN10MB);
	ck_assert_uint_eq(count_files(), 5);
}
END_TEST

START_TEST(test_rotate_no_strftime_without_G)
{
	const char *p = tpath("lit-%Y.pcap");
	struct gcap_writer_conf c = conf1(p);

	c.rotate_bytes = 100;
	xclose(xopen(&c), NULL);
	ck_assert(exists(p)); /* taken literally, as tcpdump does */
}
END_TEST

/* ==== stdout ==== */

START_TEST(test_stdout_pipe)
{
	struct gcap_writer_conf c = conf1("-");
	struct gcap_writer *w;
	int pfd[2], saved;
	char eb[PCAP_ERRBUF_SIZE];

	ck_assert_int_eq(pipe(pfd), 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(pfd[1], STDOUT_FILENO), STDOUT_FILENO);
	close(pfd[1]);
	w = gcap_writer_open(&c, eb);
	if (w != NULL) {
		ck_assert_str_eq(gcap_writer_filename(w), "-");
		write_n(w, 0, 20, 0, 1); /* < 64 KiB: fits in the pipe */
		ck_assert_int_eq(gcap_writer_close(w, NULL, eb), 0);
	}
	/* stdout is not closed by the writer: put it back */
	ck_assert_int_eq(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	ck_assert_ptr_nonnull(w);

	FILE *f = fdopen(pfd[0], "rb");
	pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(f,
		PCAP_TSTAMP_PRECISION_NANO, eb);
	struct pcap_pkthdr *h;
	const u_char *d;
	int k = 0;

	ck_assert_msg(pc != NULL, "%s", eb);
	while (pcap_next_ex(pc, &h, &d) == 1) {
		struct trec r;

		mkrec(&r, (unsigned)k, vlen((unsigned)k), 1);
		ck_assert_uint_eq(h->ts.tv_usec, r.h.ts_ns % NS);
		ck_assert_uint_eq(h->caplen, r.h.caplen);
		ck_assert_mem_eq(d, r.data, r.h.caplen);
		k++;
	}
	pcap_close(pc);
	ck_assert_int_eq(k, 20);
}
END_TEST

START_TEST(test_stdout_epipe)
{
	/* nobody reads stdout: the open fails with EPIPE, SIGPIPE ignored */
	struct gcap_writer_conf c = conf1("-");
	char eb[GCAP_ERRBUF_SIZE] = "";
	int pfd[2], saved, err;
	struct gcap_writer *w;

	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(pfd), 0);
	close(pfd[0]);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_eq(dup2(pfd[1], STDOUT_FILENO), STDOUT_FILENO);
	close(pfd[1]);
	errno = 0;
	w = gcap_writer_open(&c, eb);
	err = errno;
	dup2(saved, STDOUT_FILENO);
	close(saved);
	ck_assert_ptr_null(w);
	ck_assert_int_eq(err, EPIPE);
	ck_assert_str_eq(eb, "cannot write '-': Broken pipe");
}
END_TEST

START_TEST(test_stdout_no_rotation)
{
	struct gcap_writer_conf c = conf1("-");
	char eb[GCAP_ERRBUF_SIZE];

	c.rotate_bytes = 1000;
	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(eb, "stdout") != NULL, "%s", eb);
	c.rotate_bytes = 0;
	c.rotate_secs = 5;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ==== configuration and open errors ==== */

START_TEST(test_bad_conf)
{
	struct gcap_writer_conf c = conf1(tpath("bad.pcap"));
	static struct gcap_writer_if badlt[] = { { "x", -1 } };
	char eb[GCAP_ERRBUF_SIZE];

	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(NULL, eb));
	ck_assert_int_eq(errno, EINVAL);
	c.path = "";
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c.path = NULL;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c = conf1(tpath("bad.pcap"));
	c.nifs = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c = conf1(tpath("bad.pcap"));
	c.ifs = badlt;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c = conf1(tpath("bad.pcap"));
	c.fmt = (enum gcap_fmt)7;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	c = conf1(tpath("bad.pcap"));
	c.max_files = 3; /* -W without -C or -G */
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(eb, "-W") != NULL, "%s", eb);
	ck_assert(!exists(tpath("bad.pcap")));
	/* NULL-safe entry points */
	ck_assert_int_eq(gcap_writer_close(NULL, NULL, eb), 0);
	ck_assert_int_eq(gcap_writer_flush(NULL), -EINVAL);
	ck_assert_int_eq(gcap_writer_tick(NULL, 0), -EINVAL);
}
END_TEST

static void
expect_open_error(const char *path, int err)
{
	struct gcap_writer_conf c = conf1(path);
	char eb[GCAP_ERRBUF_SIZE] = "", want[600];

	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_msg(errno == err, "%s: errno %d (%s), want %d", path, errno,
		      strerror(errno), err);
	snprintf(want, sizeof(want), "cannot write '%s': %s", path, strerror(err));
	ck_assert_str_eq(eb, want);
}

START_TEST(test_open_enoent_eisdir)
{
	expect_open_error(tpath("no/such/dir/x.pcap"), ENOENT);
	expect_open_error(tdir, EISDIR);
}
END_TEST

START_TEST(test_open_eacces)
{
	/* root passes permission checks: drop to nobody in a child */
	char dir[600];
	pid_t pid;
	int st;

	snprintf(dir, sizeof(dir), "%s/ro", tdir);
	ck_assert_int_eq(mkdir(dir, 0555), 0);
	ck_assert_int_eq(chmod(tdir, 0755), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char path[700], eb[GCAP_ERRBUF_SIZE] = "", want[800];
		struct gcap_writer_conf c;

		if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(10);
		snprintf(path, sizeof(path), "%s/x.pcap", dir);
		c = conf1(path);
		errno = 0;
		if (gcap_writer_open(&c, eb) != NULL)
			_exit(11);
		if (errno != EACCES)
			_exit(12);
		snprintf(want, sizeof(want), "cannot write '%s': %s", path,
			 strerror(EACCES));
		_exit(strcmp(eb, want) == 0 ? 0 : 13);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "child status %d", st);
	ck_assert(!exists(tpath("ro/x.pcap")));
}
END_TEST

START_TEST(test_open_dev_full)
{
	/* the header cannot be written: the open fails, ENOSPC */
	expect_open_error("/dev/full", ENOSPC);
}
END_TEST

START_TEST(test_open_proc_file)
{
	/* a file that opens but refuses writes (EIO or EACCES by kernel) */
	struct gcap_writer_conf c = conf1("/proc/version");
	char eb[GCAP_ERRBUF_SIZE] = "", want[300];

	errno = 0;
	ck_assert_ptr_null(gcap_writer_open(&c, eb));
	ck_assert_int_ne(errno, 0);
	snprintf(want, sizeof(want), "cannot write '/proc/version': %s",
		 strerror(errno));
	ck_assert_str_eq(eb, want);
	ck_assert(exists("/proc/version"));
}
END_TEST

START_TEST(test_rotate_open_error)
{
	/* the next file cannot be created: the error is sticky */
	const char *p = tpath("rot.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;
	char eb[GCAP_ERRBUF_SIZE] = "";
	struct trec r;

	c.rotate_bytes = 24 + R100;
	w = xopen(&c);
	write_n(w, 0, 2, 100, 1);
	ck_assert_int_eq(mkdir(tpath("rot.pcap1"), 0755), 0); /* in the way */
	mkrec(&r, 2, 100, 1);
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), -EISDIR);
	ck_assert_int_eq(gcap_writer_write(w, &r.h, r.data), -EISDIR);
	ck_assert_msg(strstr(gcap_writer_errmsg(w), "rot.pcap1") != NULL, "%s",
		      gcap_writer_errmsg(w));
	ck_assert_int_eq(gcap_writer_close(w, NULL, eb), -EISDIR);
	ck_assert_msg(strstr(eb, "cannot write") != NULL, "%s", eb);
	check_file(p, 0, 2, 100, 65535, DLT_EN10MB);
}
END_TEST

/* ==== write errors: truncation back to the last whole record ==== */

/*
 * RLIMIT_FSIZE with SIGXFSZ ignored makes write(2) fail with EFBIG past a
 * size, the way a full disk fails with ENOSPC, without mounting anything.
 * The limit applies to every file of the process, check's own message file
 * included: between fsz_limit and fsz_restore no ck_assert may run, so the
 * tests keep results in variables and check them afterwards.
 */
struct fsz_guard {
	struct rlimit old;
	void (*oldsig)(int);
	int rc;
};

static void
fsz_limit(struct fsz_guard *g, rlim_t bytes)
{
	struct rlimit rl;

	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &g->old), 0);
	g->oldsig = signal(SIGXFSZ, SIG_IGN);
	rl.rlim_cur = bytes;
	rl.rlim_max = g->old.rlim_max;
	g->rc = setrlimit(RLIMIT_FSIZE, &rl);
}

static void
fsz_restore(struct fsz_guard *g)
{
	int rc = setrlimit(RLIMIT_FSIZE, &g->old);

	signal(SIGXFSZ, g->oldsig);
	ck_assert_int_eq(g->rc, 0);
	ck_assert_int_eq(rc, 0);
}

START_TEST(test_efbig_flush_each)
{
	/* -U: the failing write is exactly the record that did not fit */
	const char *p = tpath("fsz.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;
	struct fsz_guard g;
	char eb[GCAP_ERRBUF_SIZE] = "";
	struct trec r;
	uint64_t nrec, nbytes;
	int rc = 0, rc2, rc3, rc4, rcc;
	unsigned i;

	c.flush_each = true;
	w = xopen(&c);
	fsz_limit(&g, 24 + 5 * R100 + 50); /* record 5 ends past the limit */
	for (i = 0; i < 10; i++) {
		mkrec(&r, i, 100, 1);
		rc = gcap_writer_write(w, &r.h, r.data);
		if (rc != 0)
			break;
	}
	/* sticky: later calls report the same error */
	rc2 = gcap_writer_write(w, &r.h, r.data);
	rc3 = gcap_writer_flush(w);
	rc4 = gcap_writer_tick(w, T0 + 100 * NS);
	gcap_writer_counts(w, &nrec, &nbytes);
	rcc = gcap_writer_close(w, NULL, eb);
	fsz_restore(&g);

	ck_assert_uint_eq(i, 5);
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_int_eq(rc2, -EFBIG);
	ck_assert_int_eq(rc3, -EFBIG);
	ck_assert_int_eq(rc4, -EFBIG);
	ck_assert_uint_eq(nrec, 5);
	ck_assert_uint_eq(nbytes, 24 + 5 * R100);
	ck_assert_int_eq(rcc, -EFBIG);
	ck_assert_msg(strstr(eb, p) != NULL && strstr(eb, strerror(EFBIG)) != NULL,
		      "%s", eb);
	ck_assert_int_eq(fsize(p), 24 + 5 * R100);
	check_file(p, 0, 5, 100, 65535, DLT_EN10MB);
}
END_TEST

START_TEST(test_efbig_buffered)
{
	/* buffered: the flush fails half way through the buffer; the file
	 * keeps the whole records that made it, counts follow */
	for (int ng = 0; ng < 2; ng++) {
		const char *p = tpath(ng ? "fb.pcapng" : "fb.pcap");
		struct gcap_writer_conf c = conf1(p);
		struct gcap_writer *w;
		struct fsz_guard g;
		char eb[GCAP_ERRBUF_SIZE] = "";
		long long hdr, rec = ng ? 28 + 100 + 4 : R100;
		uint64_t nrec, nbytes;
		int wrc = 0, frc, rc2, rcc;
		struct trec r;

		w = xopen(&c);
		hdr = fsize(p);
		fsz_limit(&g, (rlim_t)(hdr + 7 * rec + rec / 2));
		for (unsigned i = 0; i < 20; i++) { /* all in the buffer */
			mkrec(&r, i, 100, 1);
			wrc |= gcap_writer_write(w, &r.h, r.data);
		}
		frc = gcap_writer_flush(w);
		gcap_writer_counts(w, &nrec, &nbytes);
		rc2 = gcap_writer_write(w, &r.h, r.data);
		rcc = gcap_writer_close(w, NULL, eb);
		fsz_restore(&g);

		ck_assert_int_eq(wrc, 0);
		ck_assert_int_eq(frc, -EFBIG);
		ck_assert_uint_eq(nrec, 7);
		ck_assert_uint_eq(nbytes, (uint64_t)(hdr + 7 * rec));
		ck_assert_int_eq(rc2, -EFBIG);
		ck_assert_int_eq(rcc, -EFBIG);
		ck_assert_msg(strstr(eb, "last whole record") != NULL, "%s", eb);
		ck_assert_int_eq(fsize(p), hdr + 7 * rec);
		check_file(p, 0, 7, 100, 65535, DLT_EN10MB);
		if (ng) {
			struct ng_info ni;

			ng_parse(p, &ni);
			ck_assert_uint_eq(ni.nepb, 7);
			ck_assert_uint_eq(ni.nisb, 0);
		}
	}
}
END_TEST

START_TEST(test_efbig_large_record)
{
	/* a record written past the buffer (direct write) is cut off whole */
	static uint8_t big[2 << 20];
	const char *p = tpath("fbig.pcap");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer *w;
	struct gcap_rec h = { .ts_ns = T0, .caplen = sizeof(big),
			      .wirelen = sizeof(big), .outmask = 1 };
	struct fsz_guard g;
	char eb[GCAP_ERRBUF_SIZE];
	int rc, rcc;

	c.snaplen = sizeof(big);
	w = xopen(&c);
	write_n(w, 0, 3, 100, 1);
	fsz_limit(&g, 1 << 20);
	rc = gcap_writer_write(w, &h, big);
	rcc = gcap_writer_close(w, NULL, eb);
	fsz_restore(&g);
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_int_eq(rcc, -EFBIG);
	ck_assert_int_eq(fsize(p), 24 + 3 * R100);
	check_file(p, 0, 3, 100, sizeof(big), DLT_EN10MB);
}
END_TEST

START_TEST(test_efbig_at_close_isb)
{
	/* the ISBs at close do not fit: the records stay, the error shows */
	const char *p = tpath("fisb.pcapng");
	struct gcap_writer_conf c = conf1(p);
	struct gcap_writer_if_stats st = { 1, 2, 3 };
	struct gcap_writer *w;
	struct fsz_guard g;
	char eb[GCAP_ERRBUF_SIZE] = "";
	long long hdr;
	int rcc;

	w = xopen(&c);
	hdr = fsize(p);
	write_n(w, 0, 4, 100, 1);
	ck_assert_int_eq(gcap_writer_flush(w), 0);
	fsz_limit(&g, (rlim_t)(hdr + 4 * 132 + 40)); /* an ISB is 88 bytes */
	rcc = gcap_writer_close(w, &st, eb);
	fsz_restore(&g);
	ck_assert_int_eq(rcc, -EFBIG);
	ck_assert_msg(eb[0] != '\0', "no message");
	ck_assert_int_eq(fsize(p), hdr + 4 * 132);
	check_file(p, 0, 4, 100, 65535, DLT_EN10MB);
}
END_TEST

/* ==== a real full disk: ENOSPC on a small tmpfs ==== */

/*
 * Mount a tmpfs of `size` on dir (created if needed), in a mount namespace
 * of this test's own process so that nothing outlives it. @return false,
 * with a message, when that cannot be done (not root, no mount rights): the
 * caller skips.
 */
static bool
small_fs(const char *dir, const char *size)
{
	static bool ns, said;
	char opt[64];

	if (geteuid() != 0) {
		if (!said)
			fprintf(stderr, "writer: not root, tmpfs ENOSPC check "
				"skipped\n");
		said = true;
		return false;
	}
	if (!ns) {
		if (unshare(CLONE_NEWNS) != 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
			fprintf(stderr, "writer: no mount namespace (%s), tmpfs "
				"ENOSPC check skipped\n", strerror(errno));
			return false;
		}
		ns = true;
	}
	(void)umount2(dir, MNT_DETACH);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "writer: mkdir %s: %s\n", dir, strerror(errno));
		return false;
	}
	snprintf(opt, sizeof(opt), "size=%s", size);
	if (mount("tmpfs", dir, "tmpfs", 0, opt) != 0) {
		fprintf(stderr, "writer: cannot mount a tmpfs (%s), tmpfs ENOSPC "
			"check skipped\n", strerror(errno));
		return false;
	}
	return true;
}

/*
 * Read path with libpcap: every record must be the next one mkrec makes
 * (ids from *next on, varied lengths) and the file must end cleanly.
 * @return records read; *next advances past them.
 */
static uint64_t
read_seq(const char *path, unsigned *next)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path,
		PCAP_TSTAMP_PRECISION_NANO, eb);
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t k = 0;
	int rc;

	ck_assert_msg(p != NULL, "libpcap cannot read '%s': %s", path, eb);
	while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
		struct trec r;

		mkrec(&r, *next, vlen(*next), 1);
		ck_assert_uint_eq((uint64_t)h->ts.tv_sec, r.h.ts_ns / NS);
		ck_assert_uint_eq((uint64_t)h->ts.tv_usec, r.h.ts_ns % NS);
		ck_assert_uint_eq(h->caplen, r.h.caplen);
		ck_assert_uint_eq(h->len, r.h.wirelen);
		ck_assert_mem_eq(d, r.data, r.h.caplen);
		(*next)++;
		k++;
	}
	ck_assert_msg(rc == PCAP_ERROR_BREAK, "%s: read error after %llu "
		      "records: %s", path, (unsigned long long)k, pcap_geterr(p));
	pcap_close(p);
	return k;
}

/*
 * Write varied records into a small tmpfs until the disk is full, then
 * check that gcap_writer_counts() is what the files hold: as many records
 * as libpcap reads back (cleanly, in order, no gaps), and as many bytes.
 * rotate: -C in bytes (0: one file).
 */
static void
enospc_case(bool ng, const char *size, uint64_t rotate)
{
	const char *dir = tpath("mnt");
	char p[600], eb[GCAP_ERRBUF_SIZE] = "";
	struct gcap_writer_conf c;
	struct gcap_writer *w;
	struct trec r;
	uint64_t nrec, nbytes, got = 0, sz = 0;
	unsigned i, next = 0, nfiles = 0;
	int rc = 0, rcc;

	if (!small_fs(dir, size))
		return;
	snprintf(p, sizeof(p), "%s/o.%s", dir, ng ? "pcapng" : "pcap");
	c = conf1(p);
	c.rotate_bytes = rotate;
	w = xopen(&c);
	/* 4000 records of about 770 bytes: more than the 1 MiB buffer */
	for (i = 0; i < 4000; i++) {
		mkrec(&r, i, vlen(i), 1);
		rc = gcap_writer_write(w, &r.h, r.data);
		if (rc != 0)
			break;
	}
	if (rc == 0)
		rc = gcap_writer_flush(w);
	gcap_writer_counts(w, &nrec, &nbytes);
	rcc = gcap_writer_close(w, NULL, eb);
	ck_assert_msg(rc == -ENOSPC, "%s (%s, -C %llu): write %d at record %u",
		      p, size, (unsigned long long)rotate, rc, i);
	ck_assert_int_eq(rcc, -ENOSPC);
	ck_assert_msg(strstr(eb, strerror(ENOSPC)) != NULL, "%s", eb);

	for (unsigned k = 0; k < 100; k++) {
		char f[640];

		if (k == 0)
			snprintf(f, sizeof(f), "%s", p);
		else
			snprintf(f, sizeof(f), "%s%u", p, k);
		if (!exists(f))
			break;
		got += read_seq(f, &next);
		sz += (uint64_t)fsize(f);
		nfiles++;
	}
	ck_assert_msg(got == nrec, "%s (%s, -C %llu): counts say %llu records, "
		      "the %u files hold %llu", p, size,
		      (unsigned long long)rotate, (unsigned long long)nrec,
		      nfiles, (unsigned long long)got);
	ck_assert_uint_eq(sz, nbytes);
	ck_assert_uint_gt(got, 0);
	ck_assert_uint_le(got, i);
	if (rotate != 0)
		ck_assert_uint_gt(nfiles, 1);
	ck_assert_int_eq(umount2(dir, MNT_DETACH), 0);
}

START_TEST(test_enospc_buffered)
{
	/* the disk fills in the middle of a buffered flush */
	static const char *sizes[] = { "64k", "100k", "192k", "300k" };

	for (int ng = 0; ng < 2; ng++)
		for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			enospc_case(ng, sizes[s], 0);
}
END_TEST

START_TEST(test_enospc_rotate_C)
{
	/* -C: the disk fills at a rotation's flush or in a later file */
	static const char *sizes[] = { "64k", "160k", "300k" };
	static const uint64_t rot[] = { 9000, 20000, 30000 };

	for (int ng = 0; ng < 2; ng++)
		for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (unsigned k = 0; k < sizeof(rot) / sizeof(rot[0]); k++)
				enospc_case(ng, sizes[s], rot[k]);
}
END_TEST

static Suite *
writer_suite(void)
{
	Suite *s = suite_create("writer");
	TCase *tc;

	tc = tcase_create("pcap");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pcap_roundtrip);
	tcase_add_test(tc, test_pcap_snaplen);
	tcase_add_test(tc, test_pcap_snaplen_exact);
	tcase_add_test(tc, test_pcap_dlt_raw);
	tcase_add_test(tc, test_pcap_multi_if_same_linktype);
	tcase_add_test(tc, test_pcap_mixed_linktypes_einval);
	tcase_add_test(tc, test_tshark_pcap);
	suite_add_tcase(s, tc);

	tc = tcase_create("pcapng");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pcapng_three_ifs);
	tcase_add_test(tc, test_pcapng_minimal_no_stats);
	tcase_add_test(tc, test_pcapng_mixed_linktypes);
	tcase_add_test(tc, test_pcapng_bad_port);
	tcase_add_test(tc, test_fmt_select);
	tcase_add_test(tc, test_header_on_open_and_flush);
	tcase_add_test(tc, test_large_records);
	suite_add_tcase(s, tc);

	tc = tcase_create("export_buffers");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_write_buf_bits);
	tcase_add_test(tc, test_write_buf_corrupt);
	suite_add_tcase(s, tc);

	tc = tcase_create("rotation");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rotate_C);
	tcase_add_test(tc, test_rotate_C_W_ring);
	tcase_add_test(tc, test_rotate_C_W_padding);
	tcase_add_test(tc, test_rotate_G);
	tcase_add_test(tc, test_rotate_G_W_stops);
	tcase_add_test(tc, test_rotate_G_C);
	tcase_add_test(tc, test_rotate_no_strftime_without_G);
	suite_add_tcase(s, tc);

	tc = tcase_create("stdout");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_stdout_pipe);
	tcase_add_test(tc, test_stdout_epipe);
	tcase_add_test(tc, test_stdout_no_rotation);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bad_conf);
	tcase_add_test(tc, test_open_enoent_eisdir);
	tcase_add_test(tc, test_open_eacces);
	tcase_add_test(tc, test_open_dev_full);
	tcase_add_test(tc, test_open_proc_file);
	tcase_add_test(tc, test_rotate_open_error);
	tcase_add_test(tc, test_efbig_flush_each);
	tcase_add_test(tc, test_efbig_buffered);
	tcase_add_test(tc, test_efbig_large_record);
	tcase_add_test(tc, test_efbig_at_close_isb);
	tcase_add_test(tc, test_enospc_buffered);
	tcase_add_test(tc, test_enospc_rotate_C);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(writer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
