/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classic BPF -> C translator (see include/gpucap/gcap_bpfc.h for the shape
 * of the generated code and its semantics).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_bpfc.h"

#define MAX_PREFIX 64

/* the opcodes libpcap's bpf_filter() executes (others make it abort) */
static int
known_opcode(unsigned code)
{
	switch (code) {
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_LD | BPF_W | BPF_ABS:
	case BPF_LD | BPF_H | BPF_ABS:
	case BPF_LD | BPF_B | BPF_ABS:
	case BPF_LD | BPF_W | BPF_IND:
	case BPF_LD | BPF_H | BPF_IND:
	case BPF_LD | BPF_B | BPF_IND:
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_MSH | BPF_B:
	case BPF_LD | BPF_IMM:
	case BPF_LDX | BPF_IMM:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_X:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_X:
	case BPF_ALU | BPF_MOD | BPF_X:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_DIV | BPF_K:
	case BPF_ALU | BPF_MOD | BPF_K:
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_K:
	case BPF_ALU | BPF_NEG:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA: return 1;
	}
	return 0;
}

/* where a jump of instruction i goes: -1 when outside [0, n) */
static long
jump_target(unsigned i, unsigned n, const struct bpf_insn *in, int which)
{
	long t;

	if (BPF_OP(in->code) == BPF_JA)
		t = (long)i + 1 + (long)(int32_t)in->k;
	else
		t = (long)i + 1 + (which ? in->jt : in->jf);
	return t >= 0 && t < (long)n ? t : -1;
}

static int
check_insns(const struct bpf_insn *ins, unsigned n, char *errbuf, const char *what)
{
	if (n == 0)
		return 0;
	if (ins == NULL)
		return gcap_err(errbuf, EINVAL, "%s: no instructions", what);
	if (n > GCAP_BPFC_MAX_INSNS)
		return gcap_err(errbuf, EINVAL, "%s: %u instructions, at most %u", what,
				n, GCAP_BPFC_MAX_INSNS);
	for (unsigned i = 0; i < n; i++) {
		const struct bpf_insn *in = &ins[i];
		unsigned c = in->code;

		/* loads at k >= SKF_AD_OFF (Linux ancillary data) are served
		 * as libpcap's bpf_filter() serves them without aux data: past
		 * the packet, the filter returns 0. libpcap emits them for some
		 * link types (e.g. Juniper's) even on a savefile handle. */
		if (!known_opcode(c))
			return gcap_err(
				errbuf, EINVAL,
				"%s: instruction %u has opcode 0x%02x that bpf_filter() "
				"does not execute",
				what, i, c);
		switch (c) {
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (in->k >= BPF_MEMWORDS)
				return gcap_err(
					errbuf, EINVAL,
					"%s: instruction %u uses scratch word M[%u] "
					"(there are %d)",
					what, i, in->k, BPF_MEMWORDS);
			break;
		case BPF_ALU | BPF_DIV | BPF_K:
		case BPF_ALU | BPF_MOD | BPF_K:
			if (in->k == 0)
				return gcap_err(
					errbuf, EINVAL,
					"%s: instruction %u divides by the constant 0",
					what, i);
			break;
		default: break;
		}
		if (BPF_CLASS(c) == BPF_JMP) {
			if (BPF_OP(c) == BPF_JA) {
				if (in->k == 0xffffffffu)
					return gcap_err(
						errbuf, EINVAL,
						"%s: instruction %u jumps to itself",
						what, i);
				if (jump_target(i, n, in, 1) < 0)
					return gcap_err(errbuf, EINVAL,
							"%s: instruction %u jumps out of "
							"the program",
							what, i);
			} else if (jump_target(i, n, in, 1) < 0 ||
				   jump_target(i, n, in, 0) < 0) {
				return gcap_err(
					errbuf, EINVAL,
					"%s: instruction %u jumps out of the program",
					what, i);
			}
		}
	}
	if (BPF_CLASS(ins[n - 1].code) != BPF_RET)
		return gcap_err(errbuf, EINVAL,
				"%s: the last instruction is not a return", what);
	/* and whatever else this libpcap's validator insists on */
	if (!bpf_validate(ins, (int)n))
		return gcap_err(errbuf, EINVAL, "%s: rejected by bpf_validate()", what);
	return 0;
}

