/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the BPF translator and the reference interpreter.
 *
 * Input: [n-1][wirelen extra][n x 8 bytes of instructions][packet bytes].
 * 1. The raw instructions go through gcap_bpfc_check() and, when accepted,
 *    gcap_bpfc_translate(): neither may crash, and the output must be well
 *    formed (below).
 * 2. The instructions are then repaired into a program bpf_validate()
 *    accepts and libpcap 1.10's bpf_filter() runs without aborting or
 *    looping (known opcodes, forward jumps in range, no constant division
 *    by 0, scratch words written first): gcap_bpfc_check() must accept it,
 *    the translation must be well formed, and gcap_bpf_interp() must return
 *    exactly what bpf_filter() returns on the packet.
 * Compiling C per input would be far too slow; the compiled code is checked
 * against bpf_filter() by tests/bpfc (host cc) instead.
 *
 * Well formed: in each function, every `goto L;` has exactly one `L:`,
 * no label is defined twice, braces and parentheses balance.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_bpf_interp.h"
#include "gpucap/gcap_bpfc.h"

#define MAXN 64

static const uint16_t known[] = {
	0x06, 0x16, 0x20, 0x28, 0x30, 0x40, 0x48, 0x50, 0x80, 0x81, 0xb1, 0x00, 0x01,
	0x60, 0x61, 0x02, 0x03, 0x05, 0x25, 0x35, 0x15, 0x45, 0x2d, 0x3d, 0x1d, 0x4d,
	0x0c, 0x1c, 0x2c, 0x3c, 0x9c, 0x5c, 0x4c, 0xac, 0x6c, 0x7c, 0x04, 0x14, 0x24,
	0x34, 0x94, 0x54, 0x44, 0xa4, 0x64, 0x74, 0x84, 0x07, 0x87,
};

#define NKNOWN (sizeof(known) / sizeof(known[0]))

/* labels of one function: names are short (L12, f3_45, f3_end) */
struct labels {
	char name[4096][16];
	unsigned char defined[4096];
	unsigned char used[4096];
	unsigned n;
};

static unsigned
label_id(struct labels *l, const char *s, size_t len)
{
	if (len >= 16)
		abort();
	for (unsigned i = 0; i < l->n; i++)
		if (strlen(l->name[i]) == len && memcmp(l->name[i], s, len) == 0)
			return i;
	if (l->n == 4096)
		abort();
	memcpy(l->name[l->n], s, len);
	l->name[l->n][len] = '\0';
	l->defined[l->n] = l->used[l->n] = 0;
	return l->n++;
}

static int
ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static void
check_function(struct labels *l)
{
	for (unsigned i = 0; i < l->n; i++)
		if (l->used[i] && !l->defined[i]) {
			fprintf(stderr, "goto %s without a label\n", l->name[i]);
			abort();
		}
	l->n = 0;
}

/* walk the generated source: comments skipped, labels at line starts */
static void
check_source(const char *s)
{
	static struct labels l;
	long braces = 0, parens = 0;
	int bol = 1;

	l.n = 0;
	for (const char *p = s; *p != '\0'; p++) {
		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");

			if (e == NULL)
				abort(); /* unterminated comment */
			p = e + 1;
			continue;
		}
		if (*p == '#' && bol) { /* preprocessor line */
			while (p[1] != '\0' && p[1] != '\n')
				p++;
			continue;
		}
		if (*p == '\n') {
			bol = 1;
			continue;
		}
		if (bol && ident(*p)) {
			/* "name:" alone on a line is a label */
			const char *e = p;

			while (ident(*e))
				e++;
			if (e[0] == ':' && e[1] == '\n') {
				unsigned id = label_id(&l, p, (size_t)(e - p));

				if (l.defined[id])
					abort(); /* defined twice */
				l.defined[id] = 1;
				p = e;
				bol = 0;
				continue;
			}
		}
		bol = 0;
		if (strncmp(p, "goto ", 5) == 0 && (p == s || !ident(p[-1]))) {
			const char *n = p + 5, *e = n;

			while (ident(*e))
				e++;
			if (*e != ';')
				abort();
			l.used[label_id(&l, n, (size_t)(e - n))] = 1;
			p = e;
			continue;
		}
		switch (*p) {
		case '{': braces++; break;
		case '}':
			if (--braces < 0)
				abort();
			if (braces == 0)
				check_function(&l);
			break;
		case '(': parens++; break;
		case ')':
			if (--parens < 0)
				abort();
			break;
		default: break;
		}
	}
	if (braces != 0 || parens != 0)
		abort();
}

