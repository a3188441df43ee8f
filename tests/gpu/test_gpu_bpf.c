/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BPF differential of tests/bpfc/test_bpfc.c, through an executor:
 * random programs bpf_validate() accepts and the tcpdump expressions of
 * tests/bpfc/bpf_gen.h, 64 at a time (one executor output each), over
 * random packets and the capture corpus (tests/data/bpfc,
 * ../shared/data/pcaps/tcpdump-tests, ../shared/data/bench/mix-en10mb.pcap
 * or $GCAP_GPU_CORPUS). Every record's outmask must equal the mask libpcap's
 * bpf_filter() gives (packets of mask 0 not written), with the packet's
 * bytes, lengths and sequence number, and the batch counters.
 *
 * Backends (GCAP_TEST_BACKEND):
 *  - gpu (default): the persistent kernel, with the filters compiled by
 *    NVRTC (compile_filters) and interpreted; exits 77 without a GPU;
 *  - cpu: the cpu executor (bpf_filter() itself): proves the harness.
 *
 * Knobs (environment): GCAP_GPU_BPF_PROGS (random programs, 512),
 * GCAP_GPU_BPF_SEED, GCAP_GPU_BPF_RANDOM_PKTS (3000), GCAP_GPU_BPF_MAX_PKTS
 * (corpus packets, 200000), GCAP_GPU_BPF_QUEUES (4; cpu: 1),
 * GCAP_GPU_BPF_BATCH (512), GCAP_GPU_BPF_MEM (host, copy),
 * GCAP_GPU_BPF_MODES (compiled,interp), GCAP_GPU_BPF_EXPRS (1; 0: none),
 * GCAP_GPU_BPF_PROTOCHAIN (1; 0: not the protochain chains),
 * GCAP_GPU_BPF_VERBOSE (per-unit create/run times), GCAP_GPU_BPF_NVRTC
 * (cpu backend: also compile each unit's gpu translation unit with NVRTC
 * for sm_90 when libnvrtc loads; 1).
 *
 * On the GPU machine, from a devbundle that packs it (tests/gpu/devrun.sh
 * runs it too):
 *   GCAP_SOURCE_ROOT=$PWD/.devbundle/root .devbundle/bin/test_gpu_bpf
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gcap_config.h"
#include "gpucap/gcap_bpfc.h"
#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_gpu.h"
#ifdef GCAP_TEST_HAVE_RTC
#include "gpucap/gcap_rtc.h"
#endif
#include "../bpfc/bpf_gen.h"
#include "gpu_util.h"

#define SNAPLEN 262144
#define NPROGS_MAX GCAP_MAX_OUTPUTS

static const struct gcap_exec_ops *ops;
static bool on_gpu;

static unsigned long
env_ul(const char *name, unsigned long dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : dflt;
}

/* ---- packets ---- */

struct pkt {
	int dlt; /* -1: random bytes (random programs only) */
	uint32_t wirelen, caplen;
	unsigned char *data;
	const char *file; /* for messages */
};

static struct pkt *pkts;
static unsigned npkts, maxpkts, nfiles, nskipped;
static char **names; /* the files' names the packets point to, one each */
static unsigned nnames;

static void
add_pkt(int dlt, uint32_t wirelen, uint32_t caplen, unsigned char *data, const char *file)
{
	struct pkt *k;

	if (npkts >= maxpkts) {
		free(data);
		return;
	}
	k = &pkts[npkts++];
	k->dlt = dlt;
	k->wirelen = wirelen;
	k->caplen = caplen;
	k->data = data;
	k->file = file;
}

static void
load_file(const char *path)
{
	char eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *b;
	pcap_t *p = pcap_open_offline(path, eb);
	char *name, **more;

	if (p == NULL) {
		nskipped++; /* malformed on purpose: libpcap cannot open it */
		return;
	}
	nfiles++;
	name = strdup(path);
	more = realloc(names, (nnames + 1) * sizeof(*names));
	ck_assert_ptr_nonnull(name);
	ck_assert_ptr_nonnull(more);
	names = more;
	names[nnames++] = name;
	while (npkts < maxpkts && pcap_next_ex(p, &h, &b) == 1) {
		unsigned char *d = malloc(h->caplen ? h->caplen : 1);

		ck_assert_ptr_nonnull(d);
		memcpy(d, b, h->caplen);
		add_pkt(pcap_datalink(p), h->len, h->caplen, d, name);
	}
	pcap_close(p);
}

