/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Payload signatures: match many byte patterns (1,000+) over every TCP and
 * UDP payload in one pass with an Aho-Corasick automaton, capture the
 * packets that match and count the hits of every pattern.
 *
 * The automaton is built on the host by gcap_kernel_init() from a pattern
 * file and lives in the state (so in VRAM on the GPU): a dense transition
 * table over byte classes (bytes that occur in no pattern share class 0;
 * with "nocase" upper and lower case letters share a class), 16-bit state
 * numbers, one pattern per accepting state plus a dictionary-suffix link
 * to the next accepting state, so each payload byte costs one table load.
 *
 * Pattern file: one pattern per line; empty lines and lines starting with
 * '#' are skipped; escapes \xHH, \\, \t, \r, \n and \# (a leading '#');
 * duplicates are counted once. Matching is per packet (no TCP stream
 * reassembly); a hit is an occurrence (overlaps count).
 *
 * --kernel-arg: "PATH" or "file=PATH,nocase,top=N"; without a file, the
 * patterns.txt next to this source is used. top: patterns listed in the
 * report (default 20).
 */
#include <gpucap/gcap_kernel.h>

#define SM_MAX_STATES 65535u /* state numbers are 16-bit */
#define SM_MAX_PATTERNS 8192u
#define SM_MAX_PATLEN 128u
#define SM_CELLS (1u << 22) /* transitions: states x classes */

struct gcap_kstate {
	uint32_t nstates;
	uint32_t npat;
	uint32_t ncls; /* byte classes (row length of next) */
	uint32_t nocase;
	uint32_t top;
	uint32_t dups;                     /* duplicate lines in the pattern file */
	uint64_t packets;                  /* TCP/UDP packets with a payload */
	uint64_t scanned;                  /* payload bytes scanned */
	uint64_t matched;                  /* packets with at least one hit (captured) */
	uint64_t hits;                     /* pattern occurrences */
	uint8_t cls[256];                  /* byte -> class */
	uint16_t out[SM_MAX_STATES + 1];   /* pattern + 1 ending here, or 0 */
	uint16_t olink[SM_MAX_STATES + 1]; /* next accepting state on the
					      suffix chain, or 0 */
	uint16_t next[SM_CELLS];           /* next[state * ncls + class] */
	uint8_t patlen[SM_MAX_PATTERNS];
	uint8_t pat[SM_MAX_PATTERNS][SM_MAX_PATLEN];
	uint64_t pat_hits[SM_MAX_PATTERNS];
};

GCAP_KERNEL uint32_t
gcap_kernel(const struct gcap_kpkt *pkt, struct gcap_kstate *st)
{
	struct gcap_parsed p;
	gcap_parse(pkt, &p);
	if (!(p.flags & (GCAP_PF_TCP | GCAP_PF_UDP)) || p.payload_len == 0)
		return GCAP_DROP;
	const uint8_t *b = gcap_ptr(pkt, p.payload_off, p.payload_len);
	if (!b)
		return GCAP_DROP;
	uint32_t ncls = st->ncls, s = 0, hits = 0;
	for (uint32_t i = 0; i < p.payload_len; i++) {
		s = st->next[s * ncls + st->cls[b[i]]];
		uint32_t o = s;
		for (uint32_t d = 0; d < SM_MAX_PATLEN && o != 0; d++) {
			uint32_t id = st->out[o];
			if (id) {
				gcap_atomic_add_u64(&st->pat_hits[id - 1u], 1);
				hits++;
			}
			o = st->olink[o];
		}
	}
	gcap_atomic_add_u64(&st->packets, 1);
	gcap_atomic_add_u64(&st->scanned, p.payload_len);
	if (!hits)
		return GCAP_DROP;
	gcap_atomic_add_u64(&st->hits, hits);
	gcap_atomic_add_u64(&st->matched, 1);
	return GCAP_CAPTURE;
}

#ifndef GCAP_DEVICE
#include <ctype.h>
#include <stdlib.h>

