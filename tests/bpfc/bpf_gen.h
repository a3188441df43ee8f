/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the BPF differential tests (tests/bpfc/test_bpfc.c on the host
 * compiler, tests/gpu/test_gpu_bpf.c through the executors): the tcpdump
 * expressions, chosen so that every opcode libpcap emits is exercised, and
 * a generator of random programs that bpf_validate() accepts and libpcap's
 * bpf_filter() runs without aborting or looping, plus random packets.
 *
 * Everything is static (one test file includes it); the generator is a
 * fixed xorshift64* stream: the same seed gives the same programs and
 * packets in every test that draws them in the same order.
 */
#ifndef GCAP_TEST_BPF_GEN_H
#define GCAP_TEST_BPF_GEN_H

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

/* ---- tcpdump expressions ---- */

struct expr {
	int dlt;
	const char *e;
};

static const struct expr exprs[] = {
	{ DLT_EN10MB, "" },
	{ DLT_EN10MB, "ip" },
	{ DLT_EN10MB, "ip6" },
	{ DLT_EN10MB, "arp" },
	{ DLT_EN10MB, "tcp" },
	{ DLT_EN10MB, "udp" },
	{ DLT_EN10MB, "icmp" },
	{ DLT_EN10MB, "icmp6" },
	{ DLT_EN10MB, "tcp port 80" },
	{ DLT_EN10MB, "udp port 53" },
	{ DLT_EN10MB, "tcp port 80 or udp port 53" },
	{ DLT_EN10MB, "host 192.168.1.1" },
	{ DLT_EN10MB, "net 10.0.0.0/8" },
	{ DLT_EN10MB, "src net 192.168.0.0/16 and dst port 22" },
	{ DLT_EN10MB, "ip6 and tcp" },
	{ DLT_EN10MB, "vlan" },
	{ DLT_EN10MB, "vlan 100" },
	{ DLT_EN10MB, "vlan and tcp port 443" },
	{ DLT_EN10MB, "mpls" },
	{ DLT_EN10MB, "pppoes" },
	{ DLT_EN10MB, "tcp[tcpflags] & tcp-syn != 0" },
	{ DLT_EN10MB, "tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn" },
	{ DLT_EN10MB, "ip[0] & 0xf != 5" },
	{ DLT_EN10MB, "len > 100" },
	{ DLT_EN10MB, "len <= 64" },
	{ DLT_EN10MB, "greater 200" },
	{ DLT_EN10MB, "less 60" },
	{ DLT_EN10MB, "ether broadcast" },
	{ DLT_EN10MB, "ether multicast" },
	{ DLT_EN10MB, "ip multicast" },
	{ DLT_EN10MB, "ether host 00:11:22:33:44:55" },
	{ DLT_EN10MB, "ether proto 0x88cc" },
	{ DLT_EN10MB, "ip[2:2] > 576" },
	{ DLT_EN10MB, "ip[2:2] - ((ip[0]&0xf)<<2) - ((tcp[12]&0xf0)>>2) != 0" },
	{ DLT_EN10MB, "ip[2:2] / 4 > 100" },
	{ DLT_EN10MB, "ip[2:2] % 7 = 3" },
	{ DLT_EN10MB, "ip[2:2] * 3 > 1000" },
	{ DLT_EN10MB, "ip[8] ^ 0xff > 200" },
	{ DLT_EN10MB, "ip[1] | 0x3 = 3" },
	{ DLT_EN10MB, "ip[0] + ip[1] > 100" },
	{ DLT_EN10MB, "ip[0] - ip[9] < 60" },
	{ DLT_EN10MB, "ip[0] * ip[9] > 100" },
	{ DLT_EN10MB, "ip[2:2] / ip[1] > 3" }, /* ip[1] is often 0 */
	{ DLT_EN10MB, "ip[2:2] % ip[1] = 0" },
	{ DLT_EN10MB, "ip[0] & ip[1] != 0" },
	{ DLT_EN10MB, "ip[0] | ip[1] > 70" },
	{ DLT_EN10MB, "ip[0] ^ ip[8] > 10" },
	{ DLT_EN10MB, "ip[2:2] << ip[8] > 0" }, /* TTL >= 32: shift gives 0 */
	{ DLT_EN10MB, "ip[2:2] >> ip[9] > 0" },
	{ DLT_EN10MB, "-ip[0] > 100" },
	{ DLT_EN10MB, "ip[0] > ip[1]" },
	{ DLT_EN10MB, "ip[0] >= ip[1]" },
	{ DLT_EN10MB, "ip[0] < ip[1]" },
	{ DLT_EN10MB, "ip[8] == ip[9]" },
	{ DLT_EN10MB, "tcp[0:4] = 0x12345678" },
	{ DLT_EN10MB, "udp[8:2] = 0x1234" },
	{ DLT_EN10MB, "tcp[13] = 2" },
	{ DLT_EN10MB, "ether[0:4] = 0xffffffff" },
	{ DLT_EN10MB, "ip6 protochain 6" },
	{ DLT_EN10MB, "ip6 protochain 58" },
	{ DLT_EN10MB, "ip[0] >> 4 = 4" },
	{ DLT_EN10MB, "ip[0] << 2 > 20" },
	{ DLT_EN10MB, "udp[4:2] - 8 != len - 42" },
	{ DLT_EN10MB, "tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420" },
	{ DLT_EN10MB, "len - ip[2:2] > 14" },
	{ DLT_EN10MB, "ip[2:2] + 5 > 1 + len" },
	{ DLT_EN10MB, "ip[ip[0] & 0xf] + ip[ip[1] & 7] > 1" },
	{ DLT_EN10MB,
	  "(ip[0] + ip[1]) * (ip[2] + ip[3]) > (ip[4] - ip[5]) / (ip[6] + 1)" },
	{ DLT_EN10MB, "ether[len - 4] = 0" },
	{ DLT_EN10MB, "icmp[icmptype] = icmp-echo" },
	{ DLT_EN10MB, "portrange 1-1023" },
	{ DLT_EN10MB, "tcp dst portrange 8000-9000" },
	{ DLT_EN10MB, "ip[6:2] & 0x1fff != 0" },
	{ DLT_EN10MB, "not ip and not arp and not ip6" },
	{ DLT_EN10MB, "llc" },
	{ DLT_EN10MB, "stp" },
	{ DLT_EN10MB, "ip6[6] = 58" },
	{ DLT_EN10MB, "ip proto 47 or ip6 proto 47" },
	{ DLT_EN10MB, "ip[0] & 0x40 != 0 and ip[0] & ip[1] != 0" },
	{ DLT_LINUX_SLL, "ip" },
	{ DLT_LINUX_SLL, "ip6" },
	{ DLT_LINUX_SLL, "arp" },
	{ DLT_LINUX_SLL, "tcp port 80" },
	{ DLT_LINUX_SLL, "udp or icmp" },
	{ DLT_LINUX_SLL, "inbound" },
	{ DLT_LINUX_SLL, "len > 100" },
	{ DLT_RAW, "ip" },
	{ DLT_RAW, "ip6" },
	{ DLT_RAW, "tcp" },
	{ DLT_RAW, "udp port 53" },
	{ DLT_RAW, "icmp or icmp6" },
	{ DLT_NULL, "ip" },
	{ DLT_NULL, "ip6" },
	{ DLT_NULL, "tcp" },
	{ DLT_NULL, "udp" },
	{ DLT_PPP, "ip" },
	{ DLT_PPP, "tcp or udp" },
	{ DLT_C_HDLC, "ip" },
	{ DLT_C_HDLC, "tcp" },
	{ DLT_IEEE802_11_RADIO, "wlan type mgt" },
	{ DLT_IEEE802_11_RADIO, "wlan type data" },
	{ DLT_IEEE802_11_RADIO, "wlan subtype beacon" },
	{ DLT_IEEE802_11_RADIO, "wlan host 00:11:22:33:44:55" },
	{ DLT_IEEE802_11_RADIO, "ip" },
};

