/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Offline differential suite: every capture of the tcpdump test corpus
 * (../shared/data/pcaps/tcpdump-tests, when present) and of tests/data goes
 * through the real pipeline in-process (gcap_capfile's reader, which
 * parses records itself and hands damaged ones to libpcap -> executor -> writer
 * thread -> one output per expression, one pass per file), and every output
 * file, read back with libpcap at nanosecond precision, must hold exactly
 * the records libpcap's pcap_offline_filter() selects from the same file
 * (same packets, order, timestamps, caplen, len and bytes).
 *
 * - Expressions libpcap rejects for a file's link type must be rejected by
 *   gcap_filter_compile() too (and the other way round).
 * - Damaged files: the records before the damage must match, and
 *   gcap_pipeline_run_inputs() fails exactly when pcap_next_ex() does.
 * - GCAP_TEST_BACKEND=gpu runs the gpu executor instead of the cpu one
 *   (exit 77 when this build or this machine has no usable GPU);
 *   GCAP_TEST_GPU_INTERP=1 makes it interpret BPF instead of compiling it.
 * - Filters compile as gpu-capture -r compiles them: on the file's handle
 *   (gcap_filter_compile_on), as tcpdump -r does; for DLT_NULL/DLT_LOOP
 *   libpcap builds other programs there than on pcap_open_dead().
 * - GCAP_TEST_CORPUS_MAX=N limits the corpus to its first N files (sorted
 *   by name), for quick runs.
 * - GCAP_TEST_CPU_WORKERS=N: the cpu executor filters on N worker threads.
 * - GCAP_TEST_COPIERS=N: the pipeline copies a mapped file's batches into
 *   the staging areas on N threads (pipeline_copy.c), as for the gpu
 *   executor; the cpu executor is then told to read the staging (not the
 *   mapping), as the gpu one does.
 * - GCAP_TEST_SPANS=N (gpu backend): the gpu executor finds a plain pcap
 *   file's records itself, in spans of N bytes (0: as many as the staging
 *   holds), as gpu-capture -r does; small spans make every file cross
 *   many spans and many of the kernel's sub-chunks.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_capfile.h"
#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_pipeline.h"
#include "gpucap/gcap_writer.h"
#ifdef GCAP_TEST_HAVE_GPU
#include "gpucap/gcap_gpu.h"
#endif

#define SNAPLEN 262144u
/* small batches and a short ring so that files span several batches and
 * the file reader waits for free slots */
#define BATCH 32u
#define RING 4u
#define STAGE (1u << 20)
/* with spans: a megabyte of records past the longest record's tail */
#define STAGE_SPANS (STAGE + GCAP_SPAN_TAIL)

/* What the suite filters with: every family of pcap-filter(7)
 * (protocols, hosts and nets, ports, lengths, byte tests), plus a few
 * that libpcap rejects for some link types. At most GCAP_MAX_OUTPUTS
 * (one pipeline pass feeds them all). */
static const char *const exprs[] = {
	"",
	"ip",
	"ip6",
	"arp",
	"tcp",
	"udp",
	"icmp",
	"icmp6",
	"host 10.0.0.1",
	"src host 192.168.1.10",
	"dst host 8.8.8.8 or dst host 2001:db8::2",
	"net 10.0.0.0/8",
	"src net 192.168.0.0/16 and not dst net 10.0.0.0/8",
	"ip6 net 2001:db8::/32",
	"port 80",
	"tcp port 80 or udp port 53",
	"src port 443",
	"tcp dst port 22",
	"portrange 1000-7000",
	"udp dst portrange 1-1023",
	"ip proto 47 or ip proto 50",
	"ip6 proto 58",
	"sctp or igmp or pim",
	"tcp[tcpflags] & tcp-syn != 0",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn",
	"tcp[tcpflags] & (tcp-rst|tcp-fin) != 0",
	"tcp[13] = 0x18",
	"vlan",
	"vlan 10",
	"vlan and ip",
	"vlan 300 and vlan 20",
	"mpls or pppoes",
	"icmp[icmptype] = icmp-echo",
	"icmp[icmptype] != icmp-echo and icmp[icmptype] != icmp-echoreply",
	"icmp6 and ip6[40] = 128",
	"greater 1000",
	"less 100",
	"len >= 64 and len <= 128",
	"ip[2:2] > 500",
	"ip[8] < 64",
	"ip[6:2] & 0x1fff != 0",
	"(ip[2:2] - ((ip[0] & 0xf) << 2)) > 100",
	"udp[4:2] * 2 > 200",
	"ip[4:2] / 256 > 100",
	"len % 7 = 1",
	"ip[1] ^ 0xff = 0xff",
	"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
	"udp port 53 and udp[10] & 0x80 = 0",
	"ether broadcast",
	"ether multicast",
	"ip broadcast",
	"ip multicast",
	"ip6 multicast",
	"ether host 00:11:22:33:44:55",
	"ether proto 0x88a8 or ether[12:2] = 0x8100",
	"link[0] & 1 = 1",
	"not tcp and not udp",
	"ip6 and tcp port 443",
	"ip and (tcp or udp) and not port 53",
	"ip host 10.0.0.1 and ip host 10.0.0.2",
	"port domain or port http",
	"stp or iso",
	"wlan addr1 00:11:22:33:44:55",
	"ip[100000] = 1",
};
#define NEXPR (sizeof(exprs) / sizeof(exprs[0]))
_Static_assert(NEXPR >= 40 && NEXPR <= GCAP_MAX_OUTPUTS, "expression count");