/* Decode one pattern line. @return its length, or -1 when bad. */
static int
unescape(const char *s, uint8_t *out)
{
	int n = 0;
	if (s[0] == '\\' && s[1] == '#') {
		out[n++] = '#';
		s += 2;
	}
	for (; *s; s++) {
		int c = (unsigned char)*s;
		if (c == '\\') {
			s++;
			if (*s == 'x' && isxdigit((unsigned char)s[1]) &&
			    isxdigit((unsigned char)s[2])) {
				char h[3] = { s[1], s[2], 0 };
				c = (int)strtol(h, NULL, 16);
				s += 2;
			} else if (*s == '\\')
				c = '\\';
			else if (*s == 't')
				c = '\t';
			else if (*s == 'r')
				c = '\r';
			else if (*s == 'n')
				c = '\n';
			else if (*s == '#')
				c = '#';
			else
				return -1;
		}
		if (n >= (int)SM_MAX_PATLEN)
			return -1;
		out[n++] = (uint8_t)c;
	}
	return n;
}

static int
load_patterns(struct gcap_kstate *st, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return gcap_kernel_error("%s: cannot open the pattern file", path);
	char line[4 * SM_MAX_PATLEN + 16];
	unsigned lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		size_t n = strlen(line);
		if (n && line[n - 1] != '\n' && !feof(f)) {
			fclose(f);
			return gcap_kernel_error("%s:%u: line too long", path, lineno);
		}
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0 || line[0] == '#')
			continue;
		if (st->npat >= SM_MAX_PATTERNS) {
			fclose(f);
			return gcap_kernel_error("%s: more than %u patterns", path,
						 SM_MAX_PATTERNS);
		}
		int len = unescape(line, st->pat[st->npat]);
		if (len <= 0) {
			fclose(f);
			return gcap_kernel_error("%s:%u: bad pattern (escape, or "
						 "longer than %u bytes)",
						 path, lineno, SM_MAX_PATLEN);
		}
		st->patlen[st->npat++] = (uint8_t)len;
	}
	fclose(f);
	if (st->npat == 0)
		return gcap_kernel_error("%s: no patterns", path);
	return 0;
}

static uint8_t
fold(const struct gcap_kstate *st, uint8_t c)
{
	return st->nocase ? (uint8_t)tolower(c) : c;
}

/* Byte classes, the trie, then failure transitions (breadth first). */
static int
build(struct gcap_kstate *st)
{
	uint8_t used[256] = { 0 };
	for (uint32_t p = 0; p < st->npat; p++)
		for (uint32_t i = 0; i < st->patlen[p]; i++)
			used[fold(st, st->pat[p][i])] = 1;
	st->ncls = 1;
	for (int c = 0; c < 256; c++)
		if (used[c])
			st->cls[c] = (uint8_t)st->ncls++;
	if (st->ncls > 256)
		return gcap_kernel_error("patterns use every byte value: no "
					 "class left for the others");
	if (st->nocase)
		for (int c = 'A'; c <= 'Z'; c++)
			st->cls[c] = st->cls[tolower(c)];

	uint32_t ncls = st->ncls;
	st->nstates = 1;
	for (uint32_t p = 0; p < st->npat; p++) {
		uint32_t s = 0;
		for (uint32_t i = 0; i < st->patlen[p]; i++) {
			uint32_t c = st->cls[st->pat[p][i]];
			uint32_t u = st->next[s * ncls + c];
			if (!u) {
				u = st->nstates;
				if (u > SM_MAX_STATES || (u + 1ull) * ncls > SM_CELLS)
					return gcap_kernel_error(
						"automaton too large: "
						"%u patterns need more than %u states x "
						"%u classes",
						st->npat, u, ncls);
				st->nstates++;
				st->next[s * ncls + c] = (uint16_t)u;
			}
			s = u;
		}
		if (st->out[s])
			st->dups++; /* the pattern keeps its first line */
		else
			st->out[s] = (uint16_t)(p + 1);
	}

	uint32_t *fail = calloc(st->nstates, sizeof(*fail));
	uint32_t *queue = malloc(st->nstates * sizeof(*queue));
	if (!fail || !queue) {
		free(fail);
		free(queue);
		return gcap_kernel_error("out of memory");
	}
	uint32_t head = 0, tail = 0;
	queue[tail++] = 0;
	while (head < tail) {
		uint32_t s = queue[head++];
		for (uint32_t c = 0; c < ncls; c++) {
			uint32_t u = st->next[s * ncls + c];
			uint32_t f = s ? st->next[fail[s] * ncls + c] : 0;
			if (u) {
				fail[u] = f;
				st->olink[u] = st->out[f] ? (uint16_t)f : st->olink[f];
				queue[tail++] = u;
			} else {
				st->next[s * ncls + c] = (uint16_t)f;
			}
		}
	}
	free(fail);
	free(queue);
	return 0;
}

