/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Reference classic BPF interpreter in plain C, header only, for the host
 * and for CUDA device code (nvcc or NVRTC: this header includes nothing).
 *
 * Semantics are those of libpcap's bpf_filter() (1.10) for every program
 * gcap_bpfc_check() accepts, with the same two well-defined choices the
 * translator makes (see gcap_bpfc.h):
 *  - a constant shift by 32 or more shifts by (k & 31), which is what
 *    libpcap 1.10's unchecked `A <<= k` does on x86-64 and arm64; a shift by
 *    X >= 32 gives 0 as in bpf_filter();
 *  - backward unconditional jumps (libpcap emits them for "protochain")
 *    are followed as bpf_filter() follows them, up to a bound no program
 *    libpcap emits can reach (GCAP_BPF_BACKWARD_LIMIT); past it, and at a
 *    jump to itself, the program returns 0 instead of looping forever,
 *    which a GPU thread must not.
 * Scratch memory starts zeroed. Opcodes bpf_filter() does not know return
 * 0 (bpf_filter() aborts on them), and so does running off the program.
 *
 * On the GPU it is the "interpreter" path of the persistent kernel; on the
 * host it is tested against bpf_filter() (tests/bpfc).
 */
#ifndef GCAP_BPF_INTERP_H
#define GCAP_BPF_INTERP_H

#ifndef GCAP_BPF_INTERP_FN
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GCAP_BPF_INTERP_FN static __device__
#else
#define GCAP_BPF_INTERP_FN static inline
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * One instruction, laid out exactly as libpcap's struct bpf_insn (so a
 * bf_insns array can be passed as is), without needing pcap/bpf.h.
 */
struct gcap_bpf_insn {
	unsigned short code; /**< opcode */
	unsigned char jt;    /**< jump offset if true */
	unsigned char jf;    /**< jump offset if false */
	unsigned int k;      /**< generic field */
};

/**
 * Backward jumps a program may take on one packet: nback (the program's
 * backward `ja` instructions) times (8 x caplen + 16). libpcap emits a
 * backward jump only to close a protochain loop, and the rest of a program
 * only jumps forward, so each loop is entered at most once. A turn of the
 * loop is a function of its state at the loop's head: A, the header type,
 * one of the five it follows (hop-by-hop, routing, fragment, destination
 * options, AH), and X, an offset below caplen. A run that meets a state
 * twice loops forever; one that ends takes at most 5 x caplen turns,
 * below the bound. A program past the bound (one that would loop forever,
 * in bpf_filter() too) returns 0. Counted in 64 bits.
 */
#define GCAP_BPF_BACKWARD_LIMIT(nback, caplen) \
	((unsigned long long)(nback) * (8u * (unsigned long long)(caplen) + 16u))

/**
 * Run a classic BPF program on one packet.
 *
 * @param pc       the program (may be NULL when len is 0)
 * @param len      number of instructions; 0 means "accept everything"
 * @param p        packet bytes (caplen of them readable)
 * @param wirelen  length on the wire
 * @param caplen   captured length (bytes at p)
 * @return what bpf_filter() returns: the RET value, 0 when a load is past
 *         caplen, on division or modulo by zero, on an unknown opcode; and
 *         0xffffffff when len is 0. Never fails otherwise.
 */
