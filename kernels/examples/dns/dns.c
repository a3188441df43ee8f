/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DNS suffix watch: capture DNS queries (UDP to port 53, IPv4 or IPv6)
 * whose QNAME ends in one of a list of suffixes, and count the queries per
 * name (every query, matched or not) in a hash table; the report lists the
 * top N names.
 *
 * --kernel-arg: suffixes separated by commas, blanks or newlines;
 *   "@FILE" reads more from FILE (one or more per line, '#' comments);
 *   "top=N" sets how many names the report lists (default 20).
 *   e.g. --kernel-arg 'example.com,evil.org,top=50'
 * A suffix matches the name itself and its subdomains, on label
 * boundaries, case-insensitively: "example.com" matches "EXAMPLE.com" and
 * "www.example.com", not "badexample.com".
 */
#include <gpucap/gcap_kernel.h>

#define DNS_SLOTS 16384u  /* names tracked */
#define DNS_NAME_MAX 256u /* longest text name is 253 */
#define DNS_MAX_SUFFIX 64u
#define DNS_MAX_LABELS 128u

struct gcap_kstate {
	uint64_t udp53;     /* UDP packets to port 53 */
	uint64_t queries;   /* of which well-formed queries (QR=0, QDCOUNT>0) */
	uint64_t matched;   /* of which the name matched a suffix (captured) */
	uint64_t malformed; /* UDP/53 packets whose question did not parse */
	uint32_t nsuffix;
	uint32_t top;
	uint8_t sfxlen[DNS_MAX_SUFFIX];
	char sfx[DNS_MAX_SUFFIX][DNS_NAME_MAX];
	GCAP_HASH_DECLARE(names, DNS_SLOTS);
	uint64_t count[DNS_SLOTS]; /* queries per name */
	uint8_t nlen[DNS_SLOTS];   /* name length */
	uint8_t match[DNS_SLOTS];  /* the name matched a suffix */
	char name[DNS_SLOTS][DNS_NAME_MAX];
};

/*
 * Read the first question's name at off as lower-case dotted text.
 * @return its length (0 for the root), or -1 when malformed.
 */
GCAP_DEV int
dns_qname(const struct gcap_kpkt *pkt, uint32_t off, uint32_t end, char *name)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < DNS_MAX_LABELS; i++) {
		uint8_t len;
		if (off >= end || !gcap_load_u8(pkt, off, &len))
			return -1;
		if (len == 0)
			return (int)n;
		if (len & 0xc0u) /* compression pointer or reserved: not in a query */
			return -1;
		if (end - off - 1u < len || n + (n ? 1u : 0u) + len > 253u)
			return -1;
		const uint8_t *b = gcap_ptr(pkt, off + 1u, len);
		if (!b)
			return -1;
		if (n)
			name[n++] = '.';
		for (uint32_t k = 0; k < len; k++) {
			uint8_t c = b[k];
			name[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32u : c);
		}
		off += 1u + len;
	}
	return -1;
}

GCAP_DEV bool
dns_suffix_match(const struct gcap_kstate *st, const char *name, uint32_t n)
{
	uint32_t ns = st->nsuffix < DNS_MAX_SUFFIX ? st->nsuffix : DNS_MAX_SUFFIX;
	for (uint32_t k = 0; k < ns; k++) {
		uint32_t l = st->sfxlen[k];
		if (l > n)
			continue;
		if (l < n && name[n - l - 1u] != '.')
			continue;
		bool eq = true;
		for (uint32_t i = 0; i < l && eq; i++)
			eq = name[n - l + i] == st->sfx[k][i];
		if (eq)
			return true;
	}
	return false;
}

GCAP_KERNEL uint32_t
gcap_kernel(const struct gcap_kpkt *pkt, struct gcap_kstate *st)
{
	struct gcap_parsed p;
	gcap_parse(pkt, &p);
	if (!(p.flags & GCAP_PF_UDP) || p.dport != 53u)
		return GCAP_DROP;
	gcap_atomic_add_u64(&st->udp53, 1);

	uint32_t off = p.payload_off, end = p.payload_off + p.payload_len;
	uint16_t flags, qdcount;
	if (p.payload_len < 12u) {
		gcap_atomic_add_u64(&st->malformed, 1);
		return GCAP_DROP;
	}
	gcap_load_u16be(pkt, off + 2u, &flags);
	gcap_load_u16be(pkt, off + 4u, &qdcount);
	if ((flags & 0x8000u) || qdcount == 0)
		return GCAP_DROP; /* a response, or no question */

	char name[DNS_NAME_MAX];
	int n = dns_qname(pkt, off + 12u, end, name);
	if (n < 0) {
		gcap_atomic_add_u64(&st->malformed, 1);
		return GCAP_DROP;
	}
	gcap_atomic_add_u64(&st->queries, 1);
	bool m = dns_suffix_match(st, name, (uint32_t)n);

	struct gcap_hkey key;
	uint64_t h1 = gcap_hash_bytes(name, (uint32_t)n, 0);
	uint64_t h2 = gcap_hash_bytes(name, (uint32_t)n, 0x5bd1e9955bd1e995ull);
	key.w[0] = (uint32_t)h1;
	key.w[1] = (uint32_t)(h1 >> 32);
	key.w[2] = (uint32_t)h2;
	key.w[3] = (uint32_t)(h2 >> 32) ^ (uint32_t)n;
	bool inserted;
	int32_t slot = gcap_htab_insert(&st->names, &key, &inserted);
	if (slot >= 0) {
		if (inserted) {
			for (int i = 0; i < n; i++)
				st->name[slot][i] = name[i];
			st->nlen[slot] = (uint8_t)n;
			st->match[slot] = m;
		}
		gcap_atomic_add_u64(&st->count[slot], 1);
	}
	if (!m)
		return GCAP_DROP;
	gcap_atomic_add_u64(&st->matched, 1);
	return GCAP_CAPTURE;
}

