/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fatal signal while an inline kernel is loaded (its code runs in this
 * process, unchecked): one line naming the kernel and where it faulted,
 * then the signal's default action (core dump, status of the signal).
 *
 * A SIGBUS is first offered to the capture file reader's guard
 * (gcap_capfile_fault()): a read past the end of a -r file that another
 * process cut short is no crash, the input ends there with an error. So
 * the default action is restored by the handler itself, not on entry
 * (SA_RESETHAND): several threads may take that SIGBUS at once.
 *
 * The handler only calls write(2), sigaction and raise: the kernel may
 * have broken the heap, and the writer may be in the middle of its buffer,
 * so nothing is flushed from here. The outputs hold what the writer wrote
 * before the fault (it flushes at least every second), and only whole
 * records: the writer's buffer holds whole records and the header is
 * written at open, so each file reads back as a valid capture.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "gpucap/gcap_capfile.h"
#include "gpucap/gcap_khost.h"
#include "run.h"

/* What the handler prints, prepared when the kernel is loaded. */
static char g_kpath[1024];
static uintptr_t g_lo, g_hi, g_base;

static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };

/* A line built in a fixed buffer without stdio (async-signal-safe). */
struct line {
	char s[1536];
	size_t n;
};

static void
put(struct line *l, const char *s)
{
	while (*s != '\0' && l->n < sizeof(l->s) - 1)
		l->s[l->n++] = *s++;
}

static void
put_hex(struct line *l, uintptr_t v)
{
	char d[2 + 2 * sizeof(v) + 1];
	int i = (int)sizeof(d) - 1;

	d[i] = '\0';
	do {
		d[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0 && i > 2);
	d[--i] = 'x';
	d[--i] = '0';
	put(l, d + i);
}

static const char *
sig_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	default: return "a fatal signal";
	}
}

/* The faulting instruction, or 0 where this architecture's context is
 * not known here. */
static uintptr_t
fault_pc(const void *ctx)
{
	const ucontext_t *uc = ctx;

	if (uc == NULL)
		return 0;
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	return 0;
#endif
}

static void
on_fatal(int sig, siginfo_t *si, void *ctx)
{
	struct line l = { .n = 0 };
	uintptr_t pc = fault_pc(ctx);
	bool in_kernel = pc >= g_lo && pc < g_hi;
	struct sigaction dfl;

	if (gcap_capfile_fault(sig, si))
		return; /* the read runs again, on zeros */
	put(&l, "gpu-capture: ");
	if (in_kernel) {
		put(&l, "inline kernel ");
		put(&l, g_kpath);
		put(&l, " faulted: ");
		put(&l, sig_name(sig));
	} else {
		put(&l, sig_name(sig));
		put(&l, " outside the inline kernel's code (kernel ");
		put(&l, g_kpath);
		put(&l, " loaded)");
	}
	if (sig == SIGSEGV || sig == SIGBUS) {
		put(&l, " at address ");
		put_hex(&l, (uintptr_t)si->si_addr);
	}
	if (pc != 0) {
		put(&l, ", PC ");
		put_hex(&l, pc);
		if (in_kernel) {
			put(&l, " (its object + ");
			put_hex(&l, pc - g_base);
			put(&l, ")");
		}
	}
	put(&l, "; the outputs hold the records written before it\n");
	(void)!write(STDERR_FILENO, l.s, l.n);
	/* the default action: on return the faulting instruction runs again,
	 * or the raised signal is taken */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	(void)sigaction(sig, &dfl, NULL);
	raise(sig);
}

void
app_crash_arm(const struct gcap_khost *k)
{
	struct sigaction sa;
	const char *p = gcap_khost_path(k);

	if (gcap_khost_text(k, &g_lo, &g_hi, &g_base) < 0)
		g_lo = g_hi = 0;
	if (strlen(p) >= sizeof(g_kpath))
		p = gcap_khost_object(k); /* shorter: the cached object */
	strncpy(g_kpath, p, sizeof(g_kpath) - 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		(void)sigaction(fatal[i], &sa, NULL);
}
