/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow-first-N: capture only the first N packets of every flow, the way
 * Arkime and n2disk users cut capture volume while keeping every
 * session's handshake and first payload.
 *
 * A flow is the 5-tuple (addresses, ports, IP protocol), bidirectional by
 * default: both directions of a connection are one flow and share the N
 * (add "uni" to count each direction apart). Packets without ports (ICMP,
 * later fragments, other protocols) are flows of (addresses, protocol)
 * with ports 0. Packets that are not IP, or whose IP header is truncated,
 * are not flows: they are always captured (counted as "other"). When the
 * flow table is full, packets of untracked flows are captured too (fail
 * open, counted as "untracked").
 *
 * --kernel-arg: "N" or "n=N,uni,top=K" (defaults: N=10, bidirectional,
 * K=10 flows listed in the report).
 *
 * An ordered kernel (gcap_kernel_order(), see gcap_kern_entry.h): the GPU
 * runs the packets of one flow in arrival order, as the cpu executor does,
 * so the first N are the same packets on both, batch or no batch.
 */
#include <gpucap/gcap_kernel.h>

#define FF_SLOTS (1u << 18)

struct ff_tuple {
	uint8_t a[16], b[16]; /* endpoint addresses (a <= b when bidirectional) */
	uint16_t pa, pb;      /* their ports */
	uint8_t proto;
	uint8_t version;
	uint8_t pad[2];
};

struct gcap_kstate {
	uint64_t n;   /* packets captured per flow */
	uint32_t uni; /* 1: directions are separate flows */
	uint32_t top;
	uint64_t packets;   /* flow packets seen */
	uint64_t captured;  /* flow packets captured */
	uint64_t other;     /* not IP: captured */
	uint64_t untracked; /* table full: captured */
	GCAP_HASH_DECLARE(flows, FF_SLOTS);
	uint64_t pkts[FF_SLOTS];
	struct ff_tuple tuple[FF_SLOTS];
};

/* Canonical tuple of a parsed packet. */
GCAP_DEV void
ff_tuple_of(const struct gcap_parsed *p, bool uni, struct ff_tuple *t)
{
	bool swap = false;
	if (!uni) {
		int c = 0;
		for (int i = 0; i < 16 && c == 0; i++)
			c = (int)p->src[i] - (int)p->dst[i];
		swap = c > 0 || (c == 0 && p->sport > p->dport);
	}
	for (int i = 0; i < 16; i++) {
		t->a[i] = swap ? p->dst[i] : p->src[i];
		t->b[i] = swap ? p->src[i] : p->dst[i];
	}
	t->pa = swap ? p->dport : p->sport;
	t->pb = swap ? p->sport : p->dport;
	t->proto = p->l4_proto;
	t->version = p->ip_version;
	t->pad[0] = t->pad[1] = 0;
}

/* The flow key of a packet; false when it is not IP (not a flow). */
GCAP_DEV bool
ff_key(const struct gcap_kpkt *pkt, const struct gcap_kstate *st, struct ff_tuple *t,
       struct gcap_hkey *k)
{
	struct gcap_parsed p;
	gcap_parse(pkt, &p);
	if (!(p.flags & (GCAP_PF_IPV4 | GCAP_PF_IPV6)))
		return false;
	ff_tuple_of(&p, st->uni != 0, t);
	uint64_t h1 = gcap_hash_bytes(t, (uint32_t)sizeof(*t), 0);
	uint64_t h2 = gcap_hash_bytes(t, (uint32_t)sizeof(*t), 0x9e3779b97f4a7c15ull);
	k->w[0] = (uint32_t)h1;
	k->w[1] = (uint32_t)(h1 >> 32);
	k->w[2] = (uint32_t)h2;
	k->w[3] = (uint32_t)(h2 >> 32);
	return true;
}

/* Ordered kernel: the packets of a flow are counted in arrival order, so
 * the first N are the same packets on the GPU as on the CPU. A flow that
 * already has N packets drops every further one whatever the order (its
 * count only grows): those packets need no order and run in parallel. */