static void
load_dir(const char *dir)
{
	if (bpf_gen_each_file(dir, load_file) < 0)
		printf("corpus %s absent: not used\n", dir);
}

static void
free_packets(void)
{
	for (unsigned i = 0; i < npkts; i++)
		free(pkts[i].data);
	free(pkts);
	pkts = NULL;
	for (unsigned i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	names = NULL;
	npkts = nfiles = nskipped = nnames = 0;
}

/* random packets first (the same stream test_bpfc draws after its
 * programs), then the corpus */
static void
load_packets(unsigned nrandom)
{
	const char *root = getenv("GCAP_SOURCE_ROOT");
	const char *env = getenv("GCAP_GPU_CORPUS");
	char *p;

	free_packets();
	maxpkts = nrandom + (unsigned)env_ul("GCAP_GPU_BPF_MAX_PKTS", 200000);
	pkts = calloc(maxpkts ? maxpkts : 1, sizeof(*pkts));
	ck_assert_ptr_nonnull(pkts);
	for (unsigned i = 0; i < nrandom; i++) {
		uint32_t cap, wire;
		unsigned char *d = random_pkt(&cap, &wire);

		add_pkt(-1, wire, cap, d, "random");
	}
	if (root == NULL)
		root = ".";
	ck_assert(asprintf(&p, "%s/tests/data/bpfc", root) > 0);
	load_dir(p);
	free(p);
	ck_assert(asprintf(&p, "%s/../shared/data/pcaps/tcpdump-tests", root) > 0);
	load_dir(p);
	free(p);
	ck_assert(asprintf(&p, "%s/../shared/data/bench/mix-en10mb.pcap", root) > 0);
	if (access(p, R_OK) == 0)
		load_file(p);
	else if (env != NULL && access(env, R_OK) == 0)
		load_file(env);
	else
		printf("mix-en10mb.pcap absent (%s, GCAP_GPU_CORPUS): not used\n", p);
	free(p);
	printf("packets: %u random + %u from %u readable files (%u unreadable "
	       "skipped)\n",
	       nrandom, npkts - nrandom, nfiles, nskipped);
}

/* ---- one unit: up to 64 programs through the executor ---- */

struct unit {
	char name[32];
	int dlt; /* -1: all packets */
	unsigned n;
	const struct bpf_program *progs;
};

struct tally {
	unsigned long programs, skipped, units, packets, evals, records;
	unsigned long bad_evals, bad_pkts, bad_batches;
};

static void
dump_prog(const struct bpf_program *p)
{
	for (unsigned i = 0; i < p->bf_len; i++)
		fprintf(stderr, "    %s\n", bpf_image(&p->bf_insns[i], (int)i));
}

static unsigned reported;

static void
report_pkt(const struct unit *u, const char *mode, const struct pkt *k, uint64_t got,
	   uint64_t want, const char *what)
{
	uint64_t diff = got ^ want;

	if (reported++ >= 20)
		return;
	fprintf(stderr,
		"MISMATCH %s %s: %s (%s, dlt %d, caplen %u, wirelen "
		"%u): outmask 0x%016" PRIx64 " want 0x%016" PRIx64 "\n",
		mode, u->name, what, k->file, k->dlt, k->caplen, k->wirelen, got, want);
	if (diff != 0 && reported <= 5) {
		unsigned j = (unsigned)__builtin_ctzll(diff);

		fprintf(stderr, "  program %u of %s (the reference says %s):\n", j,
			u->name, (want >> j) & 1 ? "match" : "no match");
		dump_prog(&u->progs[j]);
	}
}

static void
report_batch(const struct unit *u, const char *mode, uint64_t seq, const char *what)
{
	if (reported++ < 20)
		fprintf(stderr, "MISMATCH %s %s: batch %" PRIu64 ": %s\n", mode, u->name,
			seq, what);
}

/* What bpf_filter() says, for each packet of the feed; an empty program
 * matches (bpf_filter(NULL) convention, as executors take it). */
static void
ref_masks(const struct unit *u, struct pkt *const *feed, unsigned nfeed, uint64_t *ref)
{
	for (unsigned i = 0; i < nfeed; i++) {
		const struct pkt *k = feed[i];
		uint64_t m = 0;

		for (unsigned j = 0; j < u->n; j++) {
			const struct bpf_program *p = &u->progs[j];

			if (p->bf_len == 0 ||
			    bpf_filter(p->bf_insns, k->data, k->wirelen, k->caplen))
				m |= 1ull << j;
		}
		ref[i] = m;
	}
}

/* Compare one DONE batch (descriptor seq = index in the feed) with ref. */
static void
check_batch(const struct unit *u, const char *mode, const struct gcap_batch *b,
	    struct pkt *const *feed, const uint64_t *ref, struct tally *t)
{
	const struct gcap_xbuf *xb = b->xbuf;
	const uint8_t *r = xb->data;
	uint32_t off = 0, nrec = 0, ncap = 0, nflt = 0;
	uint64_t bytes = 0, outp[NPROGS_MAX] = { 0 };
	bool bad = false;

	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t idx = b->pkts[i].seq;
		const struct pkt *k = feed[idx];
		uint64_t want = ref[idx], got = 0;
		struct gcap_rec h;

		if (nrec < xb->nrec && off + sizeof(h) <= xb->len) {
			memcpy(&h, r + off, sizeof(h));
			if (h.seq == idx) {
				got = h.outmask;
				if (h.outmask == 0) {
					report_pkt(u, mode, k, got, want,
						   "record written with mask 0");
					bad = true;
				}
				if (h.caplen != k->caplen || h.wirelen != k->wirelen ||
				    off + GCAP_REC_SIZE(h.caplen) > xb->len ||
				    memcmp(r + off + sizeof(h), k->data, k->caplen) ||
				    h.ts_ns != b->pkts[i].ts_ns ||
				    h.queue != b->pkts[i].queue ||
				    h.port != b->pkts[i].port) {
					report_pkt(u, mode, k, got, want,
						   "record header or bytes differ");
					bad = true;
				}
				off += GCAP_REC_SIZE(h.caplen);
				nrec++;
			}
		}
		t->evals += u->n;
		if (got != want) {
			t->bad_evals += (unsigned long)__builtin_popcountll(got ^ want);
			t->bad_pkts++;
			report_pkt(u, mode, k, got, want,
				   want && !got ? "not written" : "outmask differs");
		}
		if (want) {
			ncap++;
			bytes += k->wirelen;
			for (unsigned j = 0; j < u->n; j++)
				outp[j] += (want >> j) & 1;
		} else {
			nflt++;
		}
	}
	t->packets += b->n;
	t->records += nrec;
	if (nrec != xb->nrec || off != xb->len) {
		report_batch(u, mode, b->seq, "records left over or out of order");
		bad = true;
	}
	if (b->res->n_captured != ncap || b->res->n_filtered != nflt ||
	    b->res->n_truncated != 0 || b->res->captured_bytes != bytes ||
	    memcmp(b->res->out_pkts, outp, u->n * sizeof(outp[0]))) {
		report_batch(u, mode, b->seq, "counters differ");
		bad = true;
	}
	t->bad_batches += bad;
}

