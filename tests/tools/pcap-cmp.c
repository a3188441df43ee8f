/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcap-cmp: compare the packet records of two capture files.
 *
 *   pcap-cmp [--no-ts|--usec] [--snap N] [--no-linktype] [--iface N] [-q] A B
 *   pcap-cmp --count [--iface N] A
 *
 * Both files (pcap or pcapng) are read with libpcap at nanosecond
 * precision; records are equal when timestamp (the instant, in ns),
 * caplen, len and bytes are.
 * --no-ts ignores timestamps (live captures stamp at receive time),
 * --usec compares timestamps truncated to microseconds (tcpdump -w writes
 * microsecond pcap, cutting nanosecond inputs), --no-linktype ignores the link types of the files, --iface N keeps only
 * the records of pcapng interface N of file A (a pcap file holds interface
 * 0 only). --count prints the number of records of A.
 *
 * Exit status: 0 equal, 1 different, 2 error (bad usage, unreadable or
 * damaged file).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#define BT_SHB 0x0A0D0D0Au
#define BT_PB 0x00000002u
#define BT_SPB 0x00000003u
#define BT_EPB 0x00000006u

struct ifmap {
	uint32_t *ids; /* interface id of each packet record, in file order */
	size_t n;
	size_t cap;
};

static uint32_t
rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint16_t
rd16(const uint8_t *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}

static int
ifmap_add(struct ifmap *m, uint32_t id)
{
	if (m->n == m->cap) {
		size_t c = m->cap ? m->cap * 2 : 1024;
		uint32_t *p = realloc(m->ids, c * sizeof(*p));

		if (p == NULL)
			return -1;
		m->ids = p;
		m->cap = c;
	}
	m->ids[m->n++] = id;
	return 0;
}

/*
 * The interface id of every packet record of a pcapng file, in the order
 * libpcap returns the records. @return 1 for pcapng, 0 for another format
 * (every record is interface 0), -1 on error.
 */
static int
scan_ifaces(const char *path, struct ifmap *m)
{
	FILE *f = fopen(path, "rb");
	uint8_t hdr[12];
	bool swap = false;
	int rc = 1;

	if (f == NULL) {
		fprintf(stderr, "pcap-cmp: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fread(hdr, 1, 12, f) != 12 || rd32(hdr, false) != BT_SHB) {
		fclose(f);
		return 0;
	}
	rewind(f);
	for (;;) {
		uint8_t body[12];
		uint32_t type, len;

		if (fread(hdr, 1, 8, f) != 8)
			break; /* end of file (libpcap reports damage itself) */
		type = rd32(hdr, false);
		if (type == BT_SHB) {
			uint32_t magic;

			if (fread(body, 1, 4, f) != 4)
				break;
			magic = rd32(body, false);
			swap = magic != 0x1A2B3C4Du;
			if (fseek(f, -4, SEEK_CUR) != 0)
				break;
		} else if (swap) {
			type = __builtin_bswap32(type);
		}
		len = rd32(hdr + 4, swap);
		if (len < 12 || len % 4 != 0)
			break;
		if (type == BT_EPB || type == BT_PB || type == BT_SPB) {
			uint32_t id = 0;

			if (type != BT_SPB) {
				if (fread(body, 1, 4, f) != 4)
					break;
				id = type == BT_EPB ? rd32(body, swap) : rd16(body, swap);
				if (fseek(f, -4, SEEK_CUR) != 0)
					break;
			}
			if (ifmap_add(m, id) < 0) {
				rc = -1;
				break;
			}
		}
		if (fseek(f, (long)len - 8, SEEK_CUR) != 0)
			break;
	}
	fclose(f);
	return rc;
}

/* The instant of a record in ns: a fraction >= 1 s (damaged inputs) counts
 * as the same instant whichever way a writer normalises it. */
static int64_t
ts_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000000 + (int64_t)tv->tv_usec;
}

static pcap_t *
open_file(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(
		path, PCAP_TSTAMP_PRECISION_NANO, err);

	if (p == NULL)
		fprintf(stderr, "pcap-cmp: %s: %s\n", path, err);
	return p;
}

/* Next record of p (skipping records of other interfaces when m is set).
 * @return 1 record, 0 end, -1 error. */
