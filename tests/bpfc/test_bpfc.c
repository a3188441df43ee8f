/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BPF -> C translator and reference interpreter, tested against libpcap's
 * bpf_filter():
 *  - tcpdump expressions for several link types, all translated, compiled
 *    together with the host C compiler into one shared object, run on every
 *    packet of every readable capture of the corpus (and tests/data/bpfc);
 *    the opcode coverage of what libpcap emitted must be 100% at run time;
 *  - random programs bpf_validate() accepts, over random and corpus packets;
 *  - backward jumps (protochain) and their bound;
 *  - the error paths.
 */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcap_config.h"
#include "gpucap/gcap_bpf_interp.h"
#include "gpucap/gcap_bpfc.h"
#include "gpucap/gcap_filter.h"
#include "bpf_gen.h"

#define SNAPLEN 262144
#define MAX_UNITS 32
#define MAX_PKTS 200000

typedef unsigned int (*single_fn)(const unsigned char *, unsigned int, unsigned int);
typedef unsigned long long (*mask_fn)(const unsigned char *, unsigned int, unsigned int);

/* ---- packets ---- */

struct pkt {
	int dlt;
	uint32_t wirelen, caplen;
	unsigned char *data;
};

static struct pkt *pkts;
static unsigned npkts, nfiles, nskipped;

static void
add_pkt(int dlt, uint32_t wirelen, uint32_t caplen, const unsigned char *data)
{
	struct pkt *k;

	if (npkts >= MAX_PKTS)
		return;
	if (pkts == NULL) {
		pkts = calloc(MAX_PKTS, sizeof(*pkts));
		ck_assert_ptr_nonnull(pkts);
	}
	k = &pkts[npkts++];
	k->dlt = dlt;
	k->wirelen = wirelen;
	k->caplen = caplen;
	/* exactly caplen bytes: any read past it shows under ASan/valgrind */
	k->data = malloc(caplen ? caplen : 1);
	ck_assert_ptr_nonnull(k->data);
	memcpy(k->data, data, caplen);
}

static void
load_file(const char *path)
{
	char eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *b;
	pcap_t *p = pcap_open_offline(path, eb);

	if (p == NULL) {
		nskipped++; /* malformed on purpose: libpcap cannot open it */
		return;
	}
	nfiles++;
	while (pcap_next_ex(p, &h, &b) == 1)
		add_pkt(pcap_datalink(p), h->len, h->caplen, b);
	pcap_close(p);
}

static void
load_dir(const char *dir)
{
	/* an absent directory adds nothing: the local captures always exist */
	(void)bpf_gen_each_file(dir, load_file);
}

static void
load_corpus(void)
{
	const char *root = getenv("GCAP_SOURCE_ROOT");
	char *dir;

	if (pkts != NULL)
		return;
	if (root == NULL)
		root = GCAP_SOURCE_ROOT;
	ck_assert(asprintf(&dir, "%s/tests/data/bpfc", root) > 0);
	load_dir(dir);
	free(dir);
	ck_assert(asprintf(&dir, "%s/../shared/data/pcaps/tcpdump-tests", root) > 0);
	if (access(dir, R_OK) != 0)
		printf("corpus %s absent: only tests/data/bpfc is used\n", dir);
	load_dir(dir);
	free(dir);
	printf("packets: %u from %u readable files (%u unreadable skipped)\n", npkts,
	       nfiles, nskipped);
	ck_assert_uint_gt(npkts, 0);
}

/* ---- compiling translated units with the host compiler ---- */

struct unit {
	char prefix[16];
	int dlt;
	unsigned n; /* programs */
	struct bpf_program *progs;
	unsigned maxlen;
	single_fn fn[GCAP_BPFC_MAX_PROGS];
	mask_fn mask;
	unsigned char *hits; /* [n][maxlen]: instruction ran */
};

struct so {
	char dir[64];
	void *handle;
};

/* write all units into one file (several units concatenated, as the GPU
 * side may do), compile it into a shared object and look the functions up */