struct run_conf {
	unsigned nqueues, batch_max;
	enum gcap_mem mem;
};

/* Feed the packets through an executor running the unit's programs:
 * batches handed to the queues in turn, every DONE batch checked. */
static void
run_unit(const struct unit *u, const struct run_conf *rc, bool compiled,
	 struct pkt *const *feed, unsigned nfeed, const uint64_t *ref, struct tally *t)
{
	const char *mode = !on_gpu ? "cpu" : compiled ? "gpu-nvrtc" : "gpu-interp";
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	struct gcap_xbuf *xb[64];
	uint64_t sub[64] = { 0 };
	uint32_t maxcap = 0;
	unsigned next = 0, done = 0;
	double t0 = now_s(), t1, last;

	ck_assert_uint_le(rc->nqueues, 64);
	for (unsigned i = 0; i < nfeed; i++)
		if (feed[i]->caplen > maxcap)
			maxcap = feed[i]->caplen;
	memset(&c, 0, sizeof(c));
	c.nqueues = rc->nqueues;
	c.ring_size = 8;
	c.batch_max = rc->batch_max;
	c.nxbufs = c.ring_size;
	c.stage_size = (maxcap + 7u) & ~7u;
	if (c.stage_size < (1u << 20))
		c.stage_size = 1u << 20;
	/* every packet of a full stage fits: never truncated */
	c.xbuf_size = c.stage_size + c.batch_max * (uint32_t)sizeof(struct gcap_rec);
	c.snaplen = maxcap > SNAPLEN ? maxcap : SNAPLEN;
	c.nfilters = u->n;
	c.filters = u->progs;
	c.linktype = u->dlt >= 0 ? u->dlt : DLT_EN10MB;
	c.mem = rc->mem;
	c.compile_filters = compiled;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "%s %s: create: %s", mode, u->name, err);
	t1 = now_s();
	for (unsigned q = 0; q < c.nqueues; q++)
		ck_assert_uint_eq(ops->xbufs(ex, q, &xb[q]), c.nxbufs);
	last = now_s();
	while (done < nfeed) {
		bool progress = false;

		for (unsigned q = 0; q < c.nqueues && next < nfeed; q++) {
			struct gcap_batch *b = ops->batch_get(ex, q);
			uint32_t soff = 0;

			if (b == NULL)
				continue;
			b->n = 0;
			while (next < nfeed && b->n < c.batch_max) {
				const struct pkt *k = feed[next];
				struct gcap_pkt *d = &b->pkts[b->n];

				if (soff + k->caplen > b->stage_size)
					break; /* the next batch takes it */
				memcpy(b->stage + soff, k->data, k->caplen);
				d->addr = (uint64_t)(uintptr_t)(b->stage + soff);
				d->caplen = k->caplen;
				d->wirelen = k->wirelen;
				d->ts_ns = (uint64_t)next * 1000u + 1;
				d->port = 0;
				d->queue = (uint16_t)q;
				d->seq = next++;
				soff = (soff + k->caplen + 7u) & ~7u;
				b->n++;
			}
			ck_assert_uint_gt(b->n, 0);
			b->stage_used = soff;
			b->xbuf = &xb[q][sub[q] % c.nxbufs];
			b->xbuf->len = b->xbuf->nrec = 0;
			ck_assert_int_eq(ops->batch_submit(ex, q, b), 0);
			sub[q]++;
			progress = true;
		}
		for (unsigned q = 0; q < c.nqueues; q++) {
			struct gcap_batch *b;

			while ((b = ops->batch_poll(ex, q)) != NULL) {
				check_batch(u, mode, b, feed, ref, t);
				done += b->n;
				ops->batch_release(ex, q, b);
				progress = true;
			}
		}
		if (progress) {
			last = now_s();
			continue;
		}
		ck_assert_msg(ops->health(ex, err) == 0, "%s %s: health: %s", mode,
			      u->name, err);
		ck_assert_msg(now_s() - last < 30.0,
			      "%s %s: no batch done within "
			      "30 s (%u of %u packets)",
			      mode, u->name, done, nfeed);
	}
	ck_assert_msg(ops->stop(ex, 5000, err) == 0, "%s %s: stop: %s", mode, u->name,
		      err);
	ops->destroy(ex);
	t->units++;
	if (getenv("GCAP_GPU_BPF_VERBOSE"))
		printf("  %s %s: %u programs, %u packets, create %.3f s, run %.3f s\n",
		       mode, u->name, u->n, nfeed, t1 - t0, now_s() - t1);
}

