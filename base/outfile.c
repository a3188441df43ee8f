/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output files opened so that no other user can redirect or take them
 * (see gcap_outfile.h): with the identity (file-system ids and groups)
 * of the user a run drops to; in a directory other users can write (a
 * sticky /tmp, a group's, another user's), symbolic links followed only
 * where the kernel's fs.protected_symlinks would follow them in /tmp,
 * and another user's file or FIFO refused, as fs.protected_regular=2
 * and fs.protected_fifos=2 would there, whatever those sysctls say.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpucap/gcap_common.h"
#include "gpucap/gcap_outfile.h"

/* gcap_outfile_as: set once, before any thread that opens outputs */
static bool as_set;
static uid_t as_uid;
static gid_t as_gid;
static gid_t as_groups[GCAP_OUTFILE_GROUPS_MAX];
static int as_ngroups;

int
gcap_outfile_as(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	if (ngroups < 0 || ngroups > GCAP_OUTFILE_GROUPS_MAX ||
	    (ngroups > 0 && groups == NULL))
		return -EINVAL;
	memcpy(as_groups, groups, (size_t)ngroups * sizeof(*groups));
	as_ngroups = ngroups;
	as_uid = uid;
	as_gid = gid;
	as_set = true;
	return 0;
}

/* Whether the opens take another identity: root, for a run that drops
 * to a user later. */
static bool
opens_as(void)
{
	return as_set && geteuid() == 0 && as_uid != 0;
}

/* The user the kernel checks an open against. */
static uid_t
opener(void)
{
	return opens_as() ? as_uid : geteuid();
}

/* open(2) as that user: its groups (the setgroups system call itself,
 * not glibc's, which would change every thread), then setfsgid and
 * setfsuid, all the calling thread's alone (the kernel drops root's file
 * capabilities with the uid and gives them back after), so the open is
 * checked as the user's own after the drop would be. */
static int
open_as(const char *path, int flags, mode_t mode)
{
	gid_t saved[GCAP_OUTFILE_GROUPS_MAX];
	int fd, e, nsaved;

	if (!opens_as())
		return open(path, flags, mode);
	nsaved = getgroups(GCAP_OUTFILE_GROUPS_MAX, saved);
	if (nsaved < 0 || syscall(SYS_setgroups, as_ngroups, as_groups) != 0)
		return -1; /* errno set: the open is not made as root */
	(void)setfsgid(as_gid);
	(void)setfsuid(as_uid);
	fd = open(path, flags, mode);
	e = errno;
	(void)setfsuid(0);
	(void)setfsgid(getegid());
	(void)syscall(SYS_setgroups, nsaved, saved);
	errno = e;
	return fd;
}

/* path's directory (len bytes at dir). @return false when too long. */
static bool
parent_of(const char *path, size_t plen, char *dir, size_t len)
{
	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	while (plen > 0 && path[plen - 1] != '/')
		plen--;
	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	if (plen == 0)
		return snprintf(dir, len, ".") < (int)len;
	return snprintf(dir, len, "%.*s", (int)plen, path) < (int)len;
}

/* Whether a directory lets a user other than the opener and root put or
 * swap names in it: writable by others (a sticky /tmp among them) or by
 * its group, or another user's own. */
static bool
others_write(const struct stat *d)
{
	return (d->st_mode & (S_IWOTH | S_IWGRP)) ||
	       (d->st_uid != 0 && d->st_uid != opener());
}

/* What a directory others can write may hold for the opener: its own,
 * or the directory owner's (the kernel's rule for links, regular files
 * and FIFOs in a sticky one). */
static bool
owned_ok(const struct stat *st, const struct stat *d)
{
	return st->st_uid == opener() || st->st_uid == d->st_uid;
}

/* Every directory on path's way: a symbolic link in a directory others
 * can write that is neither the opener's nor the directory owner's is
 * refused, as fs.protected_symlinks refuses it in /tmp (the last name is
 * opened with O_NOFOLLOW there). A name missing on
 * the way fails here: it must not be made a link between this check and
 * the open. @return 0, or -errno with errbuf set. */