int
gcap_bpfc_check(const struct bpf_program *prog, char *errbuf)
{
	if (prog == NULL)
		return gcap_err(errbuf, EINVAL, "no program");
	return check_insns(prog->bf_insns, prog->bf_len, errbuf, "BPF program");
}

/* ---- code generation ---- */

struct gen {
	FILE *f;
	const char *pfx;
	unsigned flags;
	int mask;           /* 1: inside P_mask (faults jump to the program's end) */
	unsigned prog;      /* program number */
	unsigned char *lab; /* lab[j]: instruction j is a jump target */
};

static const char prelude[] =
	"/* generated by gpucap's BPF translator (gcap_bpfc): do not edit */\n"
	"#ifndef GCAP_BPFC_PRELUDE_1\n"
	"#define GCAP_BPFC_PRELUDE_1\n"
	"#ifndef GCAP_BPFC_FN\n"
	"#if defined(__CUDACC__) || defined(__CUDACC_RTC__)\n"
	"#define GCAP_BPFC_FN __device__ __forceinline__\n"
	"#elif defined(__GNUC__)\n"
	"#define GCAP_BPFC_FN static inline __attribute__((unused))\n"
	"#else\n"
	"#define GCAP_BPFC_FN static inline\n"
	"#endif\n"
	"#endif\n"
	"#ifndef GCAP_BPFC_TRACE\n"
	"#define GCAP_BPFC_TRACE(prog, insn) ((void)0)\n"
	"#endif\n"
	"#ifndef GCAP_BPFC_API\n"
	"#define GCAP_BPFC_API GCAP_BPFC_FN\n"
	"#endif\n"
	"/* big-endian loads; the caller has checked the bounds */\n"
	"GCAP_BPFC_FN unsigned int\n"
	"gcap_bpfc_ld32(const unsigned char *p)\n"
	"{\n"
	"\treturn (unsigned int)p[0] << 24 | (unsigned int)p[1] << 16 |\n"
	"\t       (unsigned int)p[2] << 8 | (unsigned int)p[3];\n"
	"}\n"
	"GCAP_BPFC_FN unsigned int\n"
	"gcap_bpfc_ld16(const unsigned char *p)\n"
	"{\n"
	"\treturn (unsigned int)p[0] << 8 | (unsigned int)p[1];\n"
	"}\n"
	"#endif /* GCAP_BPFC_PRELUDE_1 */\n";

/* the statement a failing instruction ends the program with */
static void
emit_fail(struct gen *g)
{
	if (g->mask)
		fprintf(g->f, "goto f%u_end;", g->prog);
	else
		fputs("return 0u;", g->f);
}

static void
emit_goto(struct gen *g, long t)
{
	if (g->mask)
		fprintf(g->f, "goto f%u_%ld;", g->prog, t);
	else
		fprintf(g->f, "goto L%ld;", t);
}

static void
emit_label(struct gen *g, unsigned j)
{
	if (g->mask)
		fprintf(g->f, "f%u_%u:\n", g->prog, j);
	else
		fprintf(g->f, "L%u:\n", j);
}