#define NEXPRS (sizeof(exprs) / sizeof(exprs[0]))

/* ---- random programs ---- */

static uint64_t rng_state;

static inline uint32_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static inline uint32_t
pick(const uint32_t *v, unsigned n)
{
	return v[rnd() % n];
}

/* constants that hit the edges: small offsets, lengths, shift counts,
 * values that overflow X + k */
static inline uint32_t
rnd_k(void)
{
	static const uint32_t edge[] = { 0,          1,          2,          3,
					 4,          31,         32,         33,
					 63,         64,         0x7fffffff, 0x80000000,
					 0xfffffffc, 0xfffffffe, 0xffffffff, 0xffffefff };

	switch (rnd() % 4) {
	case 0: return rnd() % 16;
	case 1: return rnd() % 100;
	case 2: return pick(edge, sizeof(edge) / sizeof(edge[0]));
	default: return rnd();
	}
}

/* offsets: mostly near the end of short packets, sometimes far away,
 * overflowing X + k, or in the Linux ancillary area (k >= 0xfffff000, which
 * bpf_filter() without aux data treats as past the packet) */
static inline uint32_t
rnd_off(int ind)
{
	static const uint32_t far[] = { 0xffffefff, 0xffffeffe, 0xffffeffc, 0x7fffffff,
					65535,      65536,      0xfffffffc, 0xfffffffd,
					0xffffffff, 0xfffff030 };

	(void)ind;
	return rnd() % 10 == 0 ? pick(far, sizeof(far) / sizeof(far[0])) : rnd() % 100;
}