static int
check_way(const char *path, char *errbuf)
{
	char pre[PATH_MAX], dir[PATH_MAX];
	struct stat st, d;
	size_t n = strlen(path);

	/* the last name's start: what comes before it is the way */
	while (n > 0 && path[n - 1] == '/')
		n--;
	while (n > 0 && path[n - 1] != '/')
		n--;
	for (size_t i = 1; i < n; i++) {
		if (path[i] != '/' || path[i - 1] == '/')
			continue;
		if (i >= sizeof(pre))
			return gcap_err(errbuf, ENAMETOOLONG, "cannot write '%s': %s",
					path, strerror(ENAMETOOLONG));
		memcpy(pre, path, i);
		pre[i] = '\0';
		if (lstat(pre, &st) != 0) /* as the open would say it */
			return gcap_err(errbuf, errno, "cannot write '%s': %s", path,
					strerror(errno));
		if (!S_ISLNK(st.st_mode))
			continue;
		if (!parent_of(pre, i, dir, sizeof(dir)))
			return gcap_err(errbuf, ENAMETOOLONG, "cannot write '%s': %s",
					path, strerror(ENAMETOOLONG));
		if (stat(dir, &d) != 0)
			return gcap_err(errbuf, errno, "cannot write '%s': %s", path,
					strerror(errno));
		if (others_write(&d) && !owned_ok(&st, &d))
			return gcap_err(
				errbuf, ELOOP,
				"cannot write '%s': %s is another user's symbolic "
				"link in a directory other users can write, not "
				"followed",
				path, pre);
	}
	return 0;
}

/* The refusal of a file or FIFO another user put where others can write. */
static int
other_users(char *errbuf, const char *path, uid_t uid)
{
	return gcap_err(errbuf, EPERM,
			"cannot write '%s': another user's file (uid %u) in a directory "
			"other users can write, not written",
			path, (unsigned)uid);
}

int
gcap_open_output(const char *path, int flags, mode_t mode, char *errbuf)
{
	char dir[PATH_MAX];
	struct stat d, st;
	bool shared;
	int fd, r;

	r = check_way(path, errbuf);
	if (r < 0)
		return r;
	if (!parent_of(path, strlen(path), dir, sizeof(dir)))
		return gcap_err(errbuf, ENAMETOOLONG, "cannot write '%s': %s", path,
				strerror(ENAMETOOLONG));
	shared = stat(dir, &d) == 0 && others_write(&d);
	if (!shared)
		return (fd = open_as(path, flags, mode)) >= 0 ?
			       fd :
			       gcap_err(errbuf, errno, "cannot write '%s': %s", path,
					strerror(errno));
	/* there: no link followed, a FIFO not waited for before its owner
	 * is known, a file not cut before it */
	fd = open_as(path, (flags & ~O_TRUNC) | O_NOFOLLOW | O_NONBLOCK, mode);
	if (fd < 0 && errno == ENXIO && lstat(path, &st) == 0 && S_ISFIFO(st.st_mode)) {
		if (!owned_ok(&st, &d))
			return other_users(errbuf, path, st.st_uid);
		if (!(flags & O_NONBLOCK)) /* its reader, for a FIFO of theirs */
			fd = open_as(path, (flags & ~O_TRUNC) | O_NOFOLLOW, mode);
		else
			errno = ENXIO;
	}
	if (fd < 0 && (errno == ELOOP || errno == EMLINK))
		return gcap_err(errbuf, ELOOP,
				"cannot write '%s': a symbolic link in a directory "
				"other users can write, not followed",
				path);
	if (fd < 0)
		return gcap_err(errbuf, errno, "cannot write '%s': %s", path,
				strerror(errno));
	if (fstat(fd, &st) != 0) {
		r = gcap_err(errbuf, errno, "cannot write '%s': %s", path,
			     strerror(errno));
		close(fd);
		return r;
	}
	if (!owned_ok(&st, &d)) {
		close(fd);
		return other_users(errbuf, path, st.st_uid);
	}
	if (((flags & O_TRUNC) && S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) ||
	    (!(flags & O_NONBLOCK) &&
	     fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)) {
		r = gcap_err(errbuf, errno, "cannot write '%s': %s", path,
			     strerror(errno));
		close(fd);
		return r;
	}
	return fd;
}