/* load of `size` bytes at X + k (ind) or k: bounds as bpf_filter() */
static void
emit_load(struct gen *g, unsigned size, int ind, uint32_t k)
{
	FILE *f = g->f;
	unsigned long long end = (unsigned long long)k + size;

	if (end > 0xffffffffull) {
		/* can never be inside a packet of at most 2^32-1 bytes */
		fputs("\t", f);
		emit_fail(g);
		fputs("\n", f);
		return;
	}
	if (ind)
		fprintf(f, "\tif (caplen < 0x%llxu || X > caplen - 0x%llxu)\n\t\t", end,
			end);
	else
		fprintf(f, "\tif (caplen < 0x%llxu)\n\t\t", end);
	emit_fail(g);
	fputs("\n", f);
	if (size == 1)
		fprintf(f, ind ? "\tA = p[X + 0x%xu];\n" : "\tA = p[0x%xu];\n", k);
	else
		fprintf(f,
			ind ? "\tA = gcap_bpfc_ld%u(p + (X + 0x%xu));\n" :
			      "\tA = gcap_bpfc_ld%u(p + 0x%xu);\n",
			size * 8, k);
}

/* the targets a conditional jump needs gotos for (-1: none) */
static void
cond_targets(unsigned i, const struct bpf_insn *in, long *t1, long *t2, int *neg)
{
	long tt = (long)i + 1 + in->jt, tf = (long)i + 1 + in->jf, next = (long)i + 1;

	*t1 = *t2 = -1;
	*neg = 0;
	if (tt == tf) {
		if (tt != next)
			*t2 = tt; /* unconditional */
	} else if (tt == next) {
		*t1 = tf; /* if (!c) goto tf */
		*neg = 1;
	} else if (tf == next) {
		*t1 = tt; /* if (c) goto tt */
	} else {
		*t1 = tt; /* if (c) goto tt; goto tf */
		*t2 = tf;
	}
}

static void
emit_cond(struct gen *g, unsigned i, const struct bpf_insn *in, const char *cond)
{
	long t1, t2;
	int neg;

	cond_targets(i, in, &t1, &t2, &neg);
	if (t1 >= 0) {
		fprintf(g->f, neg ? "\tif (!(%s))\n\t\t" : "\tif (%s)\n\t\t", cond);
		emit_goto(g, t1);
		fputs("\n", g->f);
	}
	if (t2 >= 0) {
		fputs("\t", g->f);
		emit_goto(g, t2);
		fputs("\n", g->f);
	}
}

static void
emit_ret(struct gen *g, int a, uint32_t k)
{
	FILE *f = g->f;

	if (!g->mask) {
		if (a)
			fputs("\treturn A;\n", f);
		else
			fprintf(f, "\treturn 0x%xu;\n", k);
		return;
	}
	if (a)
		fprintf(f, "\tif (A != 0u)\n\t\tm |= 1ull << %u;\n", g->prog);
	else if (k != 0)
		fprintf(f, "\tm |= 1ull << %u;\n", g->prog);
	fprintf(f, "\tgoto f%u_end;\n", g->prog);
}

/* "\tif (COND)\n\t\tFAIL\n" */
static void
emit_guard(struct gen *g, const char *cond)
{
	fprintf(g->f, "\tif (%s)\n\t\t", cond);
	emit_fail(g);
	fputs("\n", g->f);
}