/* The inputs, found before the runner forks. */
static char **files;
static unsigned nfiles;
static unsigned nlocal; /* the first nlocal are tests/data's */
static const struct gcap_exec_ops *ops;
static bool gpu_interp;
static enum gcap_mem gpu_mem = GCAP_MEM_AUTO; /* GCAP_TEST_GPU_MEM */
static unsigned cpu_workers;                  /* GCAP_TEST_CPU_WORKERS */
static unsigned copiers;                      /* GCAP_TEST_COPIERS */
static bool spans;                            /* GCAP_TEST_SPANS set */
static uint32_t span_bytes;                   /* its value */
static struct gcap_exec_ops staged_ops;       /* the cpu one, reading the staging */
static char tmp_root[512];

/* One file read into memory with libpcap. */
struct pkt {
	struct pcap_pkthdr h;
	const u_char *data;
};

struct capfile {
	pcap_t *p; /* kept open: the reference filters compile on it */
	struct pkt *pkts;
	size_t n;
	bool damaged; /* pcap_next_ex failed after n records */
	/* a pcap file's fraction unit in ns (1000: microseconds, 1:
	 * nanoseconds; 0: not pcap) */
	int64_t frac_ns;
	char err[PCAP_ERRBUF_SIZE];
};

static void
capfile_free(struct capfile *cf)
{
	for (size_t i = 0; i < cf->n; i++)
		free((void *)cf->pkts[i].data);
	free(cf->pkts);
	if (cf->p != NULL)
		pcap_close(cf->p);
}

/* @return 0, or -1 when libpcap cannot open the file at all. */
static int
capfile_load(const char *path, struct capfile *cf)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p;
	size_t cap = 0;

	memset(cf, 0, sizeof(*cf));
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO,
						    err);
	if (p == NULL) {
		snprintf(cf->err, sizeof(cf->err), "%s", err);
		return -1;
	}
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *d;
		int r = pcap_next_ex(p, &h, &d);
		u_char *copy;

		if (r == PCAP_ERROR_BREAK)
			break;
		if (r < 0) {
			cf->damaged = true;
			snprintf(cf->err, sizeof(cf->err), "%s", pcap_geterr(p));
			break;
		}
		if (cf->n == cap) {
			cap = cap ? cap * 2 : 256;
			cf->pkts = realloc(cf->pkts, cap * sizeof(*cf->pkts));
			ck_assert_ptr_nonnull(cf->pkts);
		}
		copy = malloc(h->caplen ? h->caplen : 1);
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, d, h->caplen);
		cf->pkts[cf->n].h = *h;
		cf->pkts[cf->n].data = copy;
		cf->n++;
	}
	cf->p = p;
	{
		FILE *f = fopen(path, "rb");
		uint32_t m = 0;

		if (f != NULL && fread(&m, 4, 1, f) == 1) {
			if (m == 0xa1b2c3d4u || m == 0xd4c3b2a1u)
				cf->frac_ns = 1000;
			else if (m == 0xa1b23c4du || m == 0x4d3cb2a1u)
				cf->frac_ns = 1;
		}
		if (f != NULL)
			fclose(f);
	}
	return 0;
}

