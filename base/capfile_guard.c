/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mapped inputs' guard against a file cut short while it is read: a
 * read past the new end raises SIGBUS, which this file turns into zeros
 * and a mark the reader checks. Many threads read a mapping (the reader,
 * the finders, the populating thread, and through the descriptors the
 * copiers, the workers and the writer), so no one thread could recover
 * by a jump: the handler maps anonymous zero pages over the mapping from
 * the faulting page to its end, notes where, and returns; the access runs
 * again and reads zeros. The reader (capfile.c) looks at the mark once
 * per batch and ends the input where the file now ends.
 *
 * The handler is installed once, over what was there, and passes every
 * other SIGBUS on to it (or to the default action: a core and the status
 * of the signal, as without it). A handler installed over it offers
 * SIGBUS to gcap_capfile_fault() first.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capfile_internal.h"

/* mappings guarded at once: inputs open together (gpu-capture takes up
 * to 256); the handler scans them only on a SIGBUS */
#define GUARD_SLOTS 256u

_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_LONG_LOCK_FREE == 2,
	       "the handler's loads must be lock-free");

struct gcap_cf_guard {
	_Atomic uintptr_t base; /* the mapping (page-aligned); 0: a free slot */
	size_t len;
	_Atomic size_t from; /* zeros from here on (a page), SIZE_MAX: none */
};

static struct gcap_cf_guard g_slot[GUARD_SLOTS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* claims, install */
static bool g_installed;                                   /* under g_lock */
static struct sigaction g_prev; /* what the handler chains to */
static size_t g_page;           /* set before the handler is installed */

/* Zeros over g's mapping (at base) from the page of a to its end, the mark
 * first: a thread that reads the zeros then sees it (gcap_cf_guard_probe's
 * fence). @return false where the mapping could not be made (the fault
 * repeats: the caller lets it kill). */
static bool
guard_cut(struct gcap_cf_guard *g, uintptr_t base, uintptr_t a)
{
	uintptr_t pg = a & ~(uintptr_t)(g_page - 1);
	size_t off = (size_t)(pg - base);
	size_t cur = atomic_load(&g->from);
	int e = errno; /* the interrupted code's */
	void *m;

	while (off < cur && !atomic_compare_exchange_weak(&g->from, &cur, off))
		;
	m = mmap((void *)pg, base + g->len - pg, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	errno = e;
	return m != MAP_FAILED;
}

bool
gcap_capfile_fault(int sig, const siginfo_t *si)
{
	uintptr_t a;

	/* a read past a file's end: not a sent signal, not a memory error */
	if (sig != SIGBUS || si == NULL || si->si_code != BUS_ADRERR)
		return false;
	a = (uintptr_t)si->si_addr;
	for (unsigned i = 0; i < GUARD_SLOTS; i++) {
		struct gcap_cf_guard *g = &g_slot[i];
		uintptr_t b = atomic_load_explicit(&g->base, memory_order_acquire);

		if (b != 0 && a >= b && a - b < g->len)
			return guard_cut(g, b, a);
	}
	return false;
}

/* SIGBUS: a guarded mapping's, or the previous action's. */
static void
on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	void (*h)(int) = g_prev.sa_handler;

	if (gcap_capfile_fault(sig, si))
		return;
	if (h == SIG_IGN && si->si_code <= 0)
		return; /* a sent SIGBUS, ignored as before */
	if (h == SIG_DFL || h == SIG_IGN || (g_prev.sa_flags & SA_RESETHAND)) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		(void)sigaction(sig, &dfl, NULL);
	}
	if (h == SIG_DFL || h == SIG_IGN) {
		/* a fault runs again and takes the default action; a sent
		 * signal is sent again, taken on return */
		if (si->si_code <= 0)
			(void)raise(sig);
		return;
	}
	if (g_prev.sa_flags & SA_SIGINFO)
		g_prev.sa_sigaction(sig, si, ctx);
	else
		h(sig);
}

/* Install the handler, keeping what was there (under g_lock). */
static int
guard_install(void)
{
	struct sigaction sa;
	long pg = sysconf(_SC_PAGESIZE);

	g_page = pg > 0 ? (size_t)pg : 4096u;
	if (sigaction(SIGBUS, NULL, &g_prev) != 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) != 0)
		return -errno;
	g_installed = true;
	return 0;
}

struct gcap_cf_guard *
gcap_cf_guard_add(const void *map, size_t len)
{
	struct gcap_cf_guard *g = NULL;

	pthread_mutex_lock(&g_lock);
	if (g_installed || guard_install() == 0) {
		for (unsigned i = 0; i < GUARD_SLOTS && g == NULL; i++)
			if (atomic_load_explicit(&g_slot[i].base, memory_order_relaxed) ==
			    0)
				g = &g_slot[i];
	}
	if (g != NULL) {
		g->len = len;
		atomic_store(&g->from, SIZE_MAX);
		atomic_store_explicit(&g->base, (uintptr_t)map, memory_order_release);
	}
	pthread_mutex_unlock(&g_lock);
	return g;
}

void
gcap_cf_guard_del(struct gcap_cf_guard *g)
{
	if (g == NULL)
		return;
	pthread_mutex_lock(&g_lock);
	atomic_store_explicit(&g->base, 0, memory_order_release);
	pthread_mutex_unlock(&g_lock);
}

size_t
gcap_cf_guard_probe(const struct gcap_cf_guard *g, size_t pos, bool *last)
{
	size_t at = (pos + g_page - 1) & ~(g_page - 1);
	uintptr_t b = atomic_load_explicit(&g->base, memory_order_relaxed);

	*last = at >= g->len;
	if (!*last)
		(void)*(volatile const uint8_t *)(b + at);
	/* the zeros this thread read before, then the mark: set before they
	 * were mapped, so seen */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&g->from, memory_order_relaxed);
}