static void
emit_insn(struct gen *g, unsigned i, const struct bpf_insn *in)
{
	FILE *f = g->f;
	uint32_t k = in->k;
	char cond[64];

	switch (in->code) {
	case BPF_RET | BPF_K: emit_ret(g, 0, k); break;
	case BPF_RET | BPF_A: emit_ret(g, 1, 0); break;
	case BPF_LD | BPF_W | BPF_ABS: emit_load(g, 4, 0, k); break;
	case BPF_LD | BPF_H | BPF_ABS: emit_load(g, 2, 0, k); break;
	case BPF_LD | BPF_B | BPF_ABS: emit_load(g, 1, 0, k); break;
	case BPF_LD | BPF_W | BPF_IND: emit_load(g, 4, 1, k); break;
	case BPF_LD | BPF_H | BPF_IND: emit_load(g, 2, 1, k); break;
	case BPF_LD | BPF_B | BPF_IND: emit_load(g, 1, 1, k); break;
	case BPF_LD | BPF_W | BPF_LEN: fputs("\tA = wirelen;\n", f); break;
	case BPF_LDX | BPF_W | BPF_LEN: fputs("\tX = wirelen;\n", f); break;
	case BPF_LDX | BPF_MSH | BPF_B:
		snprintf(cond, sizeof(cond), "caplen <= 0x%xu", k);
		emit_guard(g, cond);
		fprintf(f, "\tX = (unsigned int)(p[0x%xu] & 0xfu) << 2;\n", k);
		break;
	case BPF_LD | BPF_IMM: fprintf(f, "\tA = 0x%xu;\n", k); break;
	case BPF_LDX | BPF_IMM: fprintf(f, "\tX = 0x%xu;\n", k); break;
	case BPF_LD | BPF_MEM: fprintf(f, "\tA = M%u;\n", k); break;
	case BPF_LDX | BPF_MEM: fprintf(f, "\tX = M%u;\n", k); break;
	case BPF_ST: fprintf(f, "\tM%u = A;\n", k); break;
	case BPF_STX: fprintf(f, "\tM%u = X;\n", k); break;
	case BPF_JMP | BPF_JA:
		/* backward ("protochain"): followed to its end, bounded by
		 * GCAP_BPF_BACKWARD_LIMIT (gcap_bpf_interp.h) */
		if ((int32_t)k < 0)
			emit_guard(g, "++bj > bjmax");
		if (k != 0) {
			fputs("\t", f);
			emit_goto(g, (long)i + 1 + (long)(int32_t)k);
			fputs("\n", f);
		}
		break;
	/* the constant-true/false forms keep compilers' -Wtype-limits quiet */
	case BPF_JMP | BPF_JGT | BPF_K:
		if (k == 0xffffffffu)
			snprintf(cond, sizeof(cond), "0");
		else
			snprintf(cond, sizeof(cond), "A > 0x%xu", k);
		emit_cond(g, i, in, cond);
		break;
	case BPF_JMP | BPF_JGE | BPF_K:
		if (k == 0)
			snprintf(cond, sizeof(cond), "1");
		else
			snprintf(cond, sizeof(cond), "A >= 0x%xu", k);
		emit_cond(g, i, in, cond);
		break;
	case BPF_JMP | BPF_JEQ | BPF_K:
		snprintf(cond, sizeof(cond), "A == 0x%xu", k);
		emit_cond(g, i, in, cond);
		break;
	case BPF_JMP | BPF_JSET | BPF_K:
		snprintf(cond, sizeof(cond), "(A & 0x%xu) != 0u", k);
		emit_cond(g, i, in, cond);
		break;
	case BPF_JMP | BPF_JGT | BPF_X: emit_cond(g, i, in, "A > X"); break;
	case BPF_JMP | BPF_JGE | BPF_X: emit_cond(g, i, in, "A >= X"); break;
	case BPF_JMP | BPF_JEQ | BPF_X: emit_cond(g, i, in, "A == X"); break;
	case BPF_JMP | BPF_JSET | BPF_X: emit_cond(g, i, in, "(A & X) != 0u"); break;
	case BPF_ALU | BPF_ADD | BPF_X: fputs("\tA += X;\n", f); break;
	case BPF_ALU | BPF_SUB | BPF_X: fputs("\tA -= X;\n", f); break;
	case BPF_ALU | BPF_MUL | BPF_X: fputs("\tA *= X;\n", f); break;
	case BPF_ALU | BPF_DIV | BPF_X:
		emit_guard(g, "X == 0u");
		fputs("\tA /= X;\n", f);
		break;
	case BPF_ALU | BPF_MOD | BPF_X:
		emit_guard(g, "X == 0u");
		fputs("\tA %= X;\n", f);
		break;
	case BPF_ALU | BPF_AND | BPF_X: fputs("\tA &= X;\n", f); break;
	case BPF_ALU | BPF_OR | BPF_X: fputs("\tA |= X;\n", f); break;
	case BPF_ALU | BPF_XOR | BPF_X: fputs("\tA ^= X;\n", f); break;
	case BPF_ALU | BPF_LSH | BPF_X: fputs("\tA = X < 32u ? A << X : 0u;\n", f); break;
	case BPF_ALU | BPF_RSH | BPF_X: fputs("\tA = X < 32u ? A >> X : 0u;\n", f); break;
	case BPF_ALU | BPF_ADD | BPF_K: fprintf(f, "\tA += 0x%xu;\n", k); break;
	case BPF_ALU | BPF_SUB | BPF_K: fprintf(f, "\tA -= 0x%xu;\n", k); break;
	case BPF_ALU | BPF_MUL | BPF_K: fprintf(f, "\tA *= 0x%xu;\n", k); break;
	case BPF_ALU | BPF_DIV | BPF_K: fprintf(f, "\tA /= 0x%xu;\n", k); break;
	case BPF_ALU | BPF_MOD | BPF_K: fprintf(f, "\tA %%= 0x%xu;\n", k); break;
	case BPF_ALU | BPF_AND | BPF_K: fprintf(f, "\tA &= 0x%xu;\n", k); break;
	case BPF_ALU | BPF_OR | BPF_K: fprintf(f, "\tA |= 0x%xu;\n", k); break;
	case BPF_ALU | BPF_XOR | BPF_K: fprintf(f, "\tA ^= 0x%xu;\n", k); break;
	/* libpcap 1.10 accepts k >= 32 and shifts by k & 31 on x86-64/arm64 */
	case BPF_ALU | BPF_LSH | BPF_K: fprintf(f, "\tA <<= %u;\n", k & 31u); break;
	case BPF_ALU | BPF_RSH | BPF_K: fprintf(f, "\tA >>= %u;\n", k & 31u); break;
	case BPF_ALU | BPF_NEG: fputs("\tA = 0u - A;\n", f); break;
	case BPF_MISC | BPF_TAX: fputs("\tX = A;\n", f); break;
	case BPF_MISC | BPF_TXA: fputs("\tA = X;\n", f); break;
	default: /* unreachable: checked */ emit_guard(g, "1"); break;
	}
}

