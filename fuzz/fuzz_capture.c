/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the capture-file path of gpu-capture -r: libpcap's
 * reader -> the pipeline's file queue -> the cpu executor -> the writer
 * thread -> pcap and pcapng files, as apps/gpu-capture/offline.c runs it
 * (no EAL: the file path needs none).
 *
 * Input: [options byte][a pcap or pcapng file]. Bit 0 of the options
 * byte picks which output is pcap and which pcapng, bits 1-3 the second
 * output's filter.
 *
 * Every output, read back with libpcap at nanosecond precision, must be
 * a valid file of the input's link type ending in a clean end of file,
 * and hold exactly the input records its filter selects, in order (same
 * caplen, len, bytes and timestamp): never more records than the input.
 * For a damaged input that is the records libpcap read before the damage.
 * Any violation abort()s.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_pipeline.h"
#include "gpucap/gcap_writer.h"

#define SNAPLEN 262144u
#define BATCH 8u
#define RING 2u
/* staging bytes per batch slot, at most: gpu-capture -r's */
#define STAGE_MAX (1u << 20)
#define NOUT 2u

/* the second output's filter, chosen by the options byte */
static const char *const filters[] = {
	"tcp", "udp port 53", "ip6 or arp", "greater 100", "not ip", "vlan", "icmp", "",
};

struct rec {
	struct pcap_pkthdr h;
	uint8_t *data;
};

struct ref {
	struct rec *r;
	size_t n, cap;
	uint32_t maxcap; /* the largest caplen */
	int linktype;
	bool damaged; /* reading ended in an error, not the end of the file */
};

static pcap_t *
open_mem(const uint8_t *data, size_t size, char *perr)
{
	FILE *f = fmemopen((void *)data, size, "rb");
	pcap_t *p;

	if (f == NULL)
		return NULL;
	p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (p == NULL)
		fclose(f);
	return p; /* pcap_close() closes f */
}

/* the records libpcap reads before the end of the file or its damage */
static void
read_ref(pcap_t *p, struct ref *ref)
{
	struct pcap_pkthdr *h;
	const u_char *d;
	int r;

	ref->n = 0;
	ref->maxcap = 0;
	ref->linktype = pcap_datalink(p);
	while ((r = pcap_next_ex(p, &h, &d)) == 1) {
		if (ref->n == ref->cap) {
			ref->cap = ref->cap ? ref->cap * 2 : 64;
			ref->r = realloc(ref->r, ref->cap * sizeof(*ref->r));
			if (ref->r == NULL)
				abort();
		}
		ref->r[ref->n].h = *h;
		ref->r[ref->n].data = malloc(h->caplen ? h->caplen : 1);
		if (ref->r[ref->n].data == NULL)
			abort();
		memcpy(ref->r[ref->n].data, d, h->caplen);
		if (h->caplen > ref->maxcap)
			ref->maxcap = h->caplen;
		ref->n++;
	}
	ref->damaged = r != PCAP_ERROR_BREAK;
}

static void
free_ref(struct ref *ref)
{
	for (size_t i = 0; i < ref->n; i++)
		free(ref->r[i].data);
	ref->n = 0;
}

/* ns since the epoch as the test suite computes it, or -1 where that has
 * no representation (a negative or far instant of a damaged file) */
static int64_t
ts_ns(const struct timeval *tv)
{
	int64_t sec =
		tv->tv_sec < 0 ? (int64_t)(uint32_t)tv->tv_sec : (int64_t)tv->tv_sec;

	if (sec > INT64_MAX / 1000000000 - 1)
		return -1;
	return sec * 1000000000 + (int64_t)tv->tv_usec;
}

/* what a pcap file can hold of an instant: seconds modulo 2^32 */
static int64_t
ts_pcap(int64_t ns)
{
	return (int64_t)(uint32_t)(ns / 1000000000) * 1000000000 + ns % 1000000000;
}

static void
fail(const char *what, unsigned o, size_t k)
{
	fprintf(stderr, "fuzz_capture: output %u, record %zu: %s\n", o, k, what);
	abort();
}