/* Without a GPU: the translation unit the gpu executor would hand NVRTC
 * for these programs (gcap_gpu_code, compiled filters) compiles for the
 * H200's sm_90. Returns 1 when compiled, 0 when NVRTC is unavailable. */
static int
nvrtc_unit(const struct unit *u)
{
#ifdef GCAP_TEST_HAVE_RTC
	struct gcap_exec_conf c;
	struct gcap_rtc_info info = { 0 };
	char err[GCAP_ERRBUF_SIZE] = "";
	void *img = NULL;
	size_t len = 0;
	char *src;
	int rc;

	if (!GCAP_HAVE_CUDA || gcap_rtc_load(err) != 0)
		return 0;
	memset(&c, 0, sizeof(c));
	c.nfilters = u->n;
	c.filters = u->progs;
	c.linktype = u->dlt >= 0 ? u->dlt : DLT_EN10MB;
	c.compile_filters = true;
	src = gcap_gpu_code(&c, err);
	ck_assert_msg(src != NULL, "%s: gpu code: %s", u->name, err);
	rc = gcap_rtc_compile(src, "gpucap_pipeline.cu", 9, 0, NULL, 0, NULL,
			      GCAP_RTC_F_NO_CACHE, &img, &len, &info, err);
	ck_assert_msg(rc == 0, "%s: nvrtc: %d %s\n%s", u->name, rc, err,
		      info.log ? info.log : "");
	ck_assert_uint_gt(len, 0);
	free(img);
	free(src);
	gcap_rtc_info_clear(&info);
	return 1;
#else
	(void)u;
	return 0;
#endif
}

