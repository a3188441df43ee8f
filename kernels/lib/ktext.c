/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a loaded object's code lies: its executable segments, from the
 * dynamic linker's list (dl_iterate_phdr). The loader records them for a
 * kernel when it loads it, so that a fatal-signal handler can tell a
 * fault in the kernel's code without calling dladdr() (not
 * async-signal-safe).
 */
#include <errno.h>
#include <link.h>
#include <stdbool.h>

#include "ktext.h"

struct find {
	uintptr_t addr;
	uintptr_t lo, hi, base;
};

/* dl_iterate_phdr's callback: 1 (stop) on the object holding f->addr. */
static int
text_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	uintptr_t lo = 0, hi = 0;
	bool mine = false;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		mine = mine || (f->addr >= a && f->addr < b);
		lo = lo == 0 || a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	if (!mine)
		return 0;
	f->lo = lo;
	f->hi = hi;
	f->base = info->dlpi_addr;
	return 1;
}

int
gcap_ktext_find(const void *addr, uintptr_t *lo, uintptr_t *hi, uintptr_t *base)
{
	struct find f = { .addr = (uintptr_t)addr };

	if (dl_iterate_phdr(text_of, &f) == 0)
		return -ENOENT;
	*lo = f.lo;
	*hi = f.hi;
	*base = f.base;
	return 0;
}
