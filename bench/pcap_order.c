/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcap_order: how far a capture file is from time order. It reads the
 * file with libpcap (pcap or pcapng, times to the nanosecond) and counts
 * the records whose time is below the latest time of a record before
 * them (each record after a step back, until the file is past that time
 * again) and the most any record is below it. The capture benchmarks run
 * it on what the time-order merge wrote (bench/gpunic_bench.sh's
 * diagnosis).
 *
 * usage: pcap_order FILE
 * prints one line: RECORDS OUT_OF_ORDER MOST_NS_BACK; exit 0, or 1 with a
 * message where libpcap cannot read the file.
 */
#include <inttypes.h>
#include <stdio.h>

#include <pcap/pcap.h>

int
main(int argc, char **argv)
{
	char eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t n = 0, back = 0, most = 0, latest = 0;
	pcap_t *p;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: pcap_order FILE\n");
		return 2;
	}
	p = pcap_open_offline_with_tstamp_precision(argv[1], PCAP_TSTAMP_PRECISION_NANO,
						    eb);
	if (p == NULL) {
		fprintf(stderr, "pcap_order: %s\n", eb);
		return 1;
	}
	while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
		/* tv_usec holds nanoseconds at this precision */
		const uint64_t t =
			(uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec;

		n++;
		if (t < latest) {
			back++;
			if (latest - t > most)
				most = latest - t;
		} else {
			latest = t;
		}
	}
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, "pcap_order: %s: %s\n", argv[1], pcap_geterr(p));
		pcap_close(p);
		return 1;
	}
	pcap_close(p);
	printf("%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", n, back, most);
	return 0;
}