/* a random program bpf_validate() accepts and bpf_filter() runs without
 * aborting or looping: scratch words are read only after the prologue wrote
 * them (libpcap 1.10 leaves them uninitialised), jumps only go forward, no
 * opcode bpf_filter() aborts on (LD|H|LEN and the like) */
static inline unsigned
random_prog(struct bpf_insn *out, unsigned max)
{
	static const uint16_t alu_k[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_MOD,
					  BPF_AND, BPF_OR,  BPF_XOR, BPF_LSH, BPF_RSH };
	static const uint16_t jmp[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };
	unsigned body = 4 + rnd() % 40, n = 0, written = 0, total;

	/* prologue: write some scratch words */
	for (unsigned k = 0; k < BPF_MEMWORDS; k++) {
		if (rnd() % 2 == 0)
			continue;
		out[n++] = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_IMM, rnd_k());
		out[n++] = (struct bpf_insn)BPF_STMT(BPF_ST, k);
		written |= 1u << k;
	}
	if (written == 0) {
		out[n++] = (struct bpf_insn)BPF_STMT(BPF_STX, 5);
		written = 1u << 5;
	}
	total = n + body + 2;
	ck_assert_uint_le(total, max);
	for (unsigned i = n; i < n + body; i++) {
		unsigned left = total - i - 1; /* instructions after this one */
		struct bpf_insn *in = &out[i];
		unsigned mk;

		do
			mk = rnd() % BPF_MEMWORDS;
		while (!(written & (1u << mk)));
		switch (rnd() % 24) {
		case 0:
			*in = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							rnd_off(0));
			break;
		case 1:
			*in = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_H | BPF_ABS,
							rnd_off(0));
			break;
		case 2:
			*in = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_B | BPF_ABS,
							rnd_off(0));
			break;
		case 3:
			*in = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_W | BPF_IND,
							rnd_off(1));
			break;
		case 4:
			*in = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_H | BPF_IND,
							rnd_off(1));
			break;
		case 5:
			*in = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_B | BPF_IND,
							rnd_off(1));
			break;
		case 6:
			*in = (struct bpf_insn)BPF_STMT(BPF_LDX | BPF_MSH | BPF_B,
							rnd_off(1));
			break;
		case 7:
			*in = (struct bpf_insn)BPF_STMT(BPF_LDX | BPF_IMM, rnd_k());
			break;
		case 8:
			*in = (struct bpf_insn)BPF_STMT(rnd() % 2 ?
								BPF_LD | BPF_W | BPF_LEN :
								BPF_LDX | BPF_W | BPF_LEN,
							0);
			break;
		case 9: *in = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_IMM, rnd_k()); break;
		case 10:
			*in = (struct bpf_insn)BPF_STMT(
				rnd() % 2 ? BPF_LD | BPF_MEM : BPF_LDX | BPF_MEM, mk);
			break;
		case 11:
			*in = (struct bpf_insn)BPF_STMT(rnd() % 2 ? BPF_ST : BPF_STX, mk);
			break;
		case 12:
		case 13: {
			uint16_t op = alu_k[rnd() % 10];
			uint32_t k = rnd_k();

			if ((op == BPF_DIV || op == BPF_MOD) && k == 0)
				k = 3;
			if (op == BPF_LSH || op == BPF_RSH)
				k = rnd() % 40; /* >= 32 accepted by libpcap 1.10 */
			*in = (struct bpf_insn)BPF_STMT(BPF_ALU | op | BPF_K, k);
			break;
		}
		case 14:
		case 15:
			*in = (struct bpf_insn)BPF_STMT(
				BPF_ALU | alu_k[rnd() % 10] | BPF_X, 0);
			break;
		case 16: *in = (struct bpf_insn)BPF_STMT(BPF_ALU | BPF_NEG, 0); break;
		case 17:
			*in = (struct bpf_insn)BPF_STMT(
				BPF_MISC | (rnd() % 2 ? BPF_TAX : BPF_TXA), 0);
			break;
		case 18:
		case 19:
		case 20: {
			unsigned jt = rnd() % (left < 8 ? left : 8);
			unsigned jf = rnd() % (left < 8 ? left : 8);

			*in = (struct bpf_insn)BPF_JUMP(
				BPF_JMP | jmp[rnd() % 4] | (rnd() % 2 ? BPF_X : BPF_K),
				rnd() % 3 ? rnd() % 8 : rnd_k(), jt, jf);
			break;
		}
		case 21:
			*in = (struct bpf_insn)BPF_STMT(BPF_JMP | BPF_JA,
							rnd() % (left < 6 ? left : 6));
			break;
		case 22: *in = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_K, rnd_k()); break;
		default: *in = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_A, 0); break;
		}
	}
	out[total - 2] = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_A, 0);
	out[total - 1] = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_K, rnd_k());
	return total;
}

