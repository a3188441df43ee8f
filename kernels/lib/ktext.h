/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a loaded object's code lies (ktext.c), for the loader. */
#ifndef GCAP_KTEXT_H
#define GCAP_KTEXT_H

#include <stdint.h>

/* The executable segments of the loaded object that holds addr: *lo the
 * lowest address, *hi the end of the highest, *base its load bias (an
 * address less base is what addr2line takes). 0, or -ENOENT (no loaded
 * object holds addr). Not async-signal-safe: call it at load. */
int gcap_ktext_find(const void *addr, uintptr_t *lo, uintptr_t *hi, uintptr_t *base);

#endif /* GCAP_KTEXT_H */