static void
run_conf_get(struct run_conf *rc)
{
	const char *m = getenv("GCAP_GPU_BPF_MEM");

	rc->nqueues = (unsigned)env_ul("GCAP_GPU_BPF_QUEUES", on_gpu ? 4 : 1);
	rc->batch_max = (unsigned)env_ul("GCAP_GPU_BPF_BATCH", GCAP_BATCH_MAX);
	ck_assert_msg(rc->nqueues >= 1 && rc->nqueues <= 64, "GCAP_GPU_BPF_QUEUES");
	ck_assert_msg(rc->batch_max >= 1 && rc->batch_max <= GCAP_FILE_BATCH_MAX,
		      "GCAP_GPU_BPF_BATCH");
	rc->mem = GCAP_MEM_HOST;
	if (m != NULL)
		ck_assert_msg(gcap_mem_parse(m, &rc->mem) == 0, "GCAP_GPU_BPF_MEM=%s", m);
	if (!on_gpu)
		rc->mem = GCAP_MEM_PLAIN;
}

/* Every unit through every mode: gpu with NVRTC-compiled filters and with
 * the interpreter (GCAP_GPU_BPF_MODES), or the cpu executor once. */
static void
run_units(const struct unit *us, unsigned nu, const char *what, struct tally *t)
{
	const char *modes = getenv("GCAP_GPU_BPF_MODES");
	struct run_conf rc;
	struct pkt **feed = calloc(npkts ? npkts : 1, sizeof(*feed));
	uint64_t *ref = calloc(npkts ? npkts : 1, sizeof(*ref));
	double t0 = now_s(), tref = 0, tnvrtc = 0;
	bool mode_on[2];
	unsigned nvrtc = 0;
	bool want_nvrtc = !on_gpu && env_ul("GCAP_GPU_BPF_NVRTC", 1) > 0;

	ck_assert(feed != NULL && ref != NULL);
	run_conf_get(&rc);
	if (modes == NULL)
		modes = "compiled,interp";
	mode_on[0] = !on_gpu || strstr(modes, "interp") != NULL;
	mode_on[1] = on_gpu && strstr(modes, "compiled") != NULL;
	for (unsigned i = 0; i < nu; i++) {
		const struct unit *u = &us[i];
		unsigned nfeed = 0;
		double tr = now_s();

		for (unsigned p = 0; p < npkts; p++)
			if (u->dlt < 0 || pkts[p].dlt == u->dlt)
				feed[nfeed++] = &pkts[p];
		if (nfeed == 0) {
			printf("%s: %s has no packet of link type %d\n", what, u->name,
			       u->dlt);
			continue;
		}
		ref_masks(u, feed, nfeed, ref);
		tref += now_s() - tr;
		for (int m = 1; m >= 0; m--)
			if (mode_on[m])
				run_unit(u, &rc, m == 1, feed, nfeed, ref, t);
		if (want_nvrtc) {
			tr = now_s();
			nvrtc += (unsigned)nvrtc_unit(u);
			tnvrtc += now_s() - tr;
		}
	}
	if (want_nvrtc)
		printf("%s: %u of %u units' gpu translation units compiled by NVRTC "
		       "for sm_90 in %.1f s%s\n",
		       what, nvrtc, nu, tnvrtc, nvrtc ? "" : " (NVRTC not available)");
	printf("%s on %s (%s%s%s, mem %s, %u queues, batches of %u): %lu programs "
	       "(%lu refused by gcap_bpfc_check, skipped) in %lu unit runs, %lu "
	       "packets, %lu evaluations, %lu records; mismatches: %lu evaluations, "
	       "%lu packets, %lu batches; %.1f s (bpf_filter() reference %.1f s)\n",
	       what, on_gpu ? "gpu" : "cpu",
	       !on_gpu    ? "cpu executor" :
	       mode_on[1] ? "nvrtc" :
			    "",
	       mode_on[0] && mode_on[1] ? "+" : "",
	       on_gpu && mode_on[0] ? "interpreter" : "", gcap_mem_name(rc.mem),
	       rc.nqueues, rc.batch_max, t->programs, t->skipped, t->units, t->packets,
	       t->evals, t->records, t->bad_evals, t->bad_pkts, t->bad_batches,
	       now_s() - t0, tref);
	free(feed);
	free(ref);
}