static void
translate_and_check(const struct bpf_program *p, unsigned flags)
{
	char eb[GCAP_ERRBUF_SIZE];
	char *src = gcap_bpfc_translate(p, 1, "fz", flags, eb);

	if (src == NULL)
		abort();
	check_source(src);
	free(src);
}

/* make any instruction sequence a program bpf_filter() can run */
static unsigned
repair(const struct bpf_insn *raw, unsigned n, struct bpf_insn *out)
{
	unsigned m = 0, total;

	/* A is 0 at the start: zero the scratch words libpcap 1.10 leaves
	 * uninitialised */
	for (unsigned k = 0; k < BPF_MEMWORDS; k++)
		out[m++] = (struct bpf_insn)BPF_STMT(BPF_ST, k);
	total = m + n + 1;
	for (unsigned i = 0; i < n; i++, m++) {
		struct bpf_insn in = raw[i];
		unsigned left = total - m - 1;

		in.code = known[in.code % NKNOWN];
		switch (in.code) {
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX: in.k %= BPF_MEMWORDS; break;
		case BPF_ALU | BPF_DIV | BPF_K:
		case BPF_ALU | BPF_MOD | BPF_K:
			if (in.k == 0)
				in.k = 1;
			break;
		case BPF_LD | BPF_W | BPF_ABS:
		case BPF_LD | BPF_H | BPF_ABS:
		case BPF_LD | BPF_B | BPF_ABS:
			if (in.k >= 0xfffff000u) /* Linux ancillary: refused */
				in.k &= 0xff;
			break;
		case BPF_JMP | BPF_JA: in.k %= left; break;
		default: break;
		}
		if (BPF_CLASS(in.code) == BPF_JMP && BPF_OP(in.code) != BPF_JA) {
			in.jt %= left < 256 ? left : 256;
			in.jf %= left < 256 ? left : 256;
		}
		out[m] = in;
	}
	out[m++] = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_A, 0);
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpf_insn raw[MAXN], prog[MAXN + BPF_MEMWORDS + 1];
	struct bpf_program p;
	char eb[GCAP_ERRBUF_SIZE];
	unsigned n, wextra;
	uint32_t caplen, wirelen, want, got;
	const uint8_t *pkt;

	if (size < 2)
		return 0;
	n = data[0] % MAXN + 1;
	wextra = data[1];
	data += 2;
	size -= 2;
	if (size < n * 8u)
		return 0;
	memcpy(raw, data, n * 8u);
	pkt = data + n * 8u;
	caplen = (uint32_t)(size - n * 8u);
	wirelen = caplen + wextra;

	/* 1. raw: the checker and, if it accepts, the translator */
	p.bf_len = n;
	p.bf_insns = raw;
	if (gcap_bpfc_check(&p, eb) == 0)
		translate_and_check(&p, 0);

	/* 2. repaired: accepted, translated, interpreted as bpf_filter() */
	p.bf_len = repair(raw, n, prog);
	p.bf_insns = prog;
	if (!bpf_validate(prog, (int)p.bf_len))
		abort();
	if (gcap_bpfc_check(&p, eb) != 0) {
		fprintf(stderr, "repaired program refused: %s\n", eb);
		abort();
	}
	translate_and_check(&p, n % 2 ? GCAP_BPFC_F_KERNEL : GCAP_BPFC_F_NO_COMMENTS);
	want = bpf_filter(prog, pkt, wirelen, caplen);
	got = gcap_bpf_interp((const struct gcap_bpf_insn *)prog, p.bf_len, pkt, wirelen,
			      caplen);
	if (got != want) {
		fprintf(stderr, "interpreter 0x%x, bpf_filter 0x%x\n", got, want);
		abort();
	}
	return 0;
}