/* Longest program random_prog() writes: a 32-instruction prologue, a body
 * of at most 43, two RETs. */
#define RANDOM_PROG_MAX 128

/* A random packet: short, many zero bytes (so MSH and IND stay near the
 * end of the capture), sometimes a wire length far above the capture.
 * Returns exactly *caplen bytes (at least one allocated), malloc'd. */
static inline unsigned char *
random_pkt(uint32_t *caplen, uint32_t *wirelen)
{
	unsigned char *d;

	*caplen = rnd() % 100;
	*wirelen = rnd() % 4 ? *caplen + rnd() % 64 : rnd();
	d = malloc(*caplen ? *caplen : 1);
	ck_assert_ptr_nonnull(d);
	for (unsigned b = 0; b < *caplen; b++)
		d[b] = rnd() % 3 ? rnd() % 4 : (uint8_t)rnd();
	return d;
}

static int
bpf_gen_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Call fn on every file of dir (not dot files), in name order.
 * @return 0, or -1 when dir cannot be opened. */
static inline int
bpf_gen_each_file(const char *dir, void (*fn)(const char *path))
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		ck_assert_ptr_nonnull(names);
		ck_assert(asprintf(&names[n], "%s/%s", dir, e->d_name) > 0);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), bpf_gen_cmp_str);
	for (size_t i = 0; i < n; i++) {
		fn(names[i]);
		free(names[i]);
	}
	free(names);
	return 0;
}