static void
build_units(struct unit *u, unsigned nu, struct so *so)
{
	char *path, *cmd, eb[GCAP_ERRBUF_SIZE];
	const char *cc = getenv("GCAP_TEST_CC");
	FILE *f;

	strcpy(so->dir, "/tmp/gcap-bpfc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(so->dir));
	ck_assert(asprintf(&path, "%s/filters.c", so->dir) > 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	for (unsigned i = 0; i < nu; i++) {
		unsigned maxlen = 1;
		char *src;

		for (unsigned j = 0; j < u[i].n; j++)
			if (u[i].progs[j].bf_len > maxlen)
				maxlen = u[i].progs[j].bf_len;
		u[i].maxlen = maxlen;
		src = gcap_bpfc_translate(u[i].progs, u[i].n, u[i].prefix,
					  GCAP_BPFC_F_TRACE, eb);
		ck_assert_msg(src != NULL, "translate %s: %s", u[i].prefix, eb);
		fprintf(f,
			"unsigned char %s_hits[%u][%u];\n#undef GCAP_BPFC_TRACE\n"
			"#define GCAP_BPFC_TRACE(i, j) (%s_hits[i][j] = 1)\n%s\n",
			u[i].prefix, u[i].n, maxlen, u[i].prefix, src);
		free(src);
	}
	ck_assert_int_eq(fclose(f), 0);
	if (cc == NULL)
		cc = GCAP_HOST_CC;
	ck_assert(asprintf(&cmd,
			   "%s -std=gnu11 -O1 -shared -fPIC -Wall -Wextra -Werror "
			   "-DGCAP_BPFC_API= -o %s/filters.so %s",
			   cc, so->dir, path) > 0);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	free(cmd);
	free(path);
	ck_assert(asprintf(&path, "%s/filters.so", so->dir) > 0);
	so->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(so->handle != NULL, "dlopen: %s", dlerror());
	free(path);
	for (unsigned i = 0; i < nu; i++) {
		char name[64];

		for (unsigned j = 0; j < u[i].n; j++) {
			snprintf(name, sizeof(name), "%s_%u", u[i].prefix, j);
			*(void **)&u[i].fn[j] = dlsym(so->handle, name);
			ck_assert_msg(u[i].fn[j] != NULL, "no %s", name);
		}
		snprintf(name, sizeof(name), "%s_mask", u[i].prefix);
		*(void **)&u[i].mask = dlsym(so->handle, name);
		ck_assert_msg(u[i].mask != NULL, "no %s", name);
		snprintf(name, sizeof(name), "%s_hits", u[i].prefix);
		u[i].hits = dlsym(so->handle, name);
		ck_assert_msg(u[i].hits != NULL, "no %s", name);
	}
}

static void
free_so(struct so *so)
{
	char *cmd;

	dlclose(so->handle);
	ck_assert(asprintf(&cmd, "rm -rf %s", so->dir) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

/* what libpcap says; an empty program matches (bpf_filter(NULL) convention) */
static unsigned int
ref_filter(const struct bpf_program *prog, const struct pkt *k)
{
	if (prog->bf_len == 0)
		return 0xffffffffu;
	return bpf_filter(prog->bf_insns, k->data, k->wirelen, k->caplen);
}

static unsigned long mismatches;

static void
report(const struct unit *u, unsigned j, const struct pkt *k, const char *what,
       unsigned long long got, unsigned long long want)
{
	if (mismatches++ < 20)
		fprintf(stderr,
			"MISMATCH %s %s prog %u (dlt %d, caplen %u, wirelen %u): "
			"got 0x%llx want 0x%llx\n",
			what, u->prefix, j, k->dlt, k->caplen, k->wirelen, got, want);
}

/* run every unit on every packet of its link type (dlt -1: all packets);
 * returns the number of evaluations */
static unsigned long
run_units(struct unit *u, unsigned nu, const struct pkt *pk, unsigned np)
{
	unsigned long evals = 0;

	for (unsigned p = 0; p < np; p++) {
		const struct pkt *k = &pk[p];

		for (unsigned i = 0; i < nu; i++) {
			unsigned long long m, want = 0;

			if (u[i].dlt >= 0 && u[i].dlt != k->dlt)
				continue;
			m = u[i].mask(k->data, k->wirelen, k->caplen);
			for (unsigned j = 0; j < u[i].n; j++) {
				const struct bpf_program *pr = &u[i].progs[j];
				unsigned int ref = ref_filter(pr, k);
				unsigned int got =
					u[i].fn[j](k->data, k->wirelen, k->caplen);
				unsigned int in = gcap_bpf_interp(
					(const struct gcap_bpf_insn *)pr->bf_insns,
					pr->bf_len, k->data, k->wirelen, k->caplen);

				if (got != ref)
					report(&u[i], j, k, "translated", got, ref);
				if (in != ref)
					report(&u[i], j, k, "interpreter", in, ref);
				if (ref != 0)
					want |= 1ull << j;
				evals++;
			}
			if (m != want)
				report(&u[i], 0, k, "mask", m, want);
		}
	}
	return evals;
}

/* opcodes present in the programs vs opcodes that ran; returns missing */
static unsigned
coverage(const struct unit *u, unsigned nu, const char *what, int all_known)
{
	unsigned char present[256] = { 0 }, ran[256] = { 0 };
	unsigned np = 0, nr = 0, missing = 0;

	for (unsigned i = 0; i < nu; i++)
		for (unsigned j = 0; j < u[i].n; j++)
			for (unsigned t = 0; t < u[i].progs[j].bf_len; t++) {
				unsigned c = u[i].progs[j].bf_insns[t].code & 0xff;

				present[c] = 1;
				if (u[i].hits[j * u[i].maxlen + t])
					ran[c] = 1;
			}
	if (all_known) {
		/* every opcode bpf_filter() executes: decode them all */
		for (unsigned c = 0; c < 256; c++) {
			struct bpf_insn in[2] = { BPF_STMT(c, 1),
						  BPF_STMT(BPF_RET | BPF_K, 0) };
			struct bpf_program pr = { 2, in };

			if (BPF_CLASS(c) == BPF_JMP || BPF_CLASS(c) == BPF_RET)
				in[0].k = 0;
			if (gcap_bpfc_check(&pr, NULL) == 0)
				present[c] = 1;
		}
	}
	for (unsigned c = 0; c < 256; c++) {
		np += present[c];
		nr += present[c] && ran[c];
		if (present[c] && !ran[c]) {
			struct bpf_insn in = BPF_STMT(c, 0);

			fprintf(stderr, "%s: opcode 0x%02x (%s) never executed\n", what,
				c, bpf_image(&in, 0));
			missing++;
		}
	}
	printf("%s: opcode coverage %u/%u (%.1f%%)\n", what, nr, np,
	       np ? 100.0 * nr / np : 0.0);
	return missing;
}

/* ---- tcpdump expressions (bpf_gen.h) ---- */

/* The first corpus packet of link type dlt on which a and b disagree
 * (bpf_filter's verdicts), or -1. */
static long
differs(const struct bpf_program *a, const struct bpf_program *b, int dlt)
{
	for (unsigned k = 0; k < npkts; k++)
		if (pkts[k].dlt == dlt &&
		    gcap_filter_run(a, pkts[k].data, pkts[k].wirelen, pkts[k].caplen) !=
			    gcap_filter_run(b, pkts[k].data, pkts[k].wirelen,
					    pkts[k].caplen))
			return (long)k;
	return -1;
}

/* Every expression compiled as tcpdump does, optimised or (tcpdump -O)
 * not: the unoptimised programs are longer, with the same verdicts. */
static void
run_expressions(bool optimize)
{
	static struct bpf_program progs[NEXPRS];
	unsigned long len = 0, len_opt = 0; /* instructions, with -O */
	struct unit *u = calloc(MAX_UNITS, sizeof(*u));
	unsigned nu = 0, n_en10mb = 0;
	unsigned long evals;
	struct so so;
	char eb[GCAP_ERRBUF_SIZE];

	load_corpus();
	for (unsigned i = 0; i < NEXPRS; i++) {
		int r = gcap_filter_compile_opt(NULL, exprs[i].e, exprs[i].dlt, SNAPLEN,
						optimize, &progs[i], eb);

		ck_assert_msg(r == 0, "compile \"%s\": %s", exprs[i].e, eb);
		ck_assert_int_eq(gcap_bpfc_check(&progs[i], eb), 0);
		if (!optimize) {
			/* the optimiser was off: a longer program, libpcap's
			 * verdicts the optimised one's (what -O promises) */
			struct bpf_program opt;

			ck_assert_int_eq(gcap_filter_compile(exprs[i].e, exprs[i].dlt,
							     SNAPLEN, &opt, eb),
					 0);
			len_opt += opt.bf_len;
			len += progs[i].bf_len;
			ck_assert_msg(differs(&opt, &progs[i], exprs[i].dlt) < 0,
				      "\"%s\": packet %ld's verdict differs with -O",
				      exprs[i].e, differs(&opt, &progs[i], exprs[i].dlt));
			gcap_filter_free(&opt);
		}
		n_en10mb += exprs[i].dlt == DLT_EN10MB;
		/* consecutive expressions of one link type form a unit (<= 64) */
		if (nu == 0 || u[nu - 1].dlt != exprs[i].dlt ||
		    u[nu - 1].n == GCAP_BPFC_MAX_PROGS) {
			ck_assert_uint_lt(nu, MAX_UNITS);
			snprintf(u[nu].prefix, sizeof(u[nu].prefix), "x%u", nu);
			u[nu].dlt = exprs[i].dlt;
			u[nu].progs = &progs[i];
			nu++;
		}
		u[nu - 1].n++;
	}
	ck_assert_uint_ge(n_en10mb, 60);
	if (!optimize)
		ck_assert_msg(len > len_opt + len_opt / 4,
			      "%lu instructions not optimised, %lu optimised", len,
			      len_opt);
	build_units(u, nu, &so);
	mismatches = 0;
	evals = run_units(u, nu, pkts, npkts);
	printf("expressions%s: %zu (%u for EN10MB) in %u units, %lu evaluations, "
	       "%lu mismatches\n",
	       optimize ? "" : " (not optimised)", NEXPRS, n_en10mb, nu, evals,
	       mismatches);
	ck_assert_uint_gt(evals, 0);
	ck_assert_uint_eq(mismatches, 0);
	ck_assert_uint_eq(coverage(u, nu, "libpcap-emitted opcodes", 0), 0);
	free_so(&so);
	for (unsigned i = 0; i < NEXPRS; i++)
		gcap_filter_free(&progs[i]);
	free(u);
}

START_TEST(test_expressions)
{
	run_expressions(true);
}
END_TEST

START_TEST(test_expressions_unoptimized)
{
	run_expressions(false);
}
END_TEST

/* ---- random programs (bpf_gen.h) ---- */

#define NRANDOM_UNITS 8

START_TEST(test_random_programs)
{
	struct unit u[NRANDOM_UNITS];
	static struct bpf_program progs[NRANDOM_UNITS * GCAP_BPFC_MAX_PROGS];
	struct pkt *rp;
	unsigned nrp = 3000;
	unsigned long evals;
	struct so so;
	char eb[GCAP_ERRBUF_SIZE];

	load_corpus();
	rng_state = 0x9e3779b97f4a7c15ull;
	memset(u, 0, sizeof(u));
	for (unsigned i = 0; i < NRANDOM_UNITS * GCAP_BPFC_MAX_PROGS; i++) {
		struct bpf_insn *ins = calloc(RANDOM_PROG_MAX, sizeof(*ins));

		progs[i].bf_insns = ins;
		progs[i].bf_len = random_prog(ins, RANDOM_PROG_MAX);
		ck_assert_msg(bpf_validate(ins, (int)progs[i].bf_len),
			      "random program %u not valid", i);
		ck_assert_msg(gcap_bpfc_check(&progs[i], eb) == 0, "%u: %s", i, eb);
	}
	for (unsigned i = 0; i < NRANDOM_UNITS; i++) {
		snprintf(u[i].prefix, sizeof(u[i].prefix), "r%u", i);
		u[i].dlt = -1;
		u[i].n = GCAP_BPFC_MAX_PROGS;
		u[i].progs = &progs[i * GCAP_BPFC_MAX_PROGS];
	}
	build_units(u, NRANDOM_UNITS, &so);
	/* random packets: short ones, many zero bytes (so MSH and IND stay near
	 * the end of the capture) */
	rp = calloc(nrp, sizeof(*rp));
	ck_assert_ptr_nonnull(rp);
	for (unsigned i = 0; i < nrp; i++)
		rp[i].data = random_pkt(&rp[i].caplen, &rp[i].wirelen);
	mismatches = 0;
	evals = run_units(u, NRANDOM_UNITS, rp, nrp);
	evals += run_units(u, NRANDOM_UNITS, pkts, npkts);
	printf("random programs: %u over %u random + %u corpus packets, %lu evaluations, "
	       "%lu mismatches\n",
	       NRANDOM_UNITS * GCAP_BPFC_MAX_PROGS, nrp, npkts, evals, mismatches);
	ck_assert_uint_eq(mismatches, 0);
	ck_assert_uint_eq(coverage(u, NRANDOM_UNITS, "random programs, all opcodes", 1),
			  0);
	free_so(&so);
	for (unsigned i = 0; i < nrp; i++)
		free(rp[i].data);
	free(rp);
	for (unsigned i = 0; i < NRANDOM_UNITS * GCAP_BPFC_MAX_PROGS; i++)
		free(progs[i].bf_insns);
}
END_TEST

/* a counting loop with n-1 backward jumps: "protochain"-like */
static void
loop_prog(struct bpf_insn *in, uint32_t n)
{
	in[0] = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_IMM, 0);
	in[1] = (struct bpf_insn)BPF_STMT(BPF_ST, 0);
	in[2] = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_MEM, 0);
	in[3] = (struct bpf_insn)BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1);
	in[4] = (struct bpf_insn)BPF_STMT(BPF_ST, 0);
	in[5] = (struct bpf_insn)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, n, 1, 0);
	in[6] = (struct bpf_insn)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)-5);
	in[7] = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_A, 0);
}

