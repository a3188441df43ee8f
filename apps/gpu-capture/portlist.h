/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ports DPDK can open on this host, numbered as tcpdump -D numbers
 * interfaces, and a port's link types (-L, -y) (portlist.c). root: where
 * /sys is read (NULL: /).
 */
#ifndef GCAP_APP_PORTLIST_H
#define GCAP_APP_PORTLIST_H

/* the most PCI devices and interfaces looked at */
#define APP_PORTLIST_MAX 512

/* -D: one line per port, "N.NAME (what) [flags]". @return the exit status. */
int app_portlist_print(const char *root);

/* -i N: the Nth port of -D's list when spec is a number that no
 * interface is named (*name malloc'd), else *name NULL.
 * @return 0, or -1 after printing the error. */
int app_portlist_resolve(const char *root, const char *spec, char **name);

/* The link type a port gives (DLT_*). @return 0, or -1 after printing
 * the error. */
int app_portlist_linktype(const char *spec, int *dlt);

/* -L: the link types of each port, as tcpdump -L. @return the exit status. */
int app_portlist_print_linktypes(const char *const *specs, unsigned n);

/* -y NAME: refused unless every port gives that link type.
 * @return 0, or -1 after printing the error. */
int app_portlist_check_linktype(const char *name, const char *const *specs, unsigned n);

#endif
