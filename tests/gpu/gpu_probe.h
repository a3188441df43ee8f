/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test helper: probe for a GPU in a child process. CUDA does not survive
 * fork(), and check forks every test: the parent must not initialise the
 * driver before the tests run.
 */
#ifndef GCAP_TEST_GPU_PROBE_H
#define GCAP_TEST_GPU_PROBE_H

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
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

#endif /* GCAP_TEST_GPU_PROBE_H */