START_TEST(test_backward_jumps)
{
	/* the bound for one backward ja: 8 x caplen + 16 jumps (48, 816) */
	static const uint32_t caplens[] = { 4, 100 };
	static const uint32_t counts[] = { 1,  2,   10,  48,  49,  50,
					   65, 100, 816, 817, 818, 2000 };
	enum {
		NC = sizeof(counts) / sizeof(counts[0])
	};
	struct bpf_insn ins[NC][8];
	struct bpf_program progs[NC];
	struct unit u = { .prefix = "bj", .dlt = -1, .n = NC, .progs = progs };
	unsigned char pkt[100] = { 1, 2, 3, 4 };
	struct so so;

	for (unsigned i = 0; i < NC; i++) {
		loop_prog(ins[i], counts[i]);
		progs[i].bf_insns = ins[i];
		progs[i].bf_len = 8;
		ck_assert_int_eq(bpf_validate(ins[i], 8), 1);
		ck_assert_int_eq(gcap_bpfc_check(&progs[i], NULL), 0);
	}
	build_units(&u, 1, &so);
	for (unsigned c = 0; c < 2; c++) {
		unsigned long long m = u.mask(pkt, caplens[c], caplens[c]);

		for (unsigned i = 0; i < NC; i++) {
			/* n - 1 backward jumps; one past the bound returns 0 */
			uint32_t want =
				counts[i] - 1 <= GCAP_BPF_BACKWARD_LIMIT(1, caplens[c]) ?
					counts[i] :
					0;

			ck_assert_uint_eq(u.fn[i](pkt, caplens[c], caplens[c]), want);
			ck_assert_uint_eq(
				gcap_bpf_interp((const struct gcap_bpf_insn *)ins[i], 8,
						pkt, caplens[c], caplens[c]),
				want);
			ck_assert_uint_eq((m >> i) & 1, want != 0);
			if (want != 0) /* bpf_filter() has no bound: the same below it */
				ck_assert_uint_eq(
					bpf_filter(ins[i], pkt, caplens[c], caplens[c]),
					want);
		}
	}
	free_so(&so);
}
END_TEST

