/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the output files say about a capture beyond its packets (pcapng's
 * SHB and IDB options, as dumpcap writes them): the host's OS and CPU,
 * and each port as given on the command line with its driver, device
 * (if_hardware), MAC address, link speed and OS.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "meta.h"

void
app_meta_host(struct app *a)
{
	struct utsname u;
	char line[256];
	FILE *f;

	a->host_os[0] = a->host_hw[0] = '\0';
	if (uname(&u) == 0) {
		snprintf(a->host_os, sizeof(a->host_os), "%s %s", u.sysname, u.release);
		snprintf(a->host_hw, sizeof(a->host_hw), "%s", u.machine);
	}
	/* the CPU's model, as dumpcap's shb_hardware says it */
	f = fopen("/proc/cpuinfo", "re");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *v = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && v != NULL) {
			v += strspn(v + 1, " \t") + 1;
			v[strcspn(v, "\n")] = '\0';
			snprintf(a->host_hw, sizeof(a->host_hw), "%s", v);
			break;
		}
	}
	if (f != NULL)
		fclose(f);
}

void
app_meta_ifs(struct app *a, struct gcap_writer_if *wifs)
{
	if (a->host_os[0] == '\0')
		app_meta_host(a);
	for (unsigned p = 0; p < a->nports; p++) {
		struct app_port_meta *m = &a->port_meta[p];
		struct gcap_port_desc d;

		memset(&wifs[p], 0, sizeof(wifs[p]));
		wifs[p].name = a->ports[p].spec; /* the port as given */
		wifs[p].linktype = a->ports[p].linktype;
		wifs[p].os = a->host_os[0] != '\0' ? a->host_os : NULL;
		if (gcap_port_describe(&a->ports[p], &d) != 0)
			continue;
		snprintf(m->descr, sizeof(m->descr), "%s port %s", d.driver,
			 a->ports[p].name);
		wifs[p].description = m->descr;
		if (d.hardware[0] != '\0') {
			memcpy(m->hardware, d.hardware, sizeof(m->hardware));
			wifs[p].hardware = m->hardware;
		}
		if (d.has_mac) {
			memcpy(m->mac, d.mac, sizeof(m->mac));
			wifs[p].mac = m->mac;
		}
		wifs[p].speed = d.speed_bps;
	}
}
