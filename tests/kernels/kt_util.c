/* SPDX-License-Identifier: BSD-3-Clause */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kt_util.h"

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

uint32_t
kt_build(const struct kt_spec *s, uint8_t *b)
{
	uint32_t o = 12;
	memset(b, 0, 2048);
	memcpy(b, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
	for (int i = 0; i < s->nvlan; i++) {
		put16(b + o, s->tpid[i] ? s->tpid[i] : 0x8100);
		put16(b + o + 2, s->tci[i]);
		o += 4;
	}
	put16(b + o, s->ipv == 4 ? 0x0800 : s->ipv == 6 ? 0x86dd : s->ethertype);
	o += 2;
	if (s->ipv == 0) {
		memcpy(b + o, s->payload, s->plen);
		return o + s->plen;
	}

	uint32_t l3 = o, l4;
	uint8_t proto = s->proto;
	bool later = s->frag_off != 0;
	if (s->ipv == 4) {
		uint32_t ihl = 20 + (uint32_t)s->ip_optlen;
		b[o] = (uint8_t)(0x40 | (ihl / 4));
		put16(b + o + 6, (uint16_t)((s->mf ? 0x2000 : 0) | (s->frag_off / 8)));
		b[o + 8] = 64;
		b[o + 9] = proto;
		memcpy(b + o + 12, s->src, 4);
		memcpy(b + o + 16, s->dst, 4);
		if (s->ip_optlen) {
			/* router alert, then NOPs */
			memset(b + o + 20, 0x01, (size_t)s->ip_optlen);
			memcpy(b + o + 20, "\x94\x04\x00\x00", 4);
		}
		l4 = o + ihl;
	} else {
		b[o] = 0x60;
		b[o + 7] = 64;
		memcpy(b + o + 8, s->src, 16);
		memcpy(b + o + 24, s->dst, 16);
		uint8_t *nh = b + o + 6;
		uint32_t c = o + 40;
		for (int i = 0; i < s->next; i++) {
			*nh = s->ext[i];
			nh = b + c;
			if (s->ext[i] == 44) {
				put16(b + c + 2,
				      (uint16_t)(s->frag_off | (s->mf ? 1 : 0)));
				c += 8;
			} else if (s->ext[i] == 51) {
				b[c + 1] = 2; /* (2 + 2) * 4 = 16 bytes */
				c += 16;
			} else {
				b[c + 1] = 1; /* (1 + 1) * 8 = 16 bytes */
				b[c + 2] = 1; /* PadN */
				b[c + 3] = 12;
				c += 16;
			}
		}
		*nh = proto;
		l4 = c;
	}

	o = l4;
	if (!later) {
		switch (proto) {
		case 6: {
			uint32_t hl = 20 + (uint32_t)s->tcp_optlen;
			put16(b + o, s->sport);
			put16(b + o + 2, s->dport);
			memcpy(b + o + 4, "\x00\x00\x10\x00\x00\x00\x20\x00", 8);
			b[o + 12] = (uint8_t)((hl / 4) << 4);
			b[o + 13] = s->tcp_flags;
			put16(b + o + 14, 65535);
			memset(b + o + 20, 0x01, (size_t)s->tcp_optlen);
			o += hl;
			break;
		}
		case 17:
			put16(b + o, s->sport);
			put16(b + o + 2, s->dport);
			put16(b + o + 4, (uint16_t)(8 + s->plen));
			o += 8;
			break;
		case 1:
		case 58:
			b[o] = s->icmp_type;
			b[o + 1] = s->icmp_code;
			o += 8;
			break;
		default: break;
		}
	}
	if (s->plen)
		memcpy(b + o, s->payload, s->plen);
	o += s->plen;
	if (s->ipv == 4)
		put16(b + l3 + 2, (uint16_t)(o - l3));
	else
		put16(b + l3 + 4, (uint16_t)(o - l3 - 40));
	return o;
}

struct gcap_kpkt
kt_view(const uint8_t *d, uint32_t len)
{
	struct gcap_kpkt p;
	memset(&p, 0, sizeof(p));
	p.data = d;
	p.caplen = len;
	p.wirelen = len;
	return p;
}

uint8_t *
kt_guard_copy(const void *src, uint32_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t data_pages = ((size_t)len + (size_t)pg - 1) / (size_t)pg;
	size_t total = (data_pages + 1) * (size_t)pg;
	uint8_t *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mprotect(m + data_pages * (size_t)pg, (size_t)pg, PROT_NONE), 0);
	uint8_t *p = m + data_pages * (size_t)pg - len;
	if (len)
		memcpy(p, src, len);
	return p;
}

void
kt_guard_free(uint8_t *p, uint32_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t data_pages = ((size_t)len + (size_t)pg - 1) / (size_t)pg;
	uint8_t *m = p + len - data_pages * (size_t)pg;
	munmap(m, (data_pages + 1) * (size_t)pg);
}

uint32_t
kt_dns_query(const char *name, uint16_t id, uint8_t *out)
{
	uint32_t o = 12;
	memset(out, 0, 12);
	put16(out, id);
	put16(out + 2, 0x0100); /* RD */
	put16(out + 4, 1);      /* QDCOUNT */
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t n = dot ? (size_t)(dot - name) : strlen(name);
		out[o++] = (uint8_t)n;
		memcpy(out + o, name, n);
		o += (uint32_t)n;
		name += n + (dot ? 1 : 0);
	}
	out[o++] = 0;
	put16(out + o, 1);     /* A */
	put16(out + o + 2, 1); /* IN */
	return o + 4;
}