int
gcap_kernel_init(struct gcap_kstate *st, const char *args)
{
	char path[4096] = "";
	st->top = 20;
	if (args) {
		char buf[4096 + 64];
		snprintf(buf, sizeof(buf), "%s", args);
		for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
			if (strcmp(t, "nocase") == 0)
				st->nocase = 1;
			else if (strncmp(t, "top=", 4) == 0) {
				char *e;
				long v = strtol(t + 4, &e, 10);
				if (!t[4] || *e || v < 0 || v > (long)SM_MAX_PATTERNS)
					return gcap_kernel_error("bad top=%s", t + 4);
				st->top = (uint32_t)v;
			} else if (strncmp(t, "file=", 5) == 0)
				snprintf(path, sizeof(path), "%s", t + 5);
			else
				snprintf(path, sizeof(path), "%s", t);
		}
	}
	if (!path[0]) {
		/* patterns.txt next to this source */
		const char *me = __FILE__, *sl = strrchr(me, '/');
		snprintf(path, sizeof(path), "%.*spatterns.txt",
			 sl ? (int)(sl - me + 1) : 0, me);
	}
	int rc = load_patterns(st, path);
	return rc ? rc : build(st);
}

void
gcap_kernel_report(const struct gcap_kstate *st, struct gcap_json *j)
{
	gcap_json_key_u64(j, "patterns", st->npat - st->dups);
	gcap_json_key_u64(j, "states", st->nstates);
	gcap_json_key_u64(j, "classes", st->ncls);
	gcap_json_key_u64(j, "packets", st->packets);
	gcap_json_key_u64(j, "scanned_bytes", st->scanned);
	gcap_json_key_u64(j, "matched", st->matched);
	gcap_json_key_u64(j, "hits", st->hits);

	/* top patterns by hits, then by pattern order */
	uint32_t *idx = malloc(sizeof(*idx) * (st->npat ? st->npat : 1));
	uint32_t n = 0;
	for (uint32_t p = 0; idx && p < st->npat; p++)
		if (st->pat_hits[p])
			idx[n++] = p;
	for (uint32_t a = 1; a < n; a++) { /* insertion sort: n is small */
		uint32_t v = idx[a], b = a;
		while (b > 0 && (st->pat_hits[idx[b - 1]] < st->pat_hits[v] ||
				 (st->pat_hits[idx[b - 1]] == st->pat_hits[v] &&
				  idx[b - 1] > v))) {
			idx[b] = idx[b - 1];
			b--;
		}
		idx[b] = v;
	}
	gcap_json_key_u64(j, "patterns_hit", n);
	gcap_json_array_begin(j, "top");
	for (uint32_t i = 0; i < n && i < st->top; i++) {
		uint32_t p = idx[i];
		gcap_json_object_begin(j, NULL);
		gcap_json_key_strn(j, "pattern", (const char *)st->pat[p], st->patlen[p]);
		gcap_json_key_u64(j, "line_index", p);
		gcap_json_key_u64(j, "hits", st->pat_hits[p]);
		gcap_json_object_end(j);
	}
	gcap_json_array_end(j);
	free(idx);
}
#endif
