/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writer_bench: the capture file writer alone, side by side with and
 * without its I/O thread (gcap_writer_conf's write_behind). Each run opens
 * a writer on one path, writes the same records through
 * gcap_writer_write (the call the pipeline's writer thread makes per
 * record), closes it (so the last buffers are in the file) and removes
 * the file if it made it; the two modes alternate within each round. It prints one
 * markdown row per run: records per second of the caller's thread, the
 * bytes per second that reached the file, and the CPU the process took
 * per million records (both threads).
 *
 * usage: writer_bench [--out PATH] [--size BYTES] [--records N]
 *                     [--rounds R] [--fmt pcap|pcapng] [--only no|yes]
 * (--only: one mode, e.g. to profile it)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pcap/dlt.h>

#include "gpucap/gcap_writer.h"

#include "bench_clock.h"

/* One run; @return 0 or the writer's error (message printed). */
static int
run(const char *out, enum gcap_fmt fmt, bool behind, uint32_t size, unsigned long n,
    double *secs, double *cpu, uint64_t *bytes)
{
	static const struct gcap_writer_if eth = { .name = "bench0",
						   .linktype = DLT_EN10MB };
	static uint8_t pkt[65536];
	struct gcap_writer_conf c = {
		.path = out,
		.fmt = fmt,
		.nifs = 1,
		.ifs = &eth,
		.write_behind = behind,
	};
	struct gcap_rec r = { .caplen = size, .wirelen = size, .outmask = 1 };
	char eb[GCAP_ERRBUF_SIZE];
	struct gcap_writer *w;
	struct stat st;
	/* only a file this run made goes afterwards (not /dev/null) */
	bool made = stat(out, &st) != 0;
	double t0, c0;
	int rc = 0;

	memset(pkt, 0x5a, size);
	w = gcap_writer_open(&c, eb);
	if (w == NULL) {
		fprintf(stderr, "writer_bench: %s\n", eb);
		return -errno;
	}
	r.ts_ns = (uint64_t)time(NULL) * 1000000000ull;
	c0 = gcap_bench_cpu_secs();
	t0 = gcap_bench_now();
	for (unsigned long i = 0; i < n && rc == 0; i++) {
		r.ts_ns += 67; /* 64-byte frames at 100 Gb/s, about */
		r.seq = (uint32_t)i;
		rc = gcap_writer_write(w, &r, pkt);
	}
	gcap_writer_counts(w, NULL, bytes);
	if (rc == 0)
		rc = gcap_writer_close(w, NULL, eb);
	else
		(void)gcap_writer_close(w, NULL, eb);
	*secs = gcap_bench_now() - t0;
	*cpu = gcap_bench_cpu_secs() - c0;
	if (made && stat(out, &st) == 0 && S_ISREG(st.st_mode))
		(void)unlink(out);
	if (rc != 0)
		fprintf(stderr, "writer_bench: %s\n", eb);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *out = "/dev/shm/gcap-writer-bench.pcap";
	enum gcap_fmt fmt = GCAP_FMT_PCAP;
	unsigned long n = 20000000, rounds = 5, size = 64;
	int first = 0, last = 1;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL)
			goto usage;
		if (strcmp(argv[i], "--out") == 0)
			out = v;
		else if (strcmp(argv[i], "--size") == 0)
			size = strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--records") == 0)
			n = strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "--only") == 0 && strcmp(v, "no") == 0)
			last = 0;
		else if (strcmp(argv[i], "--only") == 0 && strcmp(v, "yes") == 0)
			first = 1;
		else if (strcmp(argv[i], "--fmt") == 0 && strcmp(v, "pcap") == 0)
			fmt = GCAP_FMT_PCAP;
		else if (strcmp(argv[i], "--fmt") == 0 && strcmp(v, "pcapng") == 0)
			fmt = GCAP_FMT_PCAPNG;
		else
			goto usage;
		i++;
	}
	if (size == 0 || size > 65535 || n == 0 || rounds == 0)
		goto usage;
	printf("| round | I/O thread | M records/s | MB/s to the file | CPU s per M "
	       "records |\n");
	printf("|---|---|---|---|---|\n");
	for (unsigned long k = 1; k <= rounds; k++)
		for (int behind = first; behind <= last; behind++) {
			double secs, cpu;
			uint64_t bytes = 0;

			if (run(out, fmt, behind, (uint32_t)size, n, &secs, &cpu,
				&bytes) != 0)
				return 1;
			printf("| %lu | %s | %.2f | %.0f | %.3f |\n", k,
			       behind ? "yes" : "no", (double)n / secs / 1e6,
			       (double)bytes / secs / 1e6, cpu / ((double)n / 1e6));
			fflush(stdout);
		}
	return 0;
usage:
	fprintf(stderr, "usage: writer_bench [--out PATH] [--size BYTES] [--records N] "
			"[--rounds R] [--fmt pcap|pcapng] [--only no|yes]\n");
	return 2;
}