/* Accept a program (bpf_validate, then the translator) or count it skipped. */
static bool
accept_prog(const struct bpf_program *p, struct tally *t, const char *what)
{
	char eb[GCAP_ERRBUF_SIZE] = "";

	if (p->bf_len > 0 && !bpf_validate(p->bf_insns, (int)p->bf_len)) {
		t->skipped++;
		if (t->skipped <= 5)
			printf("%s: refused by bpf_validate(), skipped\n", what);
		return false;
	}
	if (gcap_bpfc_check(p, eb) != 0) {
		t->skipped++;
		if (t->skipped <= 5)
			printf("%s: refused by gcap_bpfc_check (%s), skipped\n", what,
			       eb);
		return false;
	}
	t->programs++;
	return true;
}

static void
finish(const struct tally *t)
{
	ck_assert_uint_gt(t->evals, 0);
	ck_assert_uint_gt(t->records, 0);
	ck_assert_msg(t->bad_evals == 0 && t->bad_pkts == 0 && t->bad_batches == 0,
		      "%lu mismatching evaluations, %lu packets, %lu batches",
		      t->bad_evals, t->bad_pkts, t->bad_batches);
}

START_TEST(test_random_programs)
{
	unsigned nprog = (unsigned)env_ul("GCAP_GPU_BPF_PROGS", 8 * NPROGS_MAX);
	unsigned nrandom = (unsigned)env_ul("GCAP_GPU_BPF_RANDOM_PKTS", 3000);
	struct bpf_program *progs = calloc(nprog ? nprog : 1, sizeof(*progs));
	struct unit *us = calloc(nprog / NPROGS_MAX + 1, sizeof(*us));
	struct tally t = { 0 };
	unsigned nacc = 0, nu = 0;

	ck_assert(progs != NULL && us != NULL);
	/* the default seed is test_bpfc's: its programs and random packets */
	rng_state = env_ul("GCAP_GPU_BPF_SEED", 0) ? env_ul("GCAP_GPU_BPF_SEED", 0) :
						     0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < nprog; i++) {
		struct bpf_insn *ins = calloc(RANDOM_PROG_MAX, sizeof(*ins));
		char what[32];

		ck_assert_ptr_nonnull(ins);
		progs[nacc].bf_insns = ins;
		progs[nacc].bf_len = random_prog(ins, RANDOM_PROG_MAX);
		snprintf(what, sizeof(what), "random program %u", i);
		if (accept_prog(&progs[nacc], &t, what))
			nacc++;
		else
			free(ins);
	}
	load_packets(nrandom);
	ck_assert_uint_gt(npkts, 0);
	for (unsigned i = 0; i < nacc; i += NPROGS_MAX) {
		struct unit *u = &us[nu++];

		snprintf(u->name, sizeof(u->name), "random unit %u", nu - 1);
		u->dlt = -1;
		u->n = nacc - i < NPROGS_MAX ? nacc - i : NPROGS_MAX;
		u->progs = &progs[i];
	}
	run_units(us, nu, "random programs", &t);
	finish(&t);
	for (unsigned i = 0; i < nacc; i++)
		free(progs[i].bf_insns);
	free(progs);
	free(us);
}
END_TEST

