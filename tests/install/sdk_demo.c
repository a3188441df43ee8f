/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tool built out of tree against an installed gpucap (pkg-config
 * gpucap): reads a capture file with libpcap, runs an inline kernel on
 * every packet through the host loader, writes what the kernel captures
 * with the capture file writer and the kernel's state as JSON, as
 * gpu-capture -r IN --kernel K --kernel-arg ARG -w OUT --kernel-state STATE
 * does on the cpu backend.
 *
 * usage: sdk_demo IN KERNEL.c ARG OUT STATE
 */
#include <stdio.h>
#include <string.h>

#include <gpucap/gcap_khost.h>
#include <gpucap/gcap_writer.h>
#include <pcap/pcap.h>

int
main(int argc, char **argv)
{
	char perr[PCAP_ERRBUF_SIZE], err[GCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	struct gcap_khost *k;
	struct gcap_writer *w;
	pcap_t *p;
	int r, rc = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: sdk_demo IN KERNEL.c ARG OUT STATE\n");
		return 2;
	}
	p = pcap_open_offline_with_tstamp_precision(argv[1], PCAP_TSTAMP_PRECISION_NANO,
						    perr);
	if (p == NULL) {
		fprintf(stderr, "sdk_demo: %s\n", perr);
		return 1;
	}
	k = gcap_khost_load(argv[2], argv[3], err);
	if (k == NULL) {
		fprintf(stderr, "sdk_demo: %s\n", err);
		return 1;
	}
	struct gcap_writer_if wif = { .name = argv[1], .linktype = pcap_datalink(p) };
	struct gcap_writer_conf wc = {
		.path = argv[4],
		.fmt = GCAP_FMT_PCAP,
		.nifs = 1,
		.ifs = &wif,
		/* the input's snap length in the header, as tcpdump -r -w
		 * and gpu-capture -r write it */
		.hdr_snaplen = (uint32_t)pcap_snapshot(p),
	};
	w = gcap_writer_open(&wc, err);
	if (w == NULL) {
		fprintf(stderr, "sdk_demo: %s\n", err);
		return 1;
	}
	while ((r = pcap_next_ex(p, &h, &data)) == 1) {
		struct gcap_kpkt kp = {
			.data = data,
			.caplen = h->caplen,
			.wirelen = h->len,
			.ts_ns = (uint64_t)h->ts.tv_sec * 1000000000u +
				 (uint64_t)h->ts.tv_usec,
		};
		uint64_t mask;
		uint32_t snap;

		if (!gcap_verdict_apply(gcap_khost_run(k, &kp), 1, h->caplen, &mask,
					&snap))
			continue;
		struct gcap_rec rec = {
			.ts_ns = kp.ts_ns,
			.outmask = mask,
			.caplen = snap,
			.wirelen = h->len,
		};
		if (gcap_writer_write(w, &rec, data) < 0) {
			fprintf(stderr, "sdk_demo: %s\n", gcap_writer_errmsg(w));
			rc = 1;
			break;
		}
	}
	if (gcap_writer_close(w, NULL, err) < 0) {
		fprintf(stderr, "sdk_demo: %s\n", err);
		rc = 1;
	}
	if (gcap_khost_report_file(k, argv[5], NULL, err) < 0) {
		fprintf(stderr, "sdk_demo: %s\n", err);
		rc = 1;
	}
	gcap_khost_free(k);
	pcap_close(p);
	return rc;
}