GCAP_KERNEL uint64_t
gcap_kernel_order(const struct gcap_kpkt *pkt, const struct gcap_kstate *st)
{
	struct ff_tuple t;
	struct gcap_hkey k;
	if (!ff_key(pkt, st, &t, &k))
		return GCAP_ORDER_NONE;
	int32_t s = gcap_htab_find(&st->flows, &k);
	if (s >= 0 && gcap_atomic_load_u64(&st->pkts[s]) >= st->n)
		return GCAP_ORDER_NONE;
	return ((uint64_t)k.w[1] << 32 | k.w[0]) & ~1ull;
}

GCAP_KERNEL uint32_t
gcap_kernel(const struct gcap_kpkt *pkt, struct gcap_kstate *st)
{
	struct ff_tuple t;
	struct gcap_hkey k;
	if (!ff_key(pkt, st, &t, &k)) {
		gcap_atomic_add_u64(&st->other, 1);
		return GCAP_CAPTURE;
	}
	gcap_atomic_add_u64(&st->packets, 1);
	bool inserted;
	int32_t s = gcap_htab_insert(&st->flows, &k, &inserted);
	if (s < 0) {
		gcap_atomic_add_u64(&st->untracked, 1);
		return GCAP_CAPTURE;
	}
	if (inserted)
		st->tuple[s] = t;
	if (gcap_atomic_add_u64(&st->pkts[s], 1) >= st->n)
		return GCAP_DROP;
	gcap_atomic_add_u64(&st->captured, 1);
	return GCAP_CAPTURE;
}

#ifndef GCAP_DEVICE
#include <stdlib.h>

int
gcap_kernel_init(struct gcap_kstate *st, const char *args)
{
	st->n = 10;
	st->top = 10;
	if (!args)
		return 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", args);
	for (char *t = strtok(buf, ", "); t; t = strtok(NULL, ", ")) {
		char *e;
		const char *v = t;
		if (strcmp(t, "uni") == 0) {
			st->uni = 1;
			continue;
		}
		if (strcmp(t, "bi") == 0) {
			st->uni = 0;
			continue;
		}
		bool top = strncmp(t, "top=", 4) == 0;
		if (top)
			v = t + 4;
		else if (strncmp(t, "n=", 2) == 0)
			v = t + 2;
		unsigned long long x = strtoull(v, &e, 10);
		if (!*v || *e || *v == '-' || (top && x > FF_SLOTS))
			return gcap_kernel_error("bad argument '%s' "
						 "(N or n=N,uni,top=K)",
						 t);
		if (top)
			st->top = (uint32_t)x;
		else
			st->n = x;
	}
	return 0;
}

void
gcap_kernel_report(const struct gcap_kstate *st, struct gcap_json *j)
{
	gcap_json_key_u64(j, "n", st->n);
	gcap_json_key_str(j, "direction", st->uni ? "uni" : "bi");
	gcap_json_key_u64(j, "packets", st->packets);
	gcap_json_key_u64(j, "captured", st->captured);
	gcap_json_key_u64(j, "dropped", st->packets - st->captured - st->untracked);
	gcap_json_key_u64(j, "other", st->other);
	gcap_json_key_u64(j, "untracked", st->untracked);
	gcap_json_key_u64(j, "flows", st->flows.used);
	gcap_json_key_u64(j, "flows_full", st->flows.full);

	uint32_t *idx = malloc(sizeof(*idx) * (st->top ? st->top : 1));
	uint32_t n =
		idx ? gcap_hash_sorted(st->flows.slot, FF_SLOTS, st->pkts, idx, st->top) :
		      0;
	gcap_json_array_begin(j, "top");
	for (uint32_t i = 0; i < n; i++) {
		const struct ff_tuple *t = &st->tuple[idx[i]];
		gcap_json_object_begin(j, NULL);
		gcap_json_key_ip(j, "a", t->a, t->version);
		gcap_json_key_u64(j, "a_port", t->pa);
		gcap_json_key_ip(j, "b", t->b, t->version);
		gcap_json_key_u64(j, "b_port", t->pb);
		gcap_json_key_u64(j, "proto", t->proto);
		gcap_json_key_u64(j, "packets", st->pkts[idx[i]]);
		gcap_json_object_end(j);
	}
	gcap_json_array_end(j);
	free(idx);
}
#endif