GCAP_BPF_INTERP_FN unsigned int
gcap_bpf_interp(const struct gcap_bpf_insn *pc, unsigned int len, const unsigned char *p,
		unsigned int wirelen, unsigned int caplen)
{
	unsigned int A = 0, X = 0, k, i = 0;
	unsigned int mem[16] = { 0 };
	unsigned long long bj = 0, bjmax = 0; /* bjmax: counted at the first */

	if (len == 0)
		return 0xffffffffu;
	for (;;) {
		const struct gcap_bpf_insn *in;

		if (i >= len)
			return 0;
		in = &pc[i++];
		k = in->k;
		switch (in->code) {
		case 0x06: /* ret #k */ return k;
		case 0x16: /* ret a */ return A;
		case 0x20: /* ld [k] */
			if (k > caplen || 4u > caplen - k)
				return 0;
			A = (unsigned int)p[k] << 24 | (unsigned int)p[k + 1] << 16 |
			    (unsigned int)p[k + 2] << 8 | p[k + 3];
			break;
		case 0x28: /* ldh [k] */
			if (k > caplen || 2u > caplen - k)
				return 0;
			A = (unsigned int)p[k] << 8 | p[k + 1];
			break;
		case 0x30: /* ldb [k] */
			if (k >= caplen)
				return 0;
			A = p[k];
			break;
		case 0x40: /* ld [x + k] */
			if (k > caplen || X > caplen - k || 4u > caplen - k - X)
				return 0;
			k += X;
			A = (unsigned int)p[k] << 24 | (unsigned int)p[k + 1] << 16 |
			    (unsigned int)p[k + 2] << 8 | p[k + 3];
			break;
		case 0x48: /* ldh [x + k] */
			if (k > caplen || X > caplen - k || 2u > caplen - k - X)
				return 0;
			k += X;
			A = (unsigned int)p[k] << 8 | p[k + 1];
			break;
		case 0x50: /* ldb [x + k] */
			if (k >= caplen || X >= caplen - k)
				return 0;
			A = p[k + X];
			break;
		case 0x80: /* ld #pktlen */ A = wirelen; break;
		case 0x81: /* ldx #pktlen */ X = wirelen; break;
		case 0xb1: /* ldxb 4*([k]&0xf) */
			if (k >= caplen)
				return 0;
			X = (unsigned int)(p[k] & 0xf) << 2;
			break;
		case 0x00: /* ld #k */ A = k; break;
		case 0x01: /* ldx #k */ X = k; break;
		case 0x60: /* ld M[k] */
			if (k >= 16u)
				return 0;
			A = mem[k];
			break;
		case 0x61: /* ldx M[k] */
			if (k >= 16u)
				return 0;
			X = mem[k];
			break;
		case 0x02: /* st M[k] */
			if (k >= 16u)
				return 0;
			mem[k] = A;
			break;
		case 0x03: /* stx M[k] */
			if (k >= 16u)
				return 0;
			mem[k] = X;
			break;
		case 0x05: /* ja */
			if ((int)k < 0) {
				if (k == 0xffffffffu)
					return 0;
				if (bjmax == 0) {
					unsigned int nback = 0;

					for (unsigned int j = 0; j < len; j++)
						nback += pc[j].code == 0x05 &&
							 (int)pc[j].k < 0;
					bjmax = GCAP_BPF_BACKWARD_LIMIT(nback, caplen);
				}
				if (++bj > bjmax)
					return 0;
			}
			i += k; /* modulo 2^32: backward jumps wrap */
			break;
		case 0x25: i += A > k ? in->jt : in->jf; break;
		case 0x35: i += A >= k ? in->jt : in->jf; break;
		case 0x15: i += A == k ? in->jt : in->jf; break;
		case 0x45: i += (A & k) ? in->jt : in->jf; break;
		case 0x2d: i += A > X ? in->jt : in->jf; break;
		case 0x3d: i += A >= X ? in->jt : in->jf; break;
		case 0x1d: i += A == X ? in->jt : in->jf; break;
		case 0x4d: i += (A & X) ? in->jt : in->jf; break;
		case 0x0c: A += X; break;
		case 0x1c: A -= X; break;
		case 0x2c: A *= X; break;
		case 0x3c:
			if (X == 0)
				return 0;
			A /= X;
			break;
		case 0x9c:
			if (X == 0)
				return 0;
			A %= X;
			break;
		case 0x5c: A &= X; break;
		case 0x4c: A |= X; break;
		case 0xac: A ^= X; break;
		case 0x6c: A = X < 32u ? A << X : 0u; break;
		case 0x7c: A = X < 32u ? A >> X : 0u; break;
		case 0x04: A += k; break;
		case 0x14: A -= k; break;
		case 0x24: A *= k; break;
		case 0x34:
			if (k == 0)
				return 0;
			A /= k;
			break;
		case 0x94:
			if (k == 0)
				return 0;
			A %= k;
			break;
		case 0x54: A &= k; break;
		case 0x44: A |= k; break;
		case 0xa4: A ^= k; break;
		case 0x64: A <<= (k & 31u); break;
		case 0x74: A >>= (k & 31u); break;
		case 0x84: A = 0u - A; break;
		case 0x07: X = A; break; /* tax */
		case 0x87: A = X; break; /* txa */
		default: return 0;
		}
	}
}

#ifdef __cplusplus
}
#endif

#endif /* GCAP_BPF_INTERP_H */