/* protochain over chains of every length up to the longest that fits in
 * a 9,000-byte frame: the translated programs and the interpreter give
 * bpf_filter()'s verdict on each, and the longest chains do match (the
 * loop was followed to its end). A packet on which bpf_filter() loops
 * forever (an AH that points back at itself) ends with 0. */
START_TEST(test_protochain)
{
	static const uint8_t v6last[] = { 17, 6, 58 }, v4last[] = { 17, 6 };
	struct bpf_program progs[NPROTOCHAIN_EXPRS];
	struct unit u = {
		.prefix = "pc", .dlt = -1, .n = NPROTOCHAIN_EXPRS, .progs = progs
	};
	struct pkt *pk = calloc(4 * (PROTOCHAIN_V6_MAX + 1), sizeof(*pk));
	unsigned np = 0, longest_hits = 0;
	unsigned long evals;
	char eb[GCAP_ERRBUF_SIZE];
	struct so so;

	ck_assert_ptr_nonnull(pk);
	for (unsigned i = 0; i < NPROTOCHAIN_EXPRS; i++) {
		ck_assert_int_eq(gcap_filter_compile(protochain_exprs[i], DLT_EN10MB,
						     SNAPLEN, &progs[i], eb),
				 0);
		ck_assert_int_eq(gcap_bpfc_check(&progs[i], eb), 0);
	}
	build_units(&u, 1, &so);
	for (int v6 = 0; v6 < 2; v6++) {
		unsigned max = v6 ? PROTOCHAIN_V6_MAX : PROTOCHAIN_V4_MAX;
		unsigned nl = v6 ? sizeof(v6last) : sizeof(v4last);

		for (unsigned n = 0; n <= max; n++)
			for (unsigned l = 0; l < nl; l++) {
				struct pkt *k = &pk[np++];

				k->data = malloc(PROTOCHAIN_FRAME);
				ck_assert_ptr_nonnull(k->data);
				k->dlt = DLT_EN10MB;
				k->caplen = k->wirelen = protochain_pkt(
					k->data, v6, n, v6 ? v6last[l] : v4last[l], 0);
				ck_assert_uint_le(k->caplen, PROTOCHAIN_FRAME);
				if (n == max &&
				    bpf_filter(progs[v6 ? l : 3 + l].bf_insns, k->data,
					       k->wirelen, k->caplen))
					longest_hits++;
			}
	}
	/* the longest chains match their protocol: 3 IPv6, 2 IPv4 */
	ck_assert_uint_eq(longest_hits, 5);
	mismatches = 0;
	evals = run_units(&u, 1, pk, np);
	printf("protochain: %u packets (chains of 0..%u IPv6, 0..%u IPv4 headers), "
	       "%lu evaluations, %lu mismatches\n",
	       np, PROTOCHAIN_V6_MAX, PROTOCHAIN_V4_MAX, evals, mismatches);
	ck_assert_uint_eq(mismatches, 0);
	{
		uint8_t b[PROTOCHAIN_FRAME];
		uint32_t len = protochain_pkt(b, 0, 0, 17, 1);

		for (unsigned i = 0; i < NPROTOCHAIN_EXPRS; i++) {
			ck_assert_uint_eq(u.fn[i](b, len, len), 0);
			ck_assert_uint_eq(
				gcap_bpf_interp(
					(const struct gcap_bpf_insn *)progs[i].bf_insns,
					progs[i].bf_len, b, len, len),
				0);
		}
		ck_assert_uint_eq(u.mask(b, len, len), 0);
	}
	free_so(&so);
	for (unsigned i = 0; i < np; i++)
		free(pk[i].data);
	free(pk);
	for (unsigned i = 0; i < NPROTOCHAIN_EXPRS; i++)
		gcap_filter_free(&progs[i]);
}
END_TEST