void
kt_parse(const uint8_t *d, uint32_t caplen, struct kt_flow *f)
{
	memset(f, 0, sizeof(*f));
	if (caplen < 14)
		return;
	uint32_t o = 12;
	uint16_t et = get16(d + o);
	int tags = 0;
	while ((et == 0x8100 || et == 0x88a8 || et == 0x9100) && tags < 4) {
		if (o + 6 > caplen)
			return;
		et = get16(d + o + 4);
		o += 4;
		tags++;
	}
	if (et == 0x8100 || et == 0x88a8 || et == 0x9100)
		return;
	o += 2;
	if (o >= caplen)
		return;
	uint32_t end; /* end of the IP datagram within the capture */
	uint32_t l4;
	uint8_t proto;
	if (et == 0x0800 && (d[o] >> 4) == 4) {
		uint32_t ihl = (d[o] & 15u) * 4u;
		if (ihl < 20 || o + ihl > caplen)
			return;
		uint32_t tot = get16(d + o + 2);
		end = tot == 0 ? caplen : o + (tot > ihl ? tot : ihl);
		f->ipv = 4;
		memcpy(f->src, d + o + 12, 4);
		memcpy(f->dst, d + o + 16, 4);
		proto = d[o + 9];
		f->later_frag = (get16(d + o + 6) & 0x1fff) != 0;
		l4 = o + ihl;
	} else if (et == 0x86dd && (d[o] >> 4) == 6) {
		if (o + 40 > caplen)
			return;
		uint32_t pl = get16(d + o + 4);
		end = pl == 0 ? caplen : o + 40 + pl;
		f->ipv = 6;
		memcpy(f->src, d + o + 8, 16);
		memcpy(f->dst, d + o + 24, 16);
		proto = d[o + 6];
		l4 = o + 40;
		for (int i = 0; i < 8; i++) {
			if (proto != 0 && proto != 43 && proto != 44 && proto != 60 &&
			    proto != 51)
				break;
			if (l4 + 8 > caplen) {
				f->proto = proto;
				return;
			}
			uint8_t nx = d[l4];
			uint32_t len;
			if (proto == 44) {
				len = 8;
				f->later_frag = (get16(d + l4 + 2) & 0xfff8) != 0;
			} else if (proto == 51)
				len = (d[l4 + 1] + 2u) * 4u;
			else
				len = (d[l4 + 1] + 1u) * 8u;
			l4 += len;
			proto = nx;
		}
	} else {
		return;
	}
	f->proto = proto;
	if (f->later_frag || l4 > 0xffff)
		return;
	if (end > caplen)
		end = caplen;
	uint32_t hl;
	if (proto == 6) {
		if (l4 + 20 > caplen)
			return;
		hl = (d[l4 + 12] >> 4) * 4u;
		f->sport = get16(d + l4);
		f->dport = get16(d + l4 + 2);
		f->tcp_flags = d[l4 + 13];
		f->ports = true;
		if (hl < 20)
			return;
	} else if (proto == 17) {
		if (l4 + 8 > caplen)
			return;
		hl = 8;
		f->sport = get16(d + l4);
		f->dport = get16(d + l4 + 2);
		f->ports = true;
	} else {
		return;
	}
	if (l4 + hl < end) {
		f->pl = d + l4 + hl;
		f->pllen = end - (l4 + hl);
	}
}

const char *
kt_example(const char *name)
{
	static char buf[4096];
	const char *root = getenv("GCAP_SOURCE_ROOT");
	snprintf(buf, sizeof(buf), "%s/kernels/examples/%s/%s.c", root ? root : ".", name,
		 name);
	return buf;
}

const char *
kt_corpus(void)
{
	static char buf[4096];
	const char *root = getenv("GCAP_SOURCE_ROOT");
	snprintf(buf, sizeof(buf), "%s/../shared/data/bench/mix-en10mb.pcap",
		 root ? root : ".");
	return access(buf, R_OK) == 0 ? buf : NULL;
}

char *
kt_write_tmp(const char *name, const char *text)
{
	char dir[] = "/tmp/gcap-kt-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *path = malloc(strlen(dir) + strlen(name) + 2);
	ck_assert_ptr_nonnull(path);
	sprintf(path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

struct gcap_khost *
kt_load(const char *path, const char *args)
{
	char eb[GCAP_ERRBUF_SIZE] = "";
	struct gcap_khost *k = gcap_khost_load(path, args, eb);
	ck_assert_msg(k != NULL, "load %s: %s", path, eb);
	return k;
}

int
kt_run_example(const char *name, int timeout_s, const TTest *const *tests,
	       const TTest *corpus)
{
	char sname[64];
	Suite *s;
	TCase *t;
	SRunner *r;
	int failed;

	snprintf(sname, sizeof(sname), "kernels-%s", name);
	s = suite_create(sname);
	t = tcase_create(name);
	tcase_set_timeout(t, timeout_s);
	for (; *tests != NULL; tests++)
		tcase_add_test(t, *tests);
	if (kt_corpus())
		tcase_add_test(t, corpus);
	else
		printf("SKIP corpus test: ../shared/data/bench/mix-en10mb.pcap absent\n");
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
