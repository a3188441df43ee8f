/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output files opened so that a symbolic link planted in a sticky,
 * world-writable directory is refused (see gcap_outfile.h): a root run
 * writing /tmp/x.pcap must not overwrite or create another file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gpucap/gcap_common.h"
#include "gpucap/gcap_outfile.h"

/* Whether path's directory is sticky and writable by others. */
static bool
in_shared_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *sl = strrchr(path, '/');
	struct stat st;

	if (sl == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (sl == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(sl - path) >= sizeof(dir))
		return true; /* cannot tell: the safe side */
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(sl - path), path);
	if (stat(dir, &st) != 0)
		return false; /* the open fails on its own */
	return (st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH);
}

int
gcap_open_output(const char *path, int flags, mode_t mode, char *errbuf)
{
	bool shared = in_shared_dir(path);
	int fd = open(path, flags | (shared ? O_NOFOLLOW : 0), mode);

	if (fd >= 0)
		return fd;
	if (errno == ELOOP && shared)
		return gcap_err(errbuf, ELOOP,
				"cannot write '%s': a symbolic link in a sticky "
				"world-writable directory, not followed",
				path);
	return gcap_err(errbuf, errno, "cannot write '%s': %s", path, strerror(errno));
}