/* ---- error paths ---- */

static int
check_one(const struct bpf_insn *ins, unsigned n, char *eb)
{
	struct bpf_program p = { n, (struct bpf_insn *)ins };

	return gcap_bpfc_check(&p, eb);
}

START_TEST(test_ancillary_as_bpf_filter)
{
	/* what libpcap emits for "vlan" on a live Linux socket, and (k =
	 * SKF_AD_OFF + 4094) for Juniper link types on a savefile: without
	 * aux data bpf_filter() returns 0 for them; so must the translation */
	struct bpf_insn ins[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS,
			 0xfffff000u + 48), /* SKF_AD_VLAN_TAG_PRESENT */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 262144),
		BPF_STMT(BPF_RET | BPF_K, 7),
	};
	static const uint32_t ks[] = { 0xfffff000u + 48, 0xfffffffeu, 0xffffffffu,
				       0xfffff000u };
	static const uint16_t codes[] = { BPF_LD | BPF_B | BPF_ABS,
					  BPF_LD | BPF_H | BPF_ABS,
					  BPF_LD | BPF_W | BPF_ABS };
	struct bpf_program p = { 4, ins };
	uint8_t pkt[64];
	char eb[GCAP_ERRBUF_SIZE] = "";

	memset(pkt, 1, sizeof(pkt));
	for (unsigned c = 0; c < sizeof(codes) / sizeof(codes[0]); c++)
		for (unsigned i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
			char *src;

			ins[0].code = codes[c];
			ins[0].k = ks[i];
			ck_assert_int_eq(gcap_bpfc_check(&p, eb), 0);
			src = gcap_bpfc_translate(&p, 1, "f", 0, eb);
			ck_assert_msg(src != NULL, "%s", eb);
			free(src);
			ck_assert_uint_eq(
				gcap_bpf_interp((const struct gcap_bpf_insn *)ins, 4, pkt,
						sizeof(pkt), sizeof(pkt)),
				bpf_filter(ins, pkt, sizeof(pkt), sizeof(pkt)));
			ck_assert_uint_eq(bpf_filter(ins, pkt, sizeof(pkt), sizeof(pkt)),
					  0);
		}
}
END_TEST