/*
 * A record's instant in ns. pcap stores seconds as unsigned 32-bit and
 * libpcap 1.10 sign-extends them (time_2038_overflow.pcap), so negative
 * seconds are taken modulo 2^32. Some damaged corpus files hold a fraction
 * outside [0, 1 s) (atm-oam-loopback-print-overrun.pcap): the pipeline keeps
 * the instant (sec * 1e9 + fraction), so the instant is what is compared.
 */
static int64_t
ts_ns(const struct timeval *tv)
{
	int64_t sec =
		tv->tv_sec < 0 ? (int64_t)(uint32_t)tv->tv_sec : (int64_t)tv->tv_sec;

	return sec * 1000000000 + (int64_t)tv->tv_usec;
}

/* What a pcap file can hold of an instant: seconds modulo 2^32. */
static int64_t
ts_pcap(int64_t ns)
{
	int64_t sec = ns / 1000000000, frac = ns % 1000000000;

	return (int64_t)(uint32_t)sec * 1000000000 + frac;
}

static int
rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* The records of out must be those of cf that prog (the reference) selects. */
static void
compare_output(const char *fname, const char *expr, const char *out,
	       const struct capfile *cf, const struct bpf_program *ref)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *o = pcap_open_offline_with_tstamp_precision(
		out, PCAP_TSTAMP_PRECISION_NANO, err);
	size_t k = 0, nrec = 0;
	bool pcap_out = strcmp(strrchr(out, '.'), ".pcap") == 0;

	ck_assert_msg(o != NULL, "%s '%s': output %s does not read back: %s", fname, expr,
		      out, err);
	ck_assert_msg(pcap_datalink(o) == pcap_datalink(cf->p),
		      "%s '%s': output link type %d, input %d", fname, expr,
		      pcap_datalink(o), pcap_datalink(cf->p));
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *d;
		int r = pcap_next_ex(o, &h, &d);
		const struct pkt *want = NULL;

		ck_assert_msg(r == 1 || r == PCAP_ERROR_BREAK,
			      "%s '%s': output record %zu unreadable: %s", fname, expr,
			      nrec + 1, pcap_geterr(o));
		while (k < cf->n) {
			const struct pkt *c = &cf->pkts[k++];

			if (pcap_offline_filter(ref, &c->h, c->data) != 0) {
				want = c;
				break;
			}
		}
		if (r == PCAP_ERROR_BREAK) {
			ck_assert_msg(want == NULL,
				      "%s '%s': output ends after %zu records, libpcap "
				      "selects input record %zu too",
				      fname, expr, nrec, k);
			break;
		}
		nrec++;
		ck_assert_msg(want != NULL,
			      "%s '%s': output has %zu+ records, libpcap selects fewer",
			      fname, expr, nrec);
		int64_t want_ts = ts_ns(&want->h.ts);

		/* a pcap fraction field of 2^31 or more, which libpcap reads
		 * as negative: a pcapng output holds the fields taken together,
		 * unsigned (a pcap output holds them as they were) */
		if (!pcap_out && cf->frac_ns != 0 && want->h.ts.tv_usec < 0)
			want_ts += (INT64_C(1) << 32) * cf->frac_ns;
		if (want_ts >= 0 && pcap_out)
			want_ts = ts_pcap(want_ts);
		/* a negative instant (damaged input) has no ns-since-epoch
		 * representation: its timestamp is not compared */
		ck_assert_msg(
			(want_ts < 0 || ts_ns(&h->ts) == want_ts) &&
				h->caplen == want->h.caplen && h->len == want->h.len &&
				memcmp(d, want->data, h->caplen) == 0,
			"%s '%s': output record %zu differs from input record %zu "
			"(ts %ld.%09ld/%ld.%09ld caplen %u/%u len %u/%u)",
			fname, expr, nrec, k, (long)h->ts.tv_sec, (long)h->ts.tv_usec,
			(long)want->h.ts.tv_sec, (long)want->h.ts.tv_usec, h->caplen,
			want->h.caplen, h->len, want->h.len);
	}
	pcap_close(o);
}