/* which scratch words and features a program uses */
struct usage {
	unsigned mem;      /* bit k: M[k] used */
	unsigned backward; /* backward jumps */
};

static void
scan(const struct bpf_insn *ins, unsigned n, unsigned char *lab, struct usage *u)
{
	memset(u, 0, sizeof(*u));
	memset(lab, 0, n);
	for (unsigned i = 0; i < n; i++) {
		const struct bpf_insn *in = &ins[i];

		switch (in->code) {
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX: u->mem |= 1u << in->k; break;
		default: break;
		}
		if (BPF_CLASS(in->code) != BPF_JMP)
			continue;
		if (BPF_OP(in->code) == BPF_JA) {
			if ((int32_t)in->k < 0)
				u->backward++;
			if (in->k != 0)
				lab[jump_target(i, n, in, 1)] = 1;
		} else {
			long t1, t2;
			int neg;

			cond_targets(i, in, &t1, &t2, &neg);
			if (t1 >= 0)
				lab[t1] = 1;
			if (t2 >= 0)
				lab[t2] = 1;
		}
	}
}

static void
emit_body(struct gen *g, const struct bpf_insn *ins, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (g->lab[i])
			emit_label(g, i);
		if (!(g->flags & GCAP_BPFC_F_NO_COMMENTS))
			fprintf(g->f, "\t/* %s */\n",
				bpf_image((struct bpf_insn *)&ins[i], (int)i));
		if (g->flags & GCAP_BPFC_F_TRACE)
			fprintf(g->f, "\tGCAP_BPFC_TRACE(%u, %u);\n", g->prog, i);
		emit_insn(g, i, &ins[i]);
	}
}