START_TEST(test_reject_invalid)
{
	char eb[GCAP_ERRBUF_SIZE];
	const struct bpf_insn ret = BPF_STMT(BPF_RET | BPF_K, 1);
	struct bpf_insn bad[][2] = {
		{ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0), ret }, /* jt out */
		{ BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 0, 0, 1), ret }, /* jf out */
		{ BPF_STMT(BPF_JMP | BPF_JA, 1), ret },                /* ja out */
		{ BPF_STMT(BPF_JMP | BPF_JA, 0xffffffffu), ret },      /* ja itself */
		{ BPF_STMT(BPF_JMP | BPF_JA, 0xfffffff0u), ret },      /* ja before 0 */
		{ BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), ret },       /* / 0 */
		{ BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 0), ret },       /* % 0 */
		{ BPF_STMT(BPF_LD | BPF_MEM, 16), ret },               /* M[16] */
		{ BPF_STMT(BPF_STX, 99), ret },
		{ BPF_STMT(BPF_LD | BPF_H | BPF_LEN, 0), ret }, /* bpf_filter aborts */
		{ BPF_STMT(BPF_LDX | BPF_W | BPF_ABS, 0), ret },
		{ BPF_STMT(BPF_ALU | BPF_NEG | BPF_X, 0), ret },
		{ BPF_STMT(BPF_MISC | 0x10, 0), ret },
		{ BPF_STMT(BPF_JMP | 0x50, 0), ret },
		{ ret, BPF_STMT(BPF_LD | BPF_IMM, 0) }, /* no final ret */
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bpf_program p = { 2, bad[i] };

		eb[0] = '\0';
		ck_assert_msg(check_one(bad[i], 2, eb) == -EINVAL, "case %u accepted", i);
		ck_assert_msg(eb[0] != '\0', "case %u: no message", i);
		errno = 0;
		ck_assert_ptr_null(gcap_bpfc_translate(&p, 1, "f", 0, eb));
		ck_assert_int_eq(errno, EINVAL);
	}
	/* sanity: the same shapes fixed are accepted */
	{
		struct bpf_insn ok[2] = { BPF_STMT(BPF_JMP | BPF_JA, 0), ret };

		ck_assert_int_eq(check_one(ok, 2, eb), 0);
	}
}
END_TEST

