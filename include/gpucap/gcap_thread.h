/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Threads that leave the program its signals. The signals a program stops
 * on or is asked things by (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
 * SIGUSR2) go to one thread of the process that does not block them; the
 * threads gpucap starts, and those DPDK and CUDA start while they are
 * held, block them, so that the program's handlers run on the program's
 * own thread (which may hold them a moment: a kernel's compile does,
 * until its files are gone).
 */
#ifndef GCAP_THREAD_H
#define GCAP_THREAD_H

#include <pthread.h>
#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The set: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2. */
void gcap_sigs_set(sigset_t *set);

/** Block the set in the calling thread; old receives its mask before. */
void gcap_sigs_hold(sigset_t *old);

/** Give the calling thread back the mask gcap_sigs_hold() saved. */
void gcap_sigs_restore(const sigset_t *old);

/**
 * pthread_create() with the set blocked in the new thread (it inherits
 * the caller's mask, the set added).
 * @return 0, or pthread_create()'s error number.
 */
int gcap_thread_start(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *),
		      void *arg);

#ifdef __cplusplus
}
#endif

#endif /* GCAP_THREAD_H */
