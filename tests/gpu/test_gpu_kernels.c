/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline kernels on the gpu executor against the cpu executor (needs a GPU:
 * exits 77 without one). Each example of kernels/examples runs over the
 * shared corpus (../shared/data/bench/mix-en10mb.pcap, or $GCAP_GPU_CORPUS)
 * through both executors with the same configuration; the records they
 * write (every byte: header, packet bytes, padding), the batch counters and
 * the JSON state written by kernel_state() are compared.
 *
 * Three batch sizes, every record compared byte for byte:
 *  - 1 packet per batch: the GPU block runs gcap_kernel() on the packets
 *    one after the other in ring order, the order the cpu executor uses;
 *  - 256 and 512 packets per batch (512: one chunk of the largest block):
 *    the packets of a batch run in parallel. dns and sigmatch decide from
 *    the packet alone; synflood and flowfirst are ordered kernels
 *    (gcap_kernel_order(): a server's SYNs, a flow's packets run in
 *    arrival order), so they must match exactly too.
 *
 * Each test runs in its own process (check's fork mode); the parent never
 * initialises CUDA. GCAP_GPU_KERNELS_SELFTEST=1 runs the harness with the
 * cpu executor on both sides (no GPU needed): a check of the comparison
 * code itself, not of the GPU.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_gpu.h"
#include "gpu_util.h"

static const struct gcap_exec_ops *gpu_ops;

struct example {
	const char *name;
	const char *arg;
	bool ordered; /* defines gcap_kernel_order() */
};

/* the arguments tests/kernels uses over the same corpus */
static const struct example examples[] = {
	{ "dns", "example.com,tcpdump.org", false },
	{ "synflood", "threshold=2", true },
	{ "sigmatch", NULL, false },
	{ "flowfirst", "n=3", true },
};

struct corpus {
	uint8_t *data; /* packet bytes back to back */
	size_t *off;
	struct pcap_pkthdr *hdr;
	size_t n;
	uint32_t maxcap;
};

/* what one executor produced over the corpus */
struct run {
	uint8_t *rec; /* every record, in order */
	size_t len, cap;
	uint64_t nrec, captured, filtered, truncated, bytes;
	uint64_t out[GCAP_MAX_OUTPUTS];
	char *json;
	size_t json_len;
};

static void
corpus_load(struct corpus *c, const char *path)
{
	char perr[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	size_t cap = 1 << 16, dcap = 1 << 24, used = 0;
	pcap_t *pc = pcap_open_offline(path, perr);

	ck_assert_msg(pc != NULL, "%s", perr);
	memset(c, 0, sizeof(*c));
	c->off = malloc(cap * sizeof(*c->off));
	c->hdr = malloc(cap * sizeof(*c->hdr));
	c->data = malloc(dcap);
	ck_assert(c->off && c->hdr && c->data);
	while (pcap_next_ex(pc, &h, &d) == 1) {
		if (c->n == cap) {
			cap *= 2;
			c->off = realloc(c->off, cap * sizeof(*c->off));
			c->hdr = realloc(c->hdr, cap * sizeof(*c->hdr));
			ck_assert(c->off && c->hdr);
		}
		while (used + h->caplen > dcap) {
			dcap *= 2;
			c->data = realloc(c->data, dcap);
			ck_assert_ptr_nonnull(c->data);
		}
		memcpy(c->data + used, d, h->caplen);
		c->off[c->n] = used;
		c->hdr[c->n] = *h;
		used += h->caplen;
		if (h->caplen > c->maxcap)
			c->maxcap = h->caplen;
		c->n++;
	}
	pcap_close(pc);
	ck_assert_uint_gt(c->n, 1000);
}

static void
corpus_free(struct corpus *c)
{
	free(c->data);
	free(c->off);
	free(c->hdr);
}

static void
run_append(struct run *r, const uint8_t *p, size_t n)
{
	if (n == 0)
		return; /* r->rec may still be NULL: no memcpy from or to it */
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2;
		r->rec = realloc(r->rec, r->cap);
		ck_assert_ptr_nonnull(r->rec);
	}
	memcpy(r->rec + r->len, p, n);
	r->len += n;
}

static char *
read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static struct bpf_program progs[2];

/* Run the kernel over the corpus through one executor, one queue, batches
 * of batch_max packets, every batch waited for before the next. */
static void
run_exec(const struct gcap_exec_ops *ops, bool is_gpu, const struct corpus *co,
	 const struct example *e, unsigned batch_max, struct run *r)
{
	char err[GCAP_ERRBUF_SIZE] = "", kpath[4096], jpath[64];
	const char *root = getenv("GCAP_SOURCE_ROOT");
	struct gcap_exec_conf c;
	struct gcap_exec *ex;
	struct gcap_xbuf *xb;
	size_t i = 0;
	uint64_t nb = 0;
	int fd;

	memset(r, 0, sizeof(*r));
	snprintf(kpath, sizeof(kpath), "%s/kernels/examples/%s/%s.c", root ? root : ".",
		 e->name, e->name);
	memset(&c, 0, sizeof(c));
	c.nqueues = 1;
	c.ring_size = 8;
	c.batch_max = batch_max;
	c.nxbufs = 8;
	/* a batch ends early when the next packet does not fit the stage
	 * (the corpus has packets of 80 KB); the export buffer holds a full
	 * stage's records */
	c.stage_size = (co->maxcap + 7u) & ~7u;
	if (c.stage_size < (4u << 20))
		c.stage_size = 4u << 20;
	c.xbuf_size = c.stage_size + batch_max * (GCAP_REC_SIZE(0) + 8u);
	c.snaplen = 65535;
	c.nfilters = 2;
	c.filters = progs;
	c.linktype = DLT_EN10MB;
	c.mem = is_gpu ? GCAP_MEM_HOST : GCAP_MEM_PLAIN;
	c.kernel_path = kpath;
	c.kernel_arg = e->arg;
	ex = ops->create(&c, err);
	ck_assert_msg(ex != NULL, "%s create (%s): %s", ops->name, e->name, err);
	ops->xbufs(ex, 0, &xb);
	while (i < co->n) {
		struct gcap_batch *b = ops->batch_get(ex, 0);
		uint32_t off = 0;
		double t0;

		ck_assert_msg(b != NULL, "batch_get: %s",
			      ops->health(ex, err) ? err : "ring full");
		b->n = 0;
		while (b->n < batch_max && i < co->n) {
			struct gcap_pkt *d = &b->pkts[b->n];
			const struct pcap_pkthdr *h = &co->hdr[i];

			if (off + h->caplen > b->stage_size)
				break;
			memcpy(b->stage + off, co->data + co->off[i], h->caplen);
			d->addr = (uint64_t)(uintptr_t)(b->stage + off);
			d->caplen = h->caplen;
			d->wirelen = h->len;
			d->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull +
				   (uint64_t)h->ts.tv_usec * 1000u;
			d->port = 0;
			d->queue = 0;
			d->seq = (uint32_t)i;
			off = (off + h->caplen + 7u) & ~7u;
			b->n++;
			i++;
		}
		b->stage_used = off;
		b->xbuf = &xb[nb % c.nxbufs];
		b->xbuf->len = b->xbuf->nrec = 0;
		ck_assert_int_eq(ops->batch_submit(ex, 0, b), 0);
		nb++;
		t0 = now_s();
		while ((b = ops->batch_poll(ex, 0)) == NULL) {
			ck_assert_msg(ops->health(ex, err) == 0, "health: %s", err);
			ck_assert_msg(now_s() - t0 < 30.0, "no batch done in 30 s");
		}
		if (nb == 1 && getenv("GCAP_GPU_NO_LIVE_SNAPSHOT") == NULL) {
			/* a snapshot under the running kernel (--stats):
			 * a valid report that already counts batch 1. Not
			 * under compute-sanitizer (devrun.sh sets the
			 * variable): it serializes kernel launches, so the
			 * copy kernel's launch waits for the persistent
			 * kernel, which waits for this thread's batches */
			char sp[] = "/tmp/gcap_gk_snap_XXXXXX";
			int sfd = mkstemp(sp);
			size_t sl = 0;
			char *snap;

			ck_assert_int_ge(sfd, 0);
			close(sfd);
			ck_assert_msg(ops->kernel_state(ex, sp, err) == 0, "snapshot: %s",
				      err);
			snap = read_all(sp, &sl);
			unlink(sp);
			ck_assert_msg(sl > 2 && snap[0] == '{' && snap[sl - 2] == '}',
				      "snapshot: %.200s", snap);
			free(snap);
		}
		run_append(r, b->xbuf->data, b->xbuf->len);
		r->nrec += b->xbuf->nrec;
		r->captured += b->res->n_captured;
		r->filtered += b->res->n_filtered;
		r->truncated += b->res->n_truncated;
		r->bytes += b->res->captured_bytes;
		for (unsigned j = 0; j < GCAP_MAX_OUTPUTS; j++)
			r->out[j] += b->res->out_pkts[j];
		ops->batch_release(ex, 0, b);
	}
	ck_assert_msg(ops->stop(ex, 5000, err) == 0, "stop: %s", err);
	snprintf(jpath, sizeof(jpath), "/tmp/gcap_gk_XXXXXX");
	fd = mkstemp(jpath);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_msg(ops->kernel_state(ex, jpath, err) == 0, "kernel_state: %s", err);
	ops->destroy(ex);
	r->json = read_all(jpath, &r->json_len);
	unlink(jpath);
	printf("%s %s batch %u: %" PRIu64 " batches, %" PRIu64 " records, "
	       "%zu bytes of records, %zu bytes of JSON\n",
	       ops->name, e->name, batch_max, nb, r->nrec, r->len, r->json_len);
}

static void
run_free(struct run *r)
{
	free(r->rec);
	free(r->json);
}

/* first differing record, for the message */
static void
first_diff(const struct run *a, const struct run *b, char *msg, size_t len)
{
	size_t oa = 0, ob = 0, k = 0;

	while (oa < a->len && ob < b->len) {
		const struct gcap_rec *ra = (const void *)(a->rec + oa);
		const struct gcap_rec *rb = (const void *)(b->rec + ob);
		size_t sa = GCAP_REC_SIZE(ra->caplen), sb = GCAP_REC_SIZE(rb->caplen);

		if (sa != sb || memcmp(ra, rb, sa) != 0) {
			snprintf(msg, len,
				 "record %zu: seq %u/%u outmask %#" PRIx64 "/%#" PRIx64
				 " caplen %u/%u",
				 k, ra->seq, rb->seq, (uint64_t)ra->outmask,
				 (uint64_t)rb->outmask, ra->caplen, rb->caplen);
			return;
		}
		oa += sa;
		ob += sb;
		k++;
	}
	snprintf(msg, len, "record %zu: one side ends", k);
}

/* Is name in the comma-separated list $var (unset or empty: everything
 * is)? For short runs under compute-sanitizer: GCAP_GPU_KERNELS=dns,
 * GCAP_GPU_TESTS=test_kernel_batch. */
static bool
listed(const char *var, const char *name)
{
	const char *l = getenv(var);
	size_t n = strlen(name);

	if (l == NULL || l[0] == '\0')
		return true;
	for (const char *p = l; (p = strstr(p, name)) != NULL; p += n)
		if ((p == l || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

static void
compare(const struct example *e, unsigned batch_max)
{
	const char *path = corpus_path();
	const struct gcap_exec_ops *cpu = &gcap_exec_cpu_ops;
	struct corpus co;
	struct run g, h;
	char why[256];

	if (!listed("GCAP_GPU_KERNELS", e->name)) {
		printf("%s: not in GCAP_GPU_KERNELS, not run\n", e->name);
		return;
	}
	if (path == NULL) {
		printf("corpus mix-en10mb.pcap not found (../shared/data/bench "
		       "or $GCAP_GPU_CORPUS): skipped\n");
		return;
	}
	corpus_load(&co, path);
	run_exec(gpu_ops, gpu_ops != cpu, &co, e, batch_max, &g);
	run_exec(cpu, false, &co, e, batch_max, &h);

	/* the kernel did something, and both sides wrote a report */
	ck_assert_uint_gt(h.nrec, 0);
	ck_assert_uint_lt(h.nrec, co.n);
	ck_assert_uint_gt(h.json_len, 2);

	/* the state: identical JSON in every case */
	ck_assert_msg(g.json_len == h.json_len && memcmp(g.json, h.json, h.json_len) == 0,
		      "%s batch %u: JSON state differs\n--- gpu\n%.2000s\n--- cpu\n"
		      "%.2000s",
		      e->name, batch_max, g.json, h.json);
	/* how many, in every case */
	ck_assert_uint_eq(g.nrec, h.nrec);
	ck_assert_uint_eq(g.captured, h.captured);
	ck_assert_uint_eq(g.filtered, h.filtered);
	ck_assert_uint_eq(g.truncated, 0);
	ck_assert_uint_eq(h.truncated, 0);
	ck_assert_uint_eq(g.captured + g.filtered, co.n);
	for (unsigned j = 0; j < GCAP_MAX_OUTPUTS; j++)
		ck_assert_uint_eq(g.out[j], h.out[j]);
	/* which, byte for byte */
	if (g.len != h.len || memcmp(g.rec, h.rec, h.len) != 0) {
		first_diff(&g, &h, why, sizeof(why));
		ck_abort_msg("%s batch %u: records differ (gpu %zu bytes, "
			     "cpu %zu): %s",
			     e->name, batch_max, g.len, h.len, why);
	}
	ck_assert_uint_eq(g.bytes, h.bytes);
	printf("%s batch %u: %" PRIu64 " records and the state identical%s\n", e->name,
	       batch_max, h.nrec, e->ordered ? " (ordered kernel)" : "");
	run_free(&g);
	run_free(&h);
	corpus_free(&co);
}

/* _i: example index */
START_TEST(test_kernel_serial)
{
	compare(&examples[_i], 1);
}
END_TEST

START_TEST(test_kernel_batch)
{
	compare(&examples[_i], 256);
}
END_TEST

START_TEST(test_kernel_batch512)
{
	compare(&examples[_i], 512);
}
END_TEST

/* An inline kernel's state lives on one GPU: queues over two distinct GPUs
 * are refused. */
START_TEST(test_kernel_two_gpus)
{
	char err[GCAP_ERRBUF_SIZE] = "", kpath[4096];
	const char *root = getenv("GCAP_SOURCE_ROOT");
	int gpus[2] = { 0, 1 }, n = 0;
	struct gcap_exec_conf c;

	if (gpu_ops == &gcap_exec_cpu_ops || gcap_gpu_probe(&n, err) != 0 || n < 2) {
		printf("two GPUs needed: skipped\n");
		return;
	}
	snprintf(kpath, sizeof(kpath), "%s/kernels/examples/dns/dns.c",
		 root ? root : ".");
	memset(&c, 0, sizeof(c));
	c.nqueues = 2;
	c.ring_size = 8;
	c.batch_max = 64;
	c.nxbufs = 4;
	c.xbuf_size = 65536;
	c.snaplen = 65535;
	c.nfilters = 2;
	c.filters = progs;
	c.linktype = DLT_EN10MB;
	c.mem = GCAP_MEM_HOST;
	c.gpus = gpus;
	c.ngpus = 2;
	c.kernel_path = kpath;
	ck_assert_ptr_null(gpu_ops->create(&c, err));
	ck_assert_int_eq(errno, ENOTSUP);
	ck_assert_msg(strstr(err, "one GPU") != NULL, "%s", err);
}
END_TEST

int
main(void)
{
	const int nex = sizeof(examples) / sizeof(examples[0]);
	const char *self = getenv("GCAP_GPU_KERNELS_SELFTEST");
	char msg[GCAP_ERRBUF_SIZE], err[GCAP_ERRBUF_SIZE];
	Suite *s;
	SRunner *sr;
	TCase *tc;
	int nf;

	if (self != NULL && strcmp(self, "1") == 0) {
		printf("GCAP_GPU_KERNELS_SELFTEST: cpu executor on both sides "
		       "(checks the harness, not the GPU)\n");
		gpu_ops = &gcap_exec_cpu_ops;
	} else {
		/* probe in a child: CUDA must not be initialised before check
		 * forks */
		if (probe_in_child(msg, sizeof(msg)) != 0) {
			printf("no usable GPU (%s): skipped\n", msg);
			return 77;
		}
		printf("GPU probe: %s\n", msg);
		gpu_ops = gcap_exec_gpu_ops();
		if (gpu_ops == NULL) {
			printf("no gpu executor in this build: skipped\n");
			return 77;
		}
	}
	if (gcap_filter_compile("", DLT_EN10MB, 262144, &progs[0], err) != 0 ||
	    gcap_filter_compile("ip or ip6", DLT_EN10MB, 262144, &progs[1], err) != 0) {
		printf("filter: %s\n", err);
		return 1;
	}
	s = suite_create("gpu_kernels");
	tc = tcase_create("kernels");
	tcase_set_timeout(tc, 300);
	if (listed("GCAP_GPU_TESTS", "test_kernel_serial"))
		tcase_add_loop_test(tc, test_kernel_serial, 0, nex);
	if (listed("GCAP_GPU_TESTS", "test_kernel_batch"))
		tcase_add_loop_test(tc, test_kernel_batch, 0, nex);
	if (listed("GCAP_GPU_TESTS", "test_kernel_batch512"))
		tcase_add_loop_test(tc, test_kernel_batch512, 0, nex);
	if (listed("GCAP_GPU_TESTS", "test_kernel_two_gpus"))
		tcase_add_test(tc, test_kernel_two_gpus);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	gcap_filter_free(&progs[0]);
	gcap_filter_free(&progs[1]);
	return nf ? 1 : 0;
}