START_TEST(test_translate_args)
{
	struct bpf_program p[GCAP_BPFC_MAX_PROGS + 1];
	char eb[GCAP_ERRBUF_SIZE];
	char *s;

	memset(p, 0, sizeof(p));
	errno = 0;
	ck_assert_ptr_null(gcap_bpfc_translate(p, 0, "f", 0, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(gcap_bpfc_translate(p, GCAP_BPFC_MAX_PROGS + 1, "f", 0, eb));
	ck_assert_int_eq(errno, E2BIG);
	ck_assert_ptr_null(gcap_bpfc_translate(p, 1, "9bad", 0, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(gcap_bpfc_translate(p, 1, "a-b", 0, eb));
	ck_assert_ptr_null(gcap_bpfc_translate(p, 1, NULL, 0, eb));
	ck_assert_ptr_null(gcap_bpfc_translate(p, 1, "f", 0x100, eb));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(gcap_bpfc_check(NULL, eb), -EINVAL);
	/* 64 empty programs: fine, every bit set */
	s = gcap_bpfc_translate(p, GCAP_BPFC_MAX_PROGS, "all", GCAP_BPFC_F_KERNEL, eb);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(s, "all_63("));
	ck_assert_ptr_nonnull(strstr(s, "all_mask("));
	ck_assert_ptr_nonnull(strstr(s, "all_kernel("));
	free(s);
}
END_TEST

/* what an empty program and a 64-program unit give at run time */
START_TEST(test_empty_and_full_mask)
{
	struct bpf_program p[GCAP_BPFC_MAX_PROGS];
	struct unit u = {
		.prefix = "full", .dlt = -1, .n = GCAP_BPFC_MAX_PROGS, .progs = p
	};
	unsigned char pkt[20] = { 0 };
	char eb[GCAP_ERRBUF_SIZE];
	struct so so;

	for (unsigned i = 0; i < GCAP_BPFC_MAX_PROGS; i++) {
		char e[32];

		/* program i matches iff the packet is longer than i bytes */
		snprintf(e, sizeof(e), i == 0 ? "" : "len > %u", i);
		ck_assert_int_eq(gcap_filter_compile(e, DLT_EN10MB, SNAPLEN, &p[i], eb),
				 0);
	}
	build_units(&u, 1, &so);
	ck_assert_uint_eq(u.fn[0](pkt, 0, 0), 0xffffffffu);
	ck_assert_uint_eq(u.mask(pkt, 0, 0), 1ull);
	ck_assert_uint_eq(u.mask(pkt, 3, 3), 0x7ull);
	ck_assert_uint_eq(u.mask(pkt, 63, 20), 0x7fffffffffffffffull);
	ck_assert_uint_eq(u.mask(pkt, 64, 20), ~0ull);
	free_so(&so);
	for (unsigned i = 0; i < GCAP_BPFC_MAX_PROGS; i++)
		gcap_filter_free(&p[i]);
}
END_TEST

static Suite *
bpfc_suite(void)
{
	Suite *s = suite_create("bpfc");
	TCase *t = tcase_create("differential");

	tcase_set_timeout(t, 600);
	tcase_add_test(t, test_expressions);
	tcase_add_test(t, test_expressions_unoptimized);
	tcase_add_test(t, test_random_programs);
	tcase_add_test(t, test_backward_jumps);
	tcase_add_test(t, test_protochain);
	tcase_add_test(t, test_empty_and_full_mask);
	suite_add_tcase(s, t);
	t = tcase_create("errors");
	tcase_add_test(t, test_ancillary_as_bpf_filter);
	tcase_add_test(t, test_reject_invalid);
	tcase_add_test(t, test_translate_args);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(bpfc_suite());
	int failed;

	_Static_assert(sizeof(struct gcap_bpf_insn) == sizeof(struct bpf_insn),
		       "gcap_bpf_insn must match struct bpf_insn");
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