#ifndef GCAP_DEVICE
#include <ctype.h>
#include <stdlib.h>

static int
add_suffix(struct gcap_kstate *st, const char *s, size_t n)
{
	while (n && *s == '.') {
		s++;
		n--;
	}
	while (n && s[n - 1] == '.')
		n--;
	if (n == 0)
		return gcap_kernel_error("empty DNS suffix");
	if (n > 253)
		return gcap_kernel_error("DNS suffix longer than 253: %.40s...", s);
	if (st->nsuffix >= DNS_MAX_SUFFIX)
		return gcap_kernel_error("more than %u suffixes", DNS_MAX_SUFFIX);
	char *d = st->sfx[st->nsuffix];
	for (size_t i = 0; i < n; i++)
		d[i] = (char)tolower((unsigned char)s[i]);
	st->sfxlen[st->nsuffix++] = (uint8_t)n;
	return 0;
}

static int parse_list(struct gcap_kstate *st, const char *s, int depth);

static int
read_list_file(struct gcap_kstate *st, const char *path, int depth)
{
	if (depth > 0)
		return gcap_kernel_error("%s: nested @FILE", path);
	FILE *f = fopen(path, "r");
	if (!f)
		return gcap_kernel_error("%s: cannot open", path);
	char line[1024];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *h = strchr(line, '#');
		if (h)
			*h = '\0';
		rc = parse_list(st, line, depth + 1);
	}
	fclose(f);
	return rc;
}

static int
parse_list(struct gcap_kstate *st, const char *s, int depth)
{
	while (*s) {
		size_t n = strcspn(s, ", \t\r\n");
		if (n == 0) {
			s++;
			continue;
		}
		char item[1024];
		snprintf(item, sizeof(item), "%.*s", (int)n, s);
		int rc;
		if (item[0] == '@')
			rc = read_list_file(st, item + 1, depth);
		else if (strncmp(item, "top=", 4) == 0) {
			char *e;
			long v = strtol(item + 4, &e, 10);
			if (*e || v < 0 || v > (long)DNS_SLOTS)
				return gcap_kernel_error("bad top=%s", item + 4);
			st->top = (uint32_t)v;
			rc = 0;
		} else
			rc = add_suffix(st, item, n);
		if (rc)
			return rc;
		s += n;
	}
	return 0;
}

int
gcap_kernel_init(struct gcap_kstate *st, const char *args)
{
	st->top = 20;
	return args ? parse_list(st, args, 0) : 0;
}

void
gcap_kernel_report(const struct gcap_kstate *st, struct gcap_json *j)
{
	gcap_json_key_u64(j, "udp53", st->udp53);
	gcap_json_key_u64(j, "queries", st->queries);
	gcap_json_key_u64(j, "matched", st->matched);
	gcap_json_key_u64(j, "malformed", st->malformed);
	gcap_json_key_u64(j, "names", st->names.used);
	gcap_json_key_u64(j, "names_full", st->names.full);
	gcap_json_array_begin(j, "suffixes");
	for (uint32_t k = 0; k < st->nsuffix; k++)
		gcap_json_key_strn(j, NULL, st->sfx[k], st->sfxlen[k]);
	gcap_json_array_end(j);

	uint32_t *idx = malloc(sizeof(*idx) * (st->top ? st->top : 1));
	uint32_t n = idx ? gcap_hash_sorted(st->names.slot, DNS_SLOTS, st->count, idx,
					    st->top) :
			   0;
	gcap_json_array_begin(j, "top");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = idx[i];
		gcap_json_object_begin(j, NULL);
		if (st->nlen[s])
			gcap_json_key_strn(j, "name", st->name[s], st->nlen[s]);
		else
			gcap_json_key_str(j, "name", ".");
		gcap_json_key_u64(j, "count", st->count[s]);
		gcap_json_key_bool(j, "matched", st->match[s] != 0);
		gcap_json_object_end(j);
	}
	gcap_json_array_end(j);
	free(idx);
}
#endif