static int
next_rec(pcap_t *p, const char *path, const struct ifmap *m, long iface, size_t *idx,
	 struct pcap_pkthdr **h, const u_char **d)
{
	for (;;) {
		int r = pcap_next_ex(p, h, d);

		if (r == PCAP_ERROR_BREAK)
			return 0;
		if (r < 0) {
			fprintf(stderr, "pcap-cmp: %s: %s\n", path, pcap_geterr(p));
			return -1;
		}
		if (r == 0)
			continue;
		(*idx)++;
		if (iface < 0)
			return 1;
		if (m->ids == NULL) {
			if (iface == 0)
				return 1;
			continue;
		}
		if (*idx - 1 < m->n && m->ids[*idx - 1] == (uint32_t)iface)
			return 1;
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: pcap-cmp [--no-ts|--usec] [--snap N] [--no-linktype] "
			"[--iface N] [-q] A B\n"
			"       pcap-cmp --count [--iface N] A\n"
			"exit: 0 equal, 1 different, 2 error\n");
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "no-ts", no_argument, NULL, 't' },
		{ "no-linktype", no_argument, NULL, 'l' },
		{ "usec", no_argument, NULL, 'u' },
		{ "snap", required_argument, NULL, 's' },
		{ "iface", required_argument, NULL, 'i' },
		{ "count", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t ts_div = 1;
	unsigned long snap = 0;
	bool no_ts = false, no_lt = false, count = false, quiet = false;
	long iface = -1;
	struct ifmap map = { 0 };
	pcap_t *a, *b = NULL;
	uint64_t na = 0, nb = 0;
	size_t ia = 0, ib = 0;
	int c, rc = 0;
	bool diff_shown = false;

	while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
		char *end;

		switch (c) {
		case 't': no_ts = true; break;
		case 'l': no_lt = true; break;
		case 'u': ts_div = 1000; break;
		case 's':
			errno = 0;
			snap = strtoul(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || snap == 0) {
				fprintf(stderr, "pcap-cmp: bad --snap '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n': count = true; break;
		case 'q': quiet = true; break;
		case 'i':
			errno = 0;
			iface = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || iface < 0) {
				fprintf(stderr, "pcap-cmp: bad --iface '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (argc - optind != (count ? 1 : 2)) {
		usage();
		return 2;
	}
	if (iface >= 0 && scan_ifaces(argv[optind], &map) < 0)
		return 2;
	a = open_file(argv[optind]);
	if (a == NULL)
		return 2;
	if (count) {
		struct pcap_pkthdr *h;
		const u_char *d;
		int r;

		while ((r = next_rec(a, argv[optind], &map, iface, &ia, &h, &d)) == 1)
			na++;
		pcap_close(a);
		free(map.ids);
		if (r < 0)
			return 2;
		printf("%" PRIu64 "\n", na);
		return 0;
	}
	b = open_file(argv[optind + 1]);
	if (b == NULL) {
		pcap_close(a);
		return 2;
	}
	if (!no_lt && pcap_datalink(a) != pcap_datalink(b)) {
		printf("link types differ: %s vs %s\n",
		       pcap_datalink_val_to_name(pcap_datalink(a)) ?: "?",
		       pcap_datalink_val_to_name(pcap_datalink(b)) ?: "?");
		rc = 1;
		diff_shown = true;
	}
	for (;;) {
		struct pcap_pkthdr *ha, *hb;
		const u_char *da, *db;
		int ra = next_rec(a, argv[optind], &map, iface, &ia, &ha, &da);
		int rb = next_rec(b, argv[optind + 1], NULL, -1, &ib, &hb, &db);
		const char *what = NULL;

		if (ra < 0 || rb < 0) {
			rc = 2;
			break;
		}
		na += (uint64_t)ra;
		nb += (uint64_t)rb;
		if (ra == 0 || rb == 0) {
			/* count what remains of the longer file */
			while (ra == 1 && (ra = next_rec(a, argv[optind], &map, iface,
							 &ia, &ha, &da)) == 1)
				na++;
			while (rb == 1 && (rb = next_rec(b, argv[optind + 1], NULL, -1,
							 &ib, &hb, &db)) == 1)
				nb++;
			if (ra < 0 || rb < 0)
				rc = 2;
			else if (na != nb) {
				if (!diff_shown)
					printf("record %" PRIu64 ": only in %s\n",
					       (na < nb ? na : nb) + 1,
					       na > nb ? argv[optind] : argv[optind + 1]);
				rc = 1;
			}
			break;
		}
		if (snap != 0 && hb->caplen > snap)
			hb->caplen = (bpf_u_int32)
				snap; /* libpcap's header copy: ours to change */
		if (!no_ts && ts_ns(&ha->ts) / ts_div != ts_ns(&hb->ts) / ts_div)
			what = "timestamp";
		else if (ha->caplen != hb->caplen)
			what = "caplen";
		else if (ha->len != hb->len)
			what = "len";
		else if (memcmp(da, db, ha->caplen) != 0)
			what = "bytes";
		if (what != NULL) {
			if (!diff_shown)
				printf("record %" PRIu64
				       ": %s differ (ts %ld.%09ld vs %ld.%09ld, "
				       "caplen %u vs %u, len %u vs %u)\n",
				       na, what, (long)ha->ts.tv_sec,
				       (long)ha->ts.tv_usec, (long)hb->ts.tv_sec,
				       (long)hb->ts.tv_usec, ha->caplen, hb->caplen,
				       ha->len, hb->len);
			diff_shown = true;
			rc = 1;
		}
	}
	if (rc != 2 && (!quiet || rc != 0))
		printf("%s: %" PRIu64 " records, %s: %" PRIu64 " records: %s\n",
		       argv[optind], na, argv[optind + 1], nb,
		       rc == 0 ? "equal" : "DIFFERENT");
	pcap_close(a);
	pcap_close(b);
	free(map.ids);
	return rc;
}