/* Run one file through the pipeline and compare every output. */
static void
run_one(const char *path)
{
	const char *fname = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct capfile cf;
	struct bpf_program ref[NEXPR], progs[NEXPR];
	unsigned eidx[NEXPR]; /* output i filters with exprs[eidx[i]] */
	const struct bpf_program *cmpref[NEXPR]; /* output i's reference */
	struct gcap_writer *writers[NEXPR];
	char outs[NEXPR][600];
	char dir[560], err[GCAP_ERRBUF_SIZE], perr[GCAP_ERRBUF_SIZE];
	unsigned nout = 0;
	int linktype, r;

	if (capfile_load(path, &cf) < 0) {
		/* nothing to compare: gpu-capture refuses it like tcpdump does
		 * (the cli suite checks that) */
		printf("%s: libpcap cannot open it (%s): skipped\n", fname, cf.err);
		return;
	}
	linktype = pcap_datalink(cf.p);
	for (unsigned e = 0; e < NEXPR; e++) {
		/* the reference: as tcpdump -r, compiled on the file's handle
		 * (its snapshot length), optimised, netmask 0 */
		int rr = pcap_compile(cf.p, &ref[e], exprs[e], 1, 0);
		char rerr[PCAP_ERRBUF_SIZE];

		snprintf(rerr, sizeof(rerr), "%s", rr != 0 ? pcap_geterr(cf.p) : "");
		r = gcap_filter_compile_on(cf.p, exprs[e], &progs[nout], err);
		if (rr != 0) {
			ck_assert_msg(r == -EINVAL,
				      "%s (%s): libpcap rejects '%s' (%s) but "
				      "gcap_filter_compile gives %d",
				      fname, pcap_datalink_val_to_name(linktype),
				      exprs[e], rerr, r);
			ref[e].bf_insns = NULL;
			continue;
		}
		ck_assert_msg(r == 0,
			      "%s (%s): libpcap accepts '%s' but "
			      "gcap_filter_compile fails: %s",
			      fname, pcap_datalink_val_to_name(linktype), exprs[e], err);
		eidx[nout++] = e;
	}
	ck_assert_uint_gt(nout, 0); /* "" always compiles */
	/* verdicts of gcap_filter_compile's programs against tcpdump's */
	for (unsigned i = 0; i < nout; i++) {
		const struct bpf_program *rp = &ref[eidx[i]];

		cmpref[i] = rp;
		for (size_t k = 0; k < cf.n; k++) {
			const struct pkt *c = &cf.pkts[k];

			if ((pcap_offline_filter(rp, &c->h, c->data) != 0) ==
			    (gcap_filter_run(&progs[i], c->data, c->h.len, c->h.caplen) !=
			     0))
				continue;
			ck_abort_msg("%s (%s) '%s': gcap_filter_compile_on's program and "
				     "tcpdump's disagree on record %zu",
				     fname, pcap_datalink_val_to_name(linktype),
				     exprs[eidx[i]], k + 1);
		}
	}

	snprintf(dir, sizeof(dir), "%s/f-XXXXXX", tmp_root);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	{
		struct gcap_exec_conf ec = {
			.nqueues = 1,
			.ring_size = RING,
			.batch_max = BATCH,
			.nxbufs = RING * 2,
			.xbuf_size = STAGE_SPANS + BATCH * GCAP_REC_SIZE(0),
			.stage_size = spans ? STAGE_SPANS : STAGE,
			.snaplen = SNAPLEN,
			.nfilters = nout,
			.filters = progs,
			.linktype = linktype,
			.mem = gpu_mem,
			.compile_filters = !gpu_interp,
			.cpu_workers = cpu_workers,
			.file_spans = spans,
		};
		struct gcap_writer_if wif = { .name = fname, .linktype = linktype };
		struct gcap_exec *ex;
		struct gcap_pipeline *pl;
		struct gcap_pipeline_conf pc = {
			.ops = ops,
			.nqueues = 1,
			.batch_max = BATCH,
			.nwriters = nout,
			.writers = writers,
			.flush_ms = 100,
			.file_copiers = copiers,
			.file_spans = spans,
			.file_span_bytes = span_bytes,
		};
		struct gcap_capfile *in;
		bool spannable;
		int rr, rs;

		/* the outputs read the input's times as the reader gives them */
		in = gcap_capfile_open(path, perr);
		ck_assert_msg(in != NULL, "%s: %s", fname, perr);
		gcap_capfile_if(in, 0, &wif);
		spannable = spans && gcap_capfile_spans_ok(in);
		ex = ops->create(&ec, err);
		ck_assert_msg(ex != NULL, "%s: %s executor: %s", fname, ops->name, err);
		for (unsigned i = 0; i < nout; i++) {
			/* half the outputs pcap (ns), half pcapng */
			struct gcap_writer_conf wc = {
				.path = outs[i],
				.fmt = GCAP_FMT_AUTO,
				.snaplen = SNAPLEN,
				.nifs = 1,
				.ifs = &wif,
				.filter_expr = exprs[eidx[i]],
			};

			snprintf(outs[i], sizeof(outs[i]), "%s/out%02u.%s", dir, eidx[i],
				 i % 2 ? "pcapng" : "pcap");
			writers[i] = gcap_writer_open(&wc, err);
			ck_assert_msg(writers[i] != NULL, "%s: writer: %s", outs[i], err);
		}
		pc.ex = ex;
		pl = gcap_pipeline_create(&pc, err);
		ck_assert_msg(pl != NULL, "%s: pipeline: %s", fname, err);
		rr = gcap_pipeline_run_inputs(pl, &in, NULL, 1, err);
		if (cf.damaged) {
			ck_assert_msg(rr < 0,
				      "%s: libpcap fails after %zu records (%s), "
				      "the pipeline returns %d",
				      fname, cf.n, cf.err, rr);
		} else {
			ck_assert_msg(rr == 0,
				      "%s: the pipeline fails (%d: %s), libpcap "
				      "reads %zu records",
				      fname, rr, err, cf.n);
		}
		rs = gcap_pipeline_stop(pl, 10000, perr);
		ck_assert_msg(cf.damaged || rs == 0, "%s: stop: %s", fname, perr);
		ck_assert_uint_eq(gcap_pipeline_written(pl) <= cf.n, 1);
		{
			struct gcap_queue_stats st;

			gcap_pipeline_queue_stats(pl, 0, &st);
			ck_assert_msg(st.rx_pkts == cf.n,
				      "%s: pipeline read %" PRIu64
				      " packets, libpcap %zu",
				      fname, st.rx_pkts, cf.n);
			ck_assert_uint_eq(st.drop_pipeline + st.drop_writer, 0);
			ck_assert_uint_eq(st.captured + st.filtered, cf.n);
			/* a plain pcap went to the GPU in spans (not back to the
			 * reader at once) */
			ck_assert_msg(!spannable || st.file_spans > 0,
				      "%s: no span handed to the executor", fname);
		}
		gcap_pipeline_destroy(pl);
		for (unsigned i = 0; i < nout; i++) {
			r = gcap_writer_close(writers[i], NULL, err);
			ck_assert_msg(r == 0, "%s: close: %s", outs[i], err);
		}
		ops->destroy(ex);
		gcap_capfile_close(in);
	}
	for (unsigned i = 0; i < nout; i++)
		compare_output(fname, exprs[eidx[i]], outs[i], &cf, cmpref[i]);
	for (unsigned e = 0; e < NEXPR; e++)
		if (ref[e].bf_insns != NULL)
			pcap_freecode(&ref[e]);
	for (unsigned i = 0; i < nout; i++)
		gcap_filter_free(&progs[i]);
	nftw(dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	capfile_free(&cf);
}

START_TEST(test_local)
{
	run_one(files[_i]);
}
END_TEST

START_TEST(test_corpus)
{
	run_one(files[nlocal + _i]);
}
END_TEST

/* The suite's own inputs must be what it expects (a test that cannot fail
 * is a defect: make sure the damaged files are damaged and the others are
 * not, and that the expressions select something). */
START_TEST(test_local_inputs)
{
	unsigned damaged = 0, linktypes = 0;
	int seen[4] = { -1, -1, -1, -1 };

	ck_assert_uint_ge(nlocal, 6);
	for (unsigned i = 0; i < nlocal; i++) {
		struct capfile cf;
		bool is_dmg = strstr(files[i], "damaged") != NULL;

		ck_assert_int_eq(capfile_load(files[i], &cf), 0);
		ck_assert_msg(cf.damaged == is_dmg, "%s: damaged %d", files[i],
			      cf.damaged);
		ck_assert_uint_gt(cf.n, 10);
		damaged += cf.damaged;
		for (unsigned k = 0; k < 4; k++) {
			if (seen[k] == pcap_datalink(cf.p))
				break;
			if (seen[k] < 0) {
				seen[k] = pcap_datalink(cf.p);
				linktypes++;
				break;
			}
		}
		capfile_free(&cf);
	}
	ck_assert_uint_ge(damaged, 2);
	ck_assert_uint_ge(linktypes, 3);
}
END_TEST

/* Every expression selects some but not all packets of eth-mix.pcap, or
 * is rejected, so that each one actually tests something. */
START_TEST(test_exprs_discriminate)
{
	char path[1024];
	struct capfile cf;
	unsigned useful = 0;

	snprintf(path, sizeof(path), "%s/tests/data/eth-mix.pcap",
		 getenv("GCAP_SOURCE_ROOT"));
	ck_assert_int_eq(capfile_load(path, &cf), 0);
	for (unsigned e = 1; e < NEXPR; e++) {
		struct bpf_program bp;
		size_t m = 0;

		if (pcap_compile(cf.p, &bp, exprs[e], 1, 0) != 0)
			continue;
		for (size_t i = 0; i < cf.n; i++)
			m += pcap_offline_filter(&bp, &cf.pkts[i].h, cf.pkts[i].data) !=
			     0;
		if (m > 0 && m < cf.n)
			useful++;
		pcap_freecode(&bp);
	}
	capfile_free(&cf);
	/* a few are meant for other link types or to select nothing here */
	ck_assert_uint_ge(useful, 45);
}
END_TEST

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the capture files of dir (sorted) to files; @return how many. */
static int
add_dir(const char *dir, unsigned max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned first = nfiles, n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		const char *dot = strrchr(de->d_name, '.');
		char *p;

		if (dot == NULL ||
		    (strcmp(dot, ".pcap") != 0 && strcmp(dot, ".pcapng") != 0))
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0)
			abort();
		files = realloc(files, (nfiles + 1) * sizeof(*files));
		if (files == NULL)
			abort();
		files[nfiles++] = p;
	}
	closedir(d);
	qsort(files + first, nfiles - first, sizeof(*files), cmp_str);
	n = nfiles - first;
	if (max != 0 && n > max) {
		for (unsigned i = first + max; i < nfiles; i++)
			free(files[i]);
		nfiles = first + max;
		n = max;
	}
	return (int)n;
}

