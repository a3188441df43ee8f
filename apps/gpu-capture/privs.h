/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * -Z USER, tcpdump's privilege drop: the user is looked up before set-up,
 * and once the ports, GPU contexts, hugepages and first output files are
 * set up the process becomes USER, with USER's groups and no capability.
 */
#ifndef GCAP_APP_PRIVS_H
#define GCAP_APP_PRIVS_H

#include <stdbool.h>
#include <sys/types.h>

struct app_creds {
	bool drop; /* -Z given, running as root, USER is not root */
	uid_t uid;
	gid_t gid; /* USER's primary group */
	char name[64];
};

/*
 * Look up -Z USER (NULL: none). As tcpdump does, a process that is not
 * root has nothing to drop and -Z root drops nothing.
 * @return 0, or -1 after printing the error.
 */
int app_privs_lookup(const char *user, struct app_creds *c);

/*
 * -Z USER, before set-up: root opens the outputs with USER's uid, gid and
 * groups (gcap_outfile_as) from the first one on, as after the drop, so
 * that no link USER planted is followed as root. Nothing where nothing
 * is dropped. @return 0, or -1 after printing the error.
 */
int app_privs_open_as(const char *user);

/*
 * Become c->uid with c->gid and USER's supplementary groups, every
 * thread without capabilities (libcap-ng), and check it. Nothing to do
 * unless c->drop. @return 0, or -1 after printing the error.
 */
int app_privs_drop(const struct app_creds *c, bool quiet);

#endif
