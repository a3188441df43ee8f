/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * -Z USER (see privs.h). The drop goes through libcap-ng: the capability
 * sets are cleared, then capng_change_id() sets the groups (initgroups),
 * the gid and the uid. glibc applies set*id to every thread of the process
 * (the EAL's among them), and a thread whose uids all leave 0 loses its
 * permitted and effective capabilities; the result is read back before
 * the capture starts.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cap-ng.h>

#include "gpucap/gcap_outfile.h"
#include "app_err.h"
#include "privs.h"

int
app_privs_lookup(const char *user, struct app_creds *c)
{
	struct passwd *pw;

	memset(c, 0, sizeof(*c));
	if (user == NULL)
		return 0;
	errno = 0;
	pw = getpwnam(user);
	if (pw == NULL)
		return -app_err("-Z %s: %s", user,
				errno != 0 ? strerror(errno) : "no such user");
	if (strlen(pw->pw_name) >= sizeof(c->name))
		return -app_err("-Z %s: user name too long", user);
	snprintf(c->name, sizeof(c->name), "%s", pw->pw_name);
	c->uid = pw->pw_uid;
	c->gid = pw->pw_gid;
	c->drop = (getuid() == 0 || geteuid() == 0) && pw->pw_uid != 0;
	return 0;
}

int
app_privs_open_as(const char *user)
{
	gid_t groups[GCAP_OUTFILE_GROUPS_MAX];
	int ng = GCAP_OUTFILE_GROUPS_MAX;
	struct app_creds c;

	if (app_privs_lookup(user, &c) < 0)
		return -1;
	/* its groups as initgroups will give them at the drop */
	if (c.drop && (getgrouplist(c.name, c.gid, groups, &ng) < 0 ||
		       gcap_outfile_as(c.uid, c.gid, groups, ng) < 0))
		return -app_err("-Z %s: more than %d groups", c.name,
				GCAP_OUTFILE_GROUPS_MAX);
	return 0;
}

int
app_privs_drop(const struct app_creds *c, bool quiet)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int r;

	if (!c->drop)
		return 0;
	capng_clear(CAPNG_SELECT_BOTH);
	r = capng_change_id((int)c->uid, (int)c->gid,
			    CAPNG_INIT_SUPP_GRP | CAPNG_CLEAR_BOUNDING);
	if (r != 0)
		return -app_err("-Z %s: cannot change to uid %u gid %u (libcap-ng "
				"capng_change_id: %d, %s)",
				c->name, (unsigned)c->uid, (unsigned)c->gid, r,
				strerror(errno));
	if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0 ||
	    ru != c->uid || eu != c->uid || su != c->uid || rg != c->gid ||
	    eg != c->gid || sg != c->gid)
		return -app_err("-Z %s: the process did not become uid %u gid %u",
				c->name, (unsigned)c->uid, (unsigned)c->gid);
	if (capng_get_caps_process() != 0 ||
	    capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		return -app_err("-Z %s: capabilities are left after the drop", c->name);
	if (!quiet)
		fprintf(stderr, "gpu-capture: dropped privileges to %s\n", c->name);
	return 0;
}