static void
emit_decls(FILE *f, const struct usage *u, int init)
{
	fprintf(f, "\tunsigned int A%s, X%s;\n", init ? " = 0u" : "",
		init ? " = 0u" : "");
	for (unsigned k = 0; k < BPF_MEMWORDS; k++)
		if (u->mem & (1u << k))
			fprintf(f, "\tunsigned int M%u%s;\n", k, init ? " = 0u" : "");
	if (u->backward)
		fprintf(f, "\tunsigned long long bj%s, bjmax%s;\n", init ? " = 0ull" : "",
			init ? " = 0ull" : "");
	for (unsigned k = 0; k < BPF_MEMWORDS; k++)
		if (u->mem & (1u << k))
			fprintf(f, "\t(void)M%u;\n", k);
}

/* the program's bound on backward jumps for this packet: the value of
 * GCAP_BPF_BACKWARD_LIMIT(nback, caplen), written out (the generated code
 * includes nothing) */
static void
emit_bjmax(FILE *f, unsigned nback)
{
	fprintf(f, "\tbjmax = %uull * ((unsigned long long)caplen * 8u + 16u);\n", nback);
}

static int
emit_single(struct gen *g, const struct bpf_program *prog, unsigned idx)
{
	FILE *f = g->f;
	struct usage u;
	unsigned n = prog->bf_len;

	fprintf(f, "\n/* program %u: %u instructions */\n", idx, n);
	fprintf(f,
		"GCAP_BPFC_API unsigned int\n%s_%u(const unsigned char *p, "
		"unsigned int wirelen, unsigned int caplen)\n{\n",
		g->pfx, idx);
	if (n == 0) {
		fputs("\t(void)p; (void)wirelen; (void)caplen;\n"
		      "\treturn 0xffffffffu; /* empty program: matches everything "
		      "*/\n}\n",
		      f);
		return 0;
	}
	scan(prog->bf_insns, n, g->lab, &u);
	emit_decls(f, &u, 1);
	fputs("\t(void)p; (void)wirelen; (void)caplen; (void)A; (void)X;\n", f);
	if (u.backward)
		emit_bjmax(f, u.backward);
	g->mask = 0;
	g->prog = idx;
	emit_body(g, prog->bf_insns, n);
	fputs("}\n", f);
	return 0;
}

static int
emit_mask(struct gen *g, const struct bpf_program *progs, unsigned nprogs,
	  unsigned char **labs)
{
	FILE *f = g->f;
	struct usage all = { 0 }, u;

	for (unsigned i = 0; i < nprogs; i++) {
		if (progs[i].bf_len == 0)
			continue;
		scan(progs[i].bf_insns, progs[i].bf_len, labs[i], &u);
		all.mem |= u.mem;
		all.backward |= u.backward;
	}
	fprintf(f,
		"\n/* all %u programs in one pass: bit i set iff program i "
		"returns non-zero */\n",
		nprogs);
	fprintf(f,
		"GCAP_BPFC_API unsigned long long\n%s_mask(const unsigned char *p, "
		"unsigned int wirelen, unsigned int caplen)\n{\n",
		g->pfx);
	fputs("\tunsigned long long m = 0ull;\n", f);
	emit_decls(f, &all, 0);
	fputs("\t(void)p; (void)wirelen; (void)caplen;\n", f);
	g->mask = 1;
	for (unsigned i = 0; i < nprogs; i++) {
		unsigned n = progs[i].bf_len;

		fprintf(f, "\t/* program %u */\n", i);
		if (n == 0) {
			fprintf(f, "\tm |= 1ull << %u; /* empty program */\n", i);
			continue;
		}
		scan(progs[i].bf_insns, n, labs[i], &u);
		fputs("\tA = 0u; X = 0u;", f);
		for (unsigned k = 0; k < BPF_MEMWORDS; k++)
			if (u.mem & (1u << k))
				fprintf(f, " M%u = 0u;", k);
		if (u.backward)
			fputs(" bj = 0ull;", f);
		fputs("\n", f);
		if (u.backward)
			emit_bjmax(f, u.backward);
		g->prog = i;
		g->lab = labs[i];
		emit_body(g, progs[i].bf_insns, n);
		fprintf(f, "f%u_end:\n\t;\n", i); /* C needs a statement after a label */
	}
	fputs("\t(void)A; (void)X;\n\treturn m;\n}\n", f);
	return 0;
}

