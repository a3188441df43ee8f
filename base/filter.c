/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_filter.h"

int
gcap_filter_compile_opt(pcap_t *p, const char *expr, int linktype, uint32_t snaplen,
			bool optimize, struct bpf_program *prog, char *errbuf)
{
	bool empty = expr == NULL || expr[0] == '\0';
	pcap_t *h = p;
	int r = 0;

	memset(prog, 0, sizeof(*prog));
	/* without a handle the empty expression needs no program; on one,
	 * libpcap refuses a link type it does not know there, as tcpdump
	 * does for such a file */
	if (empty && p == NULL)
		return 0;
	if (h == NULL)
		h = pcap_open_dead(linktype, (int)snaplen);
	if (h == NULL)
		return gcap_err(errbuf, ENOMEM, "pcap_open_dead failed");
	/* as tcpdump -r: netmask 0 (so 'ip broadcast' compiles) */
	if (pcap_compile(h, prog, empty ? "" : expr, optimize ? 1 : 0, 0) != 0) {
		r = gcap_err(errbuf, EINVAL, "%s", pcap_geterr(h));
		memset(prog, 0, sizeof(*prog));
	} else if (empty) { /* every packet: the executors' empty program */
		gcap_filter_free(prog);
	}
	if (h != p)
		pcap_close(h);
	return r;
}

int
gcap_filter_compile(const char *expr, int linktype, uint32_t snaplen,
		    struct bpf_program *prog, char *errbuf)
{
	return gcap_filter_compile_opt(NULL, expr, linktype, snaplen, true, prog, errbuf);
}

int
gcap_filter_compile_on(pcap_t *p, const char *expr, struct bpf_program *prog,
		       char *errbuf)
{
	return gcap_filter_compile_opt(p, expr, 0, 0, true, prog, errbuf);
}

void
gcap_filter_free(struct bpf_program *prog)
{
	if (prog != NULL && prog->bf_insns != NULL)
		pcap_freecode(prog);
	if (prog != NULL)
		memset(prog, 0, sizeof(*prog));
}

uint32_t
gcap_filter_run(const struct bpf_program *prog, const uint8_t *pkt, uint32_t wirelen,
		uint32_t caplen)
{
	if (prog->bf_len == 0)
		return 1;
	return bpf_filter(prog->bf_insns, pkt, wirelen, caplen);
}

int
gcap_filter_dump(FILE *f, const struct bpf_program *prog, int level)
{
	const struct bpf_insn *insn = prog->bf_insns;
	unsigned n = prog->bf_len;

	if (n == 0) {
		/* what pcap_compile gives for an empty expression */
		static const struct bpf_insn accept = BPF_STMT(BPF_RET | BPF_K, 262144);

		insn = &accept;
		n = 1;
	}
	/* the three formats of tcpdump -d, -dd and -ddd (bpf_dump()) */
	if (level > 2) {
		if (fprintf(f, "%u\n", n) < 0)
			return -EIO;
		for (unsigned i = 0; i < n; i++)
			if (fprintf(f, "%u %u %u %u\n", insn[i].code, insn[i].jt,
				    insn[i].jf, insn[i].k) < 0)
				return -EIO;
	} else if (level > 1) {
		for (unsigned i = 0; i < n; i++)
			if (fprintf(f, "{ 0x%x, %d, %d, 0x%08x },\n", insn[i].code,
				    insn[i].jt, insn[i].jf, insn[i].k) < 0)
				return -EIO;
	} else {
		for (unsigned i = 0; i < n; i++)
			if (fprintf(f, "%s\n", bpf_image(&insn[i], (int)i)) < 0)
				return -EIO;
	}
	return fflush(f) == 0 ? 0 : -EIO;
}

char *
gcap_filter_join(int argc, char *const argv[])
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (s == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	p = s;
	*p = '\0';
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);

		if (i > 0)
			*p++ = ' ';
		memcpy(p, argv[i], l);
		p += l;
		*p = '\0';
	}
	return s;
}
