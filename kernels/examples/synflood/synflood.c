/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SYN flood watch: per server address, count the SYNs sent to it (SYN set,
 * ACK clear) and the SYN-ACKs it sent back (SYN and ACK set; counted for
 * the SYN-ACK's source address, the server). Once a server has received
 * more than THRESHOLD SYNs, its further SYNs are captured: the first
 * THRESHOLD SYNs of every server are dropped, the rest are kept.
 *
 * --kernel-arg: "THRESHOLD" or "threshold=T,top=N" (defaults 100 and 20).
 * Addresses are keyed as 16 bytes: IPv6 as is, IPv4 as ::ffff:a.b.c.d.
 * An ordered kernel: on the GPU, too, the SYNs past the threshold are the
 * same packets as on the CPU.
 */
#include <gpucap/gcap_kernel.h>

#define SF_SLOTS 65536u

struct gcap_kstate {
	uint64_t threshold;
	uint32_t top;
	uint32_t reserved;
	uint64_t syn;      /* SYNs seen */
	uint64_t synack;   /* SYN-ACKs seen */
	uint64_t captured; /* SYNs captured (past the threshold) */
	GCAP_HASH_DECLARE(srv, SF_SLOTS);
	uint64_t srv_syn[SF_SLOTS];
	uint64_t srv_synack[SF_SLOTS];
};

GCAP_DEV void
sf_key(const struct gcap_parsed *p, const uint8_t *a, struct gcap_hkey *k)
{
	uint8_t b[16];
	if (p->ip_version == 4) {
		for (int i = 0; i < 10; i++)
			b[i] = 0;
		b[10] = 0xff;
		b[11] = 0xff;
		for (int i = 0; i < 4; i++)
			b[12 + i] = a[i];
	} else {
		for (int i = 0; i < 16; i++)
			b[i] = a[i];
	}
	gcap_hkey_set(k, b, 16);
}

/* Ordered kernel (gcap_kern_entry.h): a server's SYNs are counted in arrival
 * order, so the SYNs past the threshold are the same packets on the GPU as
 * on the CPU. SYN-ACKs and other packets decide nothing: no order; nor do
 * SYNs to a server already at the threshold (every further one is
 * captured: its count only grows). */
GCAP_KERNEL uint64_t
gcap_kernel_order(const struct gcap_kpkt *pkt, const struct gcap_kstate *st)
{
	struct gcap_parsed p;
	gcap_parse(pkt, &p);
	if (!(p.flags & GCAP_PF_TCP) ||
	    (p.tcp_flags & (GCAP_TCP_SYN | GCAP_TCP_ACK)) != GCAP_TCP_SYN)
		return GCAP_ORDER_NONE;
	struct gcap_hkey k;
	sf_key(&p, p.dst, &k);
	int32_t s = gcap_htab_find(&st->srv, &k);
	if (s >= 0 && gcap_atomic_load_u64(&st->srv_syn[s]) >= st->threshold)
		return GCAP_ORDER_NONE;
	return ((uint64_t)(k.w[0] ^ k.w[2]) << 32 | (k.w[1] ^ k.w[3])) & ~1ull;
}

GCAP_KERNEL uint32_t
gcap_kernel(const struct gcap_kpkt *pkt, struct gcap_kstate *st)
{
	struct gcap_parsed p;
	gcap_parse(pkt, &p);
	if (!(p.flags & GCAP_PF_TCP) || !(p.tcp_flags & GCAP_TCP_SYN))
		return GCAP_DROP;
	bool synack = (p.tcp_flags & GCAP_TCP_ACK) != 0;
	struct gcap_hkey k;
	sf_key(&p, synack ? p.src : p.dst, &k);
	int32_t s = gcap_htab_insert(&st->srv, &k, NULL);
	if (synack) {
		gcap_atomic_add_u64(&st->synack, 1);
		if (s >= 0)
			gcap_atomic_add_u64(&st->srv_synack[s], 1);
		return GCAP_DROP;
	}
	gcap_atomic_add_u64(&st->syn, 1);
	if (s < 0)
		return GCAP_DROP; /* table full: counted in srv.full */
	uint64_t n = gcap_atomic_add_u64(&st->srv_syn[s], 1) + 1u;
	if (n <= st->threshold)
		return GCAP_DROP;
	gcap_atomic_add_u64(&st->captured, 1);
	return GCAP_CAPTURE;
}

#ifndef GCAP_DEVICE
#include <stdlib.h>

static int
parse_u(const char *s, uint64_t max, uint64_t *out)
{
	char *e;
	if (!*s)
		return -1;
	unsigned long long v = strtoull(s, &e, 10);
	if (*e || v > max || *s == '-')
		return -1;
	*out = v;
	return 0;
}

int
gcap_kernel_init(struct gcap_kstate *st, const char *args)
{
	st->threshold = 100;
	st->top = 20;
	if (!args)
		return 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", args);
	for (char *t = strtok(buf, ", "); t; t = strtok(NULL, ", ")) {
		uint64_t v;
		if (strncmp(t, "threshold=", 10) == 0) {
			if (parse_u(t + 10, UINT64_MAX - 1, &st->threshold))
				return gcap_kernel_error("bad threshold: %s", t + 10);
		} else if (strncmp(t, "top=", 4) == 0) {
			if (parse_u(t + 4, SF_SLOTS, &v))
				return gcap_kernel_error("bad top: %s", t + 4);
			st->top = (uint32_t)v;
		} else if (parse_u(t, UINT64_MAX - 1, &st->threshold) != 0) {
			return gcap_kernel_error("bad argument: %s "
						 "(THRESHOLD or threshold=T,top=N)",
						 t);
		}
	}
	return 0;
}

void
gcap_kernel_report(const struct gcap_kstate *st, struct gcap_json *j)
{
	gcap_json_key_u64(j, "threshold", st->threshold);
	gcap_json_key_u64(j, "syn", st->syn);
	gcap_json_key_u64(j, "synack", st->synack);
	gcap_json_key_u64(j, "captured", st->captured);
	gcap_json_key_u64(j, "servers", st->srv.used);
	gcap_json_key_u64(j, "servers_full", st->srv.full);
	uint64_t over = 0;
	for (uint32_t i = 0; i < SF_SLOTS; i++)
		over += gcap_hslot_used(&st->srv.slot[i]) &&
			st->srv_syn[i] > st->threshold;
	gcap_json_key_u64(j, "servers_over_threshold", over);

	uint32_t *idx = malloc(sizeof(*idx) * (st->top ? st->top : 1));
	uint32_t n = idx ? gcap_hash_sorted(st->srv.slot, SF_SLOTS, st->srv_syn, idx,
					    st->top) :
			   0;
	gcap_json_array_begin(j, "top");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = idx[i];
		const uint8_t *a = (const uint8_t *)st->srv.slot[s].key;
		gcap_json_object_begin(j, NULL);
		static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0,    0,
						   0, 0, 0, 0, 0xff, 0xff };
		if (memcmp(a, v4pfx, 12) == 0)
			gcap_json_key_ip(j, "addr", a + 12, 4);
		else
			gcap_json_key_ip(j, "addr", a, 6);
		gcap_json_key_u64(j, "syn", st->srv_syn[s]);
		gcap_json_key_u64(j, "synack", st->srv_synack[s]);
		gcap_json_key_bool(j, "over_threshold", st->srv_syn[s] > st->threshold);
		gcap_json_object_end(j);
	}
	gcap_json_array_end(j);
	free(idx);
}
#endif