static void
emit_kernel(struct gen *g)
{
	fprintf(g->f,
		"\n#if defined(__CUDACC__) || defined(__CUDACC_RTC__)\n"
		"/* batch kernel: mask[i] = %s_mask(base + off[i], wirelen[i], "
		"caplen[i]) */\n"
		"extern \"C\" __global__ void\n%s_kernel(const unsigned char *base, "
		"const unsigned long long *off,\n\tconst unsigned int *wirelen, "
		"const unsigned int *caplen, unsigned int n,\n\tunsigned long long "
		"*mask)\n"
		"{\n"
		"\tunsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n\n"
		"\tif (i < n)\n"
		"\t\tmask[i] = %s_mask(base + off[i], wirelen[i], caplen[i]);\n"
		"}\n#endif\n",
		g->pfx, g->pfx, g->pfx);
}

static int
valid_prefix(const char *s)
{
	size_t n;

	if (s == NULL || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	n = strlen(s);
	if (n > MAX_PREFIX)
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

char *
gcap_bpfc_translate(const struct bpf_program *progs, unsigned nprogs,
		    const char *fn_prefix, unsigned flags, char *errbuf)
{
	struct gen g = { .pfx = fn_prefix, .flags = flags };
	unsigned char *labs[GCAP_BPFC_MAX_PROGS] = { 0 };
	char *buf = NULL;
	size_t len = 0;
	int r = 0;

	if (progs == NULL || nprogs == 0) {
		errno = EINVAL;
		gcap_err(errbuf, EINVAL, "no program to translate");
		return NULL;
	}
	if (nprogs > GCAP_BPFC_MAX_PROGS) {
		errno = E2BIG;
		gcap_err(errbuf, E2BIG, "%u programs, at most %d in one unit", nprogs,
			 GCAP_BPFC_MAX_PROGS);
		return NULL;
	}
	if (!valid_prefix(fn_prefix)) {
		errno = EINVAL;
		gcap_err(errbuf, EINVAL,
			 "function prefix \"%s\" is not a C identifier "
			 "of at most %d characters",
			 fn_prefix ? fn_prefix : "(null)", MAX_PREFIX);
		return NULL;
	}
	if (flags & ~(GCAP_BPFC_F_KERNEL | GCAP_BPFC_F_NO_COMMENTS | GCAP_BPFC_F_TRACE)) {
		errno = EINVAL;
		gcap_err(errbuf, EINVAL, "unknown flags 0x%x", flags);
		return NULL;
	}
	for (unsigned i = 0; i < nprogs; i++) {
		char what[32];

		snprintf(what, sizeof(what), "program %u", i);
		r = check_insns(progs[i].bf_insns, progs[i].bf_len, errbuf, what);
		if (r < 0) {
			errno = -r;
			return NULL;
		}
		labs[i] = malloc(progs[i].bf_len ? progs[i].bf_len : 1);
		if (labs[i] == NULL) {
			r = -ENOMEM;
			goto out;
		}
	}
	g.f = open_memstream(&buf, &len);
	if (g.f == NULL) {
		r = -ENOMEM;
		goto out;
	}
	fputs(prelude, g.f);
	for (unsigned i = 0; i < nprogs; i++) {
		g.lab = labs[i];
		emit_single(&g, &progs[i], i);
	}
	emit_mask(&g, progs, nprogs, labs);
	if (flags & GCAP_BPFC_F_KERNEL)
		emit_kernel(&g);
	if (ferror(g.f))
		r = -ENOMEM;
	if (fclose(g.f) != 0)
		r = -ENOMEM;
out:
	for (unsigned i = 0; i < nprogs; i++)
		free(labs[i]);
	if (r < 0) {
		free(buf);
		errno = -r;
		gcap_err(errbuf, -r, "out of memory translating BPF");
		return NULL;
	}
	return buf;
}
