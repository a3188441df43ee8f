/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gcap_doctor_run(): the checks in the order the report gives them (GPUs,
 * peer memory, IOMMU, hugepages, ports), then the verdict: can GPU-memory
 * capture work for the ports given, or for some NIC when none is given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpucap/gcap_common.h"
#include "doctor_internal.h"

static bool
verdict(struct dr *d)
{
	char ok[DR_TEXT] = "", no[DR_TEXT] = "";
	unsigned nok = 0;

	for (unsigned i = 0; i < d->nports; i++) {
		const struct dr_port *p = &d->ports[i];

		if (p->ready) {
			dr_cat(ok, sizeof(ok), "%s%s", nok ? ", " : "", p->spec);
			nok++;
		} else {
			dr_cat(no, sizeof(no), "%s%s: %s", no[0] ? " | " : "", p->spec,
			       p->blockers);
		}
	}
	if (d->conf->nports > 0 ? nok == d->nports : nok > 0) {
		dr_check(d, DR_OK, "verdict", NULL,
			 "GPU-memory capture can work "
			 "for %s%s",
			 ok, d->conf->nports > 0 ? "" : " (NICs found without -i)");
		return true;
	}
	if (d->nports == 0)
		dr_check(d, DR_FAIL, "verdict", "see the [FAIL] lines",
			 "GPU-memory capture cannot work: no NIC");
	else
		dr_check(d, DR_FAIL, "verdict", "see the [FAIL] lines",
			 "GPU-memory capture cannot work for %s", no);
	return false;
}

int
gcap_doctor_run(const struct gcap_doctor_conf *conf, FILE *out, char *errbuf)
{
	struct dr *d = calloc(1, sizeof(*d));
	bool ready;
	int rc;

	if (d == NULL)
		return gcap_err(errbuf, ENOMEM, "--doctor: out of memory");
	d->conf = conf;
	rc = dr_root_set(d, conf->root, errbuf);
	if (rc)
		goto out;
	dr_check_gpus(d);
	rc = dr_ports_collect(d);
	if (rc) {
		gcap_err(errbuf, -rc, "--doctor: out of memory");
		goto out;
	}
	/* after the ports are known: the IOMMU check reads their groups */
	dr_check_peermem(d);
	dr_check_iommu(d);
	dr_check_hugepages(d);
	dr_check_ports(d);
	ready = verdict(d);
	if (d->oom) {
		rc = gcap_err(errbuf, ENOMEM, "--doctor: out of memory");
		goto out;
	}
	if (conf->json)
		dr_report_json(d, out, ready);
	else
		dr_report_text(d, out);
	if (fflush(out) != 0 || ferror(out)) {
		rc = gcap_err(errbuf, EIO, "--doctor: cannot write the report");
		goto out;
	}
	rc = ready ? 0 : 1;
out:
	dr_report_free(d);
	free(d->ports);
	free(d);
	return rc;
}
