/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a reader of a capture file takes of its own, told before it is
 * opened: the finders' lists of a plain file, the decompressing threads'
 * slots of a compressed one (gcap_capfile_mem()). The parts that size
 * them say how much; this only asks the file which parts it will get.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capfile_internal.h"

/* zstd's skippable frames (0x184D2A50-5F, little-endian) may come first */
static bool
zstd_skippable(const uint8_t *h)
{
	return h[0] >= 0x50 && h[0] <= 0x5f && h[1] == 0x2a && h[2] == 0x4d &&
	       h[3] == 0x18;
}

int64_t
gcap_capfile_mem(const char *path, const struct gcap_capfile_conf *conf)
{
	uint8_t head[4] = { 0 };
	const struct gcap_cf_codec *k;
	struct stat st;
	ssize_t n;
	int fd;

	/* a pipe is neither mapped nor known in advance; opening a FIFO
	 * would wait for (or cut off) its writer, so only regular files
	 * are opened, and without waiting */
	if (strcmp(path, "-") == 0)
		return 0;
	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	n = pread(fd, head, sizeof(head), 0);
	close(fd);
	if (n < 0)
		return -EIO;
	k = n == 4 && zstd_skippable(head) ? &gcap_cf_zstd :
					     gcap_cf_codec_find(head, (size_t)n);
	if (k == NULL)
		return (int64_t)gcap_cf_find_mem((uint64_t)st.st_size, conf->finders);
	if (conf->decoders > 1 && k->cut != NULL)
		return (int64_t)gcap_cf_par_mem(k, conf->decoders);
	return (int64_t)gcap_cf_ahead_mem();
}