/* output o (in memfd fd) against the input records prog selects */
static void
check_output(int fd, unsigned o, bool pcap_out, const struct ref *ref,
	     const struct bpf_program *prog)
{
	char perr[PCAP_ERRBUF_SIZE];
	FILE *f;
	pcap_t *p;
	size_t k = 0, nrec = 0;

	if (lseek(fd, 0, SEEK_SET) != 0 || (f = fdopen(dup(fd), "rb")) == NULL)
		abort();
	p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (p == NULL) {
		fprintf(stderr, "fuzz_capture: output %u does not read back: %s\n", o,
			perr);
		abort();
	}
	if (pcap_datalink(p) != ref->linktype)
		fail("link type differs", o, 0);
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *d;
		const struct rec *want = NULL;
		int r = pcap_next_ex(p, &h, &d);

		if (r != 1 && r != PCAP_ERROR_BREAK) {
			fprintf(stderr, "fuzz_capture: output %u record %zu: %s\n", o,
				nrec + 1, pcap_geterr(p));
			abort();
		}
		while (k < ref->n) {
			const struct rec *c = &ref->r[k++];

			if (prog->bf_insns == NULL ||
			    pcap_offline_filter(prog, &c->h, c->data) != 0) {
				want = c;
				break;
			}
		}
		if (r == PCAP_ERROR_BREAK) {
			if (want != NULL)
				fail("output ends before an input record it selects", o,
				     k);
			break;
		}
		nrec++;
		if (want == NULL)
			fail("more records than the input", o, nrec);
		int64_t want_ts = ts_ns(&want->h.ts);

		if (want_ts >= 0 && pcap_out)
			want_ts = ts_pcap(want_ts);
		uint32_t cap = want->h.caplen < SNAPLEN ? want->h.caplen : SNAPLEN;

		if (want_ts >= 0 && ts_ns(&h->ts) != want_ts)
			fail("timestamp differs", o, nrec);
		if (h->caplen != cap || h->len != want->h.len ||
		    memcmp(d, want->data, cap) != 0)
			fail("caplen, len or bytes differ", o, nrec);
	}
	pcap_close(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ref ref;
	static int fds[NOUT] = { -1, -1 };
	char perr[PCAP_ERRBUF_SIZE], err[GCAP_ERRBUF_SIZE], path[NOUT][64];
	struct bpf_program progs[NOUT], refprog[NOUT];
	struct gcap_writer *writers[NOUT];
	struct gcap_exec *ex;
	struct gcap_pipeline *pl;
	pcap_t *in, *rp;
	const char *expr[NOUT];
	unsigned opt;
	int rr;

	if (size < 1)
		return 0;
	opt = data[0];
	data++;
	size--;
	if (fds[0] < 0)
		for (unsigned i = 0; i < NOUT; i++)
			if ((fds[i] = memfd_create("fuzz_capture", MFD_CLOEXEC)) < 0)
				abort();
	rp = open_mem(data, size, perr);
	if (rp == NULL)
		return 0; /* no capture file header: nothing reaches the pipeline */
	in = open_mem(data, size, perr);
	if (in == NULL)
		abort(); /* the same bytes opened once */
	read_ref(rp, &ref);
	if (ref.linktype < 0 || ref.linktype > 0xffff) {
		/* no pcap or pcapng file holds it: the writer refuses it, so
		 * gpu-capture -r stops before reading */
		pcap_close(in);
		pcap_close(rp);
		free_ref(&ref);
		return 0;
	}

	expr[0] = "";
	expr[1] = filters[(opt >> 1) % (sizeof(filters) / sizeof(filters[0]))];
	/* a link type libpcap cannot compile for, even the empty expression:
	 * gpu-capture -r refuses the file as tcpdump does, before reading */
	if (gcap_filter_compile_on(in, "", &progs[0], err) < 0) {
		pcap_close(in);
		pcap_close(rp);
		free_ref(&ref);
		return 0;
	}
	for (unsigned i = 0; i < NOUT; i++) {
		/* a filter libpcap rejects for this link type: accept all */
		if (gcap_filter_compile_on(in, expr[i], &progs[i], err) < 0) {
			expr[i] = "";
			if (gcap_filter_compile_on(in, "", &progs[i], err) < 0)
				abort();
		}
		/* "" is no program: every packet, on any link type */
		memset(&refprog[i], 0, sizeof(refprog[i]));
		if (expr[i][0] != '\0' &&
		    pcap_compile(rp, &refprog[i], expr[i], 1, PCAP_NETMASK_UNKNOWN) < 0)
			abort(); /* gcap_filter_compile_on() accepted it */
	}

	/* staging room for the largest packet, not 1 MiB: clearing that for
	 * every input would take most of the time; a small area also makes
	 * the reader start new batches often */
	uint32_t stage = ref.maxcap < 4096u ? 4096u : (ref.maxcap + 7u) & ~7u;

	if (stage > STAGE_MAX)
		stage = STAGE_MAX;
	struct gcap_exec_conf ec = {
		.nqueues = 1,
		.ring_size = RING,
		.batch_max = BATCH,
		.nxbufs = RING * 2,
		.xbuf_size = stage + BATCH * GCAP_REC_SIZE(0),
		.stage_size = stage,
		.snaplen = SNAPLEN,
		.nfilters = NOUT,
		.filters = progs,
		.linktype = ref.linktype,
	};
	struct gcap_writer_if wif = { .name = "fuzz", .linktype = ref.linktype };
	struct gcap_pipeline_conf pc = {
		.ops = &gcap_exec_cpu_ops,
		.nqueues = 1,
		.batch_max = BATCH,
		.nwriters = NOUT,
		.writers = writers,
		.flush_ms = 100,
	};

	ex = gcap_exec_cpu_ops.create(&ec, err);
	if (ex == NULL) {
		fprintf(stderr, "fuzz_capture: executor: %s\n", err);
		abort();
	}
	for (unsigned i = 0; i < NOUT; i++) {
		struct gcap_writer_conf wc = {
			.path = path[i],
			.fmt = (i ^ opt) & 1 ? GCAP_FMT_PCAPNG : GCAP_FMT_PCAP,
			.snaplen = SNAPLEN,
			.nifs = 1,
			.ifs = &wif,
			.filter_expr = expr[i],
		};

		if (ftruncate(fds[i], 0) != 0)
			abort();
		snprintf(path[i], sizeof(path[i]), "/proc/self/fd/%d", fds[i]);
		writers[i] = gcap_writer_open(&wc, err);
		if (writers[i] == NULL) {
			fprintf(stderr, "fuzz_capture: writer: %s\n", err);
			abort();
		}
	}
	pc.ex = ex;
	pl = gcap_pipeline_create(&pc, err);
	if (pl == NULL) {
		fprintf(stderr, "fuzz_capture: pipeline: %s\n", err);
		abort();
	}
	rr = gcap_pipeline_run_file(pl, in, err);
	/* a damaged file fails the run, and only a damaged one; what came
	 * before the damage is written */
	if ((rr < 0) != ref.damaged) {
		fprintf(stderr, "fuzz_capture: run %d (%s), libpcap %s\n", rr,
			rr < 0 ? err : "", ref.damaged ? "fails" : "reads to the end");
		abort();
	}
	if (gcap_pipeline_stop(pl, 10000, err) < 0 && rr == 0) {
		fprintf(stderr, "fuzz_capture: stop: %s\n", err);
		abort();
	}
	if (gcap_pipeline_written(pl) > ref.n * NOUT)
		abort();
	gcap_pipeline_destroy(pl);
	for (unsigned i = 0; i < NOUT; i++)
		if (gcap_writer_close(writers[i], NULL, err) != 0) {
			fprintf(stderr, "fuzz_capture: close: %s\n", err);
			abort();
		}
	gcap_exec_cpu_ops.destroy(ex);
	for (unsigned i = 0; i < NOUT; i++) {
		check_output(fds[i], i, ((i ^ opt) & 1) == 0, &ref, &refprog[i]);
		if (refprog[i].bf_insns != NULL)
			pcap_freecode(&refprog[i]);
		gcap_filter_free(&progs[i]);
	}
	pcap_close(in);
	pcap_close(rp);
	free_ref(&ref);
	return 0;
}
