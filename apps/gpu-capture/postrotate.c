/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcpdump's -z COMMAND: on each file a rotation closes, COMMAND FILE is
 * run as tcpdump runs it: a child process (vfork: nothing of the capture's
 * memory is copied) execs COMMAND through PATH, never through a shell,
 * at the lowest priority so that it does not compete with the capture,
 * as the user the process runs as by then. A SIGCHLD handler reaps each
 * child as it ends: none is left a zombie. The capture never waits for
 * one.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "meta.h"

static void
on_child(int sig)
{
	int e = errno;

	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = e;
}

int
app_postrotate_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGCHLD, &sa, NULL) == 0 ? 0 : -1;
}

void
app_postrotate_run(void *arg, const char *path)
{
	const char *cmd = arg;
	char *const argv[] = { (char *)cmd, (char *)path, NULL };
	pid_t pid = vfork();

	if (pid == 0) {
		/* the child: only calls that are safe between vfork and exec */
		(void)setpriority(PRIO_PROCESS, 0, 19);
		execvp(cmd, argv);
		_exit(127);
	}
	/* pid < 0: no process, the file stays as it is (as tcpdump) */
}