START_TEST(test_expressions)
{
	static struct bpf_program progs[NEXPRS];
	struct unit us[NEXPRS];
	struct tally t = { 0 };
	unsigned nacc = 0, nu = 0;
	char eb[GCAP_ERRBUF_SIZE];

	for (unsigned i = 0; i < NEXPRS; i++) {
		char what[128];
		int r = gcap_filter_compile(exprs[i].e, exprs[i].dlt, SNAPLEN,
					    &progs[nacc], eb);

		ck_assert_msg(r == 0, "compile \"%s\": %s", exprs[i].e, eb);
		snprintf(what, sizeof(what), "\"%s\" (link type %d)", exprs[i].e,
			 exprs[i].dlt);
		if (!accept_prog(&progs[nacc], &t, what)) {
			gcap_filter_free(&progs[nacc]);
			continue;
		}
		/* consecutive expressions of one link type form a unit (<= 64) */
		if (nu == 0 || us[nu - 1].dlt != exprs[i].dlt ||
		    us[nu - 1].n == NPROGS_MAX) {
			memset(&us[nu], 0, sizeof(us[nu]));
			snprintf(us[nu].name, sizeof(us[nu].name), "expressions dlt %d",
				 exprs[i].dlt);
			us[nu].dlt = exprs[i].dlt;
			us[nu].progs = &progs[nacc];
			nu++;
		}
		us[nu - 1].n++;
		nacc++;
	}
	load_packets(0);
	ck_assert_uint_gt(npkts, 0);
	run_units(us, nu, "expressions", &t);
	finish(&t);
	for (unsigned i = 0; i < nacc; i++)
		gcap_filter_free(&progs[i]);
}
END_TEST

/* protochain (bpf_gen.h): chains of every length up to the longest that
 * fits in a 9,000-byte frame, IPv6 and IPv4, through the executor. On the
 * GPU also a packet on which bpf_filter() would loop forever (an AH that
 * points back at itself): the filters end on it, matching nothing. */
START_TEST(test_protochain)
{
	static const uint8_t v6last[] = { 17, 6, 58 }, v4last[] = { 17, 6 };
	static struct bpf_program progs[NPROTOCHAIN_EXPRS];
	struct unit u = { .name = "protochain",
			  .dlt = DLT_EN10MB,
			  .n = NPROTOCHAIN_EXPRS,
			  .progs = progs };
	struct tally t = { 0 };
	char eb[GCAP_ERRBUF_SIZE];

	for (unsigned i = 0; i < NPROTOCHAIN_EXPRS; i++) {
		ck_assert_msg(gcap_filter_compile(protochain_exprs[i], DLT_EN10MB,
						  SNAPLEN, &progs[i], eb) == 0,
			      "%s: %s", protochain_exprs[i], eb);
		ck_assert(accept_prog(&progs[i], &t, protochain_exprs[i]));
	}
	free_packets();
	maxpkts = 4 * (PROTOCHAIN_V6_MAX + 1);
	pkts = calloc(maxpkts, sizeof(*pkts));
	ck_assert_ptr_nonnull(pkts);
	for (int v6 = 0; v6 < 2; v6++) {
		unsigned max = v6 ? PROTOCHAIN_V6_MAX : PROTOCHAIN_V4_MAX;
		unsigned nl = v6 ? sizeof(v6last) : sizeof(v4last);

		for (unsigned n = 0; n <= max; n++)
			for (unsigned l = 0; l < nl; l++) {
				unsigned char *d = malloc(PROTOCHAIN_FRAME);
				uint32_t len;

				ck_assert_ptr_nonnull(d);
				len = protochain_pkt(d, v6, n, v6 ? v6last[l] : v4last[l],
						     0);
				add_pkt(DLT_EN10MB, len, len, d, "protochain");
			}
	}
	run_units(&u, 1, "protochain", &t);
	if (on_gpu) {
		struct run_conf rc;
		struct pkt *feed[1];
		uint64_t ref[1] = { 0 };
		unsigned char *d = malloc(PROTOCHAIN_FRAME);
		uint32_t len;

		ck_assert_ptr_nonnull(d);
		len = protochain_pkt(d, 0, 0, 17, 1);
		add_pkt(DLT_EN10MB, len, len, d, "protochain AH loop");
		feed[0] = &pkts[npkts - 1];
		run_conf_get(&rc);
		run_unit(&u, &rc, true, feed, 1, ref, &t);
		run_unit(&u, &rc, false, feed, 1, ref, &t);
	}
	finish(&t);
	free_packets();
	for (unsigned i = 0; i < NPROTOCHAIN_EXPRS; i++)
		gcap_filter_free(&progs[i]);
}
END_TEST

/* The harness sees what it must: a reference with a few bits flipped
 * (a packet written that must not be, one not written that must be, one
 * with a wrong output) gives exactly those mismatches. */
