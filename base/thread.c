/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Threads that leave the program its signals (see gcap_thread.h): the set
 * is held around each thread's creation, which the thread inherits.
 */
#include "gpucap/gcap_thread.h"

void
gcap_sigs_set(sigset_t *set)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

	sigemptyset(set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(set, sigs[i]);
}

void
gcap_sigs_hold(sigset_t *old)
{
	sigset_t set;

	gcap_sigs_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void
gcap_sigs_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int
gcap_thread_start(pthread_t *thr, const pthread_attr_t *attr, void *(*fn)(void *),
		  void *arg)
{
	sigset_t old;
	int r;

	gcap_sigs_hold(&old);
	r = pthread_create(thr, attr, fn, arg);
	gcap_sigs_restore(&old);
	return r;
}