#ifdef GCAP_TEST_HAVE_GPU
static struct gcap_exec *keeper;

/* An executor that never gets a batch (so never launches its kernel). */
static struct gcap_exec *
gpu_keeper(char *err)
{
	static struct bpf_program all; /* no instructions: accept all */
	struct gcap_exec_conf ec = {
		.nfilters = 1,
		.filters = &all,
		.nqueues = 1,
		.ring_size = 2,
		.batch_max = 32,
		.nxbufs = 2,
		.xbuf_size = 4096,
		.snaplen = 64,
		.linktype = DLT_EN10MB,
		.mem = GCAP_MEM_HOST,
	};

	return ops->create(&ec, err);
}
#endif

int
main(void)
{
	const char *root = getenv("GCAP_SOURCE_ROOT");
	const char *backend = getenv("GCAP_TEST_BACKEND");
	const char *tmp = getenv("TMPDIR");
	const char *max = getenv("GCAP_TEST_CORPUS_MAX");
	char dir[1024];
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int nfail, ncorpus;

	if (root == NULL) {
		fprintf(stderr, "GCAP_SOURCE_ROOT is not set (run through meson test)\n");
		return 1;
	}
	ops = &gcap_exec_cpu_ops;
	if (getenv("GCAP_TEST_CPU_WORKERS") != NULL)
		cpu_workers =
			(unsigned)strtoul(getenv("GCAP_TEST_CPU_WORKERS"), NULL, 10);
	if (getenv("GCAP_TEST_COPIERS") != NULL) {
		copiers = (unsigned)strtoul(getenv("GCAP_TEST_COPIERS"), NULL, 10);
		staged_ops = gcap_exec_cpu_ops;
		staged_ops.submit_works = false;
		ops = &staged_ops;
	}
	if (getenv("GCAP_TEST_SPANS") != NULL) {
		spans = true;
		span_bytes = (uint32_t)strtoul(getenv("GCAP_TEST_SPANS"), NULL, 10);
	}
	if (spans && (backend == NULL || strcmp(backend, "gpu") != 0)) {
		fprintf(stderr, "GCAP_TEST_SPANS needs GCAP_TEST_BACKEND=gpu\n");
		return 1;
	}
	if (backend != NULL && strcmp(backend, "gpu") == 0) {
#ifdef GCAP_TEST_HAVE_GPU
		char why[GCAP_ERRBUF_SIZE] = "";
		int ndev = 0;

		ops = gcap_exec_gpu_ops();
		if (ops == NULL) {
			printf("SKIP: this build has no gpu executor\n");
			return 77;
		}
		if (gcap_gpu_probe(&ndev, why) < 0) {
			printf("SKIP: no usable GPU: %s\n", why);
			return 77;
		}
		gpu_interp = getenv("GCAP_TEST_GPU_INTERP") != NULL &&
			     strcmp(getenv("GCAP_TEST_GPU_INTERP"), "1") == 0;
		if (getenv("GCAP_TEST_GPU_MEM") != NULL &&
		    gcap_mem_parse(getenv("GCAP_TEST_GPU_MEM"), &gpu_mem) < 0) {
			fprintf(stderr,
				"GCAP_TEST_GPU_MEM=%s: expected auto, host, "
				"copy or gpu\n",
				getenv("GCAP_TEST_GPU_MEM"));
			return 1;
		}
		printf("backend gpu (%d device%s, %s filters, memory mode %s, records "
		       "found by %s)\n",
		       ndev, ndev > 1 ? "s" : "", gpu_interp ? "interpreted" : "compiled",
		       getenv("GCAP_TEST_GPU_MEM") ? getenv("GCAP_TEST_GPU_MEM") : "auto",
		       spans ? "the GPU" : "the reader");
		/* one idle executor for the whole run keeps the GPU's primary
		 * context alive: each file's executor then reuses it instead
		 * of creating it again (about 0.5 s a file on the H200). Only
		 * with CK_FORK=no: a forked test cannot use the parent's CUDA */
		if (getenv("CK_FORK") != NULL && strcmp(getenv("CK_FORK"), "no") == 0 &&
		    (keeper = gpu_keeper(why)) == NULL) {
			fprintf(stderr, "gpu executor: %s\n", why);
			return 1;
		}
#else
		printf("SKIP: this build has no gpu executor (gpu/ not built)\n");
		return 77;
#endif
	} else if (backend != NULL && strcmp(backend, "cpu") != 0) {
		fprintf(stderr, "GCAP_TEST_BACKEND=%s: expected cpu or gpu\n", backend);
		return 1;
	}

	snprintf(dir, sizeof(dir), "%s/tests/data", root);
	if (add_dir(dir, 0) < 0) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return 1;
	}
	nlocal = nfiles;
	snprintf(dir, sizeof(dir), "%s/../shared/data/pcaps/tcpdump-tests", root);
	ncorpus = add_dir(dir, max ? (unsigned)strtoul(max, NULL, 10) : 0);
	if (ncorpus < 0) {
		printf("NOTE: %s is absent: the tcpdump corpus is skipped, only "
		       "tests/data's %u captures run\n",
		       dir, nlocal);
		ncorpus = 0;
	} else {
		printf("%u local captures, %d corpus captures, %zu expressions, %s "
		       "executor\n",
		       nlocal, ncorpus, NEXPR, ops->name);
	}
	snprintf(tmp_root, sizeof(tmp_root), "%s/gcap-corpus-XXXXXX",
		 tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(tmp_root) == NULL) {
		fprintf(stderr, "mkdtemp %s: %s\n", tmp_root, strerror(errno));
		return 1;
	}

	s = suite_create("pipeline");
	tc = tcase_create("offline");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_local_inputs);
	tcase_add_test(tc, test_exprs_discriminate);
	tcase_add_loop_test(tc, test_local, 0, (int)nlocal);
	if (ncorpus > 0)
		tcase_add_loop_test(tc, test_corpus, 0, ncorpus);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nfail = srunner_ntests_failed(sr);
	srunner_free(sr);
#ifdef GCAP_TEST_HAVE_GPU
	if (keeper != NULL)
		ops->destroy(keeper);
#endif
	nftw(tmp_root, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	for (unsigned i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	return nfail == 0 ? 0 : 1;
}