/* ---- protochain: packets whose header chains libpcap's loop follows ---- */

/* The expressions whose programs loop (backward jumps). */
static const char *const protochain_exprs[] = {
	"ip6 protochain 17", "ip6 protochain 6", "ip6 protochain 58",
	"ip protochain 17",  "ip protochain 6",  "protochain 17",
};
#define NPROTOCHAIN_EXPRS (sizeof(protochain_exprs) / sizeof(protochain_exprs[0]))

/* Frames these chains fit in (a jumbo frame). */
#define PROTOCHAIN_FRAME 9000u
/* The longest IPv4 chain: libpcap takes X from the AH length byte
 * ((len + 2) * 4, not added to X), so its chain can reach 1,028 bytes. */
#define PROTOCHAIN_V4_MAX 252u
/* The longest IPv6 chain of 8-byte extension headers in a frame. */
#define PROTOCHAIN_V6_MAX ((PROTOCHAIN_FRAME - 14u - 40u - 8u) / 8u)

/*
 * An Ethernet frame for protochain: IPv4 (v6 == 0) or IPv6, nhdr headers
 * its loop follows, then a header of protocol `last` (8 bytes). IPv6:
 * hop-by-hop, routing, fragment and destination options in turn, 8 bytes
 * each (nhdr <= PROTOCHAIN_V6_MAX). IPv4: AH headers where libpcap's loop
 * looks for them, 4 bytes apart from the IP header's end (nhdr <=
 * PROTOCHAIN_V4_MAX). self_loop: one IPv4 AH, its next header AH, whose
 * length sends the loop back to itself (bpf_filter() never returns on
 * it). Writes into b (at
 * least PROTOCHAIN_FRAME bytes), returns the frame's length.
 */
static inline uint32_t
protochain_pkt(uint8_t *b, int v6, unsigned nhdr, uint8_t last, int self_loop)
{
	static const uint8_t v6types[] = { 0, 43, 44, 60 };
	uint32_t x, len;

	memset(b, 0, PROTOCHAIN_FRAME);
	memset(b, 0xff, 6); /* destination */
	b[6] = 0x02;        /* source, locally administered */
	b[12] = v6 ? 0x86 : 0x08;
	b[13] = v6 ? 0xdd : 0x00;
	if (v6) {
		b[14] = 0x60;
		b[21] = 64; /* hop limit */
		x = 40;
		b[20] = nhdr ? v6types[0] : last;
		for (unsigned k = 0; k < nhdr; k++, x += 8) {
			b[14 + x] = k + 1 < nhdr ? v6types[(k + 1) % 4] : last;
			b[14 + x + 1] = 0; /* (0 + 1) * 8 bytes */
		}
		len = 14 + x + 8;
		b[18] = (uint8_t)((len - 54) >> 8); /* payload length */
		b[19] = (uint8_t)(len - 54);
		return len;
	}
	b[14] = 0x45;
	b[22] = 64; /* TTL */
	b[23] = (nhdr || self_loop) ? 51 : last;
	if (self_loop) {
		b[14 + 20] = 51; /* next: AH, */
		b[14 + 21] = 3;  /* at (3 + 2) * 4 = 20: this one */
		len = 14 + 20 + 24;
	} else {
		x = 20;
		for (unsigned k = 0; k < nhdr; k++, x += 4) {
			b[14 + x] = k + 1 < nhdr ? 51 : last;
			b[14 + x + 1] = (uint8_t)((x + 4) / 4 - 2);
		}
		len = 14 + x + 8;
	}
	b[16] = (uint8_t)((len - 14) >> 8); /* total length */
	b[17] = (uint8_t)(len - 14);
	return len;
}

#endif
