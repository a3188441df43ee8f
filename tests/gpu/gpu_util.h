/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the GPU test programs: the GPU probe (in a child process:
 * CUDA does not survive fork(), and check forks every test, so the parent
 * must not initialise the driver), a clock, and where the corpus is.
 */
#ifndef GCAP_TEST_GPU_UTIL_H
#define GCAP_TEST_GPU_UTIL_H

#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpucap/gcap_gpu.h"

/*
 * @return 0 when a GPU is usable (msg: "N GPU(s)"), 1 when not (msg: why),
 *         -1 when the child could not run.
 */
static inline int
probe_in_child(char *msg, size_t len)
{
	int fd[2], st = 0;
	pid_t pid;
	ssize_t r;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		char err[GCAP_ERRBUF_SIZE] = "";
		int n = 0, rc = gcap_gpu_probe(&n, err);

		if (rc == 0)
			snprintf(err, sizeof(err), "%d GPU(s)", n);
		r = write(fd[1], err, strlen(err));
		(void)r;
		_exit(rc == 0 ? 0 : 1);
	}
	close(fd[1]);
	r = read(fd[0], msg, len - 1);
	msg[r > 0 ? r : 0] = '\0';
	close(fd[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* seconds on the monotonic clock */
static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* mix-en10mb.pcap beside the source tree, else $GCAP_GPU_CORPUS; NULL if
 * neither is readable */
static inline const char *
corpus_path(void)
{
	const char *root = getenv("GCAP_SOURCE_ROOT");
	const char *env = getenv("GCAP_GPU_CORPUS");
	static char p[4096];

	snprintf(p, sizeof(p), "%s/../shared/data/bench/mix-en10mb.pcap",
		 root ? root : ".");
	if (access(p, R_OK) == 0)
		return p;
	if (env != NULL && access(env, R_OK) == 0)
		return env;
	return NULL;
}

#endif /* GCAP_TEST_GPU_UTIL_H */