START_TEST(test_harness_detects)
{
	struct bpf_program progs[NPROGS_MAX];
	struct bpf_insn ins[NPROGS_MAX][4];
	struct unit u = {
		.name = "self-check", .dlt = -1, .n = NPROGS_MAX, .progs = progs
	};
	struct run_conf rc;
	struct pkt **feed;
	uint64_t *ref;
	struct tally t = { 0 };
	unsigned zero = UINT32_MAX, full = UINT32_MAX, some = UINT32_MAX;
	uint64_t was_full;

	/* program j matches packets longer than 20 + j bytes on the wire */
	for (unsigned j = 0; j < NPROGS_MAX; j++) {
		ins[j][0] = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0);
		ins[j][1] = (struct bpf_insn)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 20 + j,
						      0, 1);
		ins[j][2] = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_K, 1);
		ins[j][3] = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_K, 0);
		progs[j].bf_insns = ins[j];
		progs[j].bf_len = 4;
	}
	rng_state = 0x243f6a8885a308d3ull;
	load_packets(500);
	feed = calloc(npkts, sizeof(*feed));
	ref = calloc(npkts, sizeof(*ref));
	ck_assert(feed != NULL && ref != NULL);
	for (unsigned i = 0; i < 500; i++)
		feed[i] = &pkts[i];
	ref_masks(&u, feed, 500, ref);
	for (unsigned i = 0; i < 500; i++) {
		if (ref[i] == 0 && zero == UINT32_MAX)
			zero = i;
		else if (ref[i] != 0 && full == UINT32_MAX)
			full = i;
		else if (ref[i] != 0 && some == UINT32_MAX)
			some = i;
	}
	ck_assert_msg(zero != UINT32_MAX && full != UINT32_MAX && some != UINT32_MAX,
		      "self-check packets not found");
	printf("self-check: 3 mismatches planted; the MISMATCH lines below are "
	       "expected\n");
	ref[zero] = 1ull << 63; /* must be written: it is not */
	was_full = ref[full];
	ref[full] = 0;          /* must not be written: it is */
	ref[some] ^= 1ull << 5; /* one output differs */
	run_conf_get(&rc);
	run_unit(&u, &rc, false, feed, 500, ref, &t);
	printf("self-check: %lu evaluations, %lu mismatching evaluations, %lu "
	       "packets, %lu batches\n",
	       t.evals, t.bad_evals, t.bad_pkts, t.bad_batches);
	ck_assert_uint_eq(t.evals, 500ul * NPROGS_MAX);
	ck_assert_uint_eq(t.bad_pkts, 3);
	ck_assert_uint_eq(t.bad_evals,
			  1 + (unsigned long)__builtin_popcountll(was_full) + 1);
	ck_assert_uint_ge(t.bad_batches, 1);
	reported = 0;
	free(feed);
	free(ref);
	free_packets();
}
END_TEST

int
main(void)
{
	const char *be = getenv("GCAP_TEST_BACKEND");
	char msg[GCAP_ERRBUF_SIZE];
	Suite *s;
	SRunner *sr;
	TCase *tc;
	int nf;

	if (be != NULL && strcmp(be, "cpu") == 0) {
		ops = &gcap_exec_cpu_ops;
		printf("backend: cpu executor (checks the harness)\n");
	} else {
		/* probe in a child: CUDA must not be initialised before check
		 * forks a test */
		if (probe_in_child(msg, sizeof(msg)) != 0) {
			printf("no usable GPU (%s): skipped\n", msg);
			return 77;
		}
		ops = gcap_exec_gpu_ops();
		if (ops == NULL) {
			printf("no gpu executor in this build: skipped\n");
			return 77;
		}
		on_gpu = true;
		printf("backend: gpu executor, probe: %s\n", msg);
	}
	s = suite_create("gpu_bpf");
	tc = tcase_create("differential");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_harness_detects);
	if (env_ul("GCAP_GPU_BPF_PROGS", 1) > 0)
		tcase_add_test(tc, test_random_programs);
	if (env_ul("GCAP_GPU_BPF_EXPRS", 1) > 0)
		tcase_add_test(tc, test_expressions);
	if (env_ul("GCAP_GPU_BPF_PROTOCHAIN", 1) > 0)
		tcase_add_test(tc, test_protochain);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
