/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The doctor's report: the checks collected in order, written as one line
 * each ("[FAIL] name: found  fix: ...") or as one JSON document (through
 * gcap_json.h) with the same checks and the ports' verdicts. Kept apart so
 * that the checks only say what they found, never how it is printed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_json.h"
#include "doctor_internal.h"

static const char *const st_tag[] = {
	[DR_OK] = "[ ok ]",
	[DR_WARN] = "[warn]",
	[DR_FAIL] = "[FAIL]",
	[DR_INFO] = "[info]",
};
static const char *const st_name[] = {
	[DR_OK] = "ok",
	[DR_WARN] = "warn",
	[DR_FAIL] = "fail",
	[DR_INFO] = "info",
};

void
dr_check(struct dr *d, enum dr_status st, const char *name, const char *fix,
	 const char *fmt, ...)
{
	char found[DR_TEXT];
	struct dr_check *c;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(found, sizeof(found), fmt, ap);
	va_end(ap);
	if (d->nchecks == d->cap) {
		unsigned cap = d->cap ? 2 * d->cap : 64;
		struct dr_check *n = realloc(d->checks, cap * sizeof(*n));

		if (n == NULL) {
			d->oom = true;
			return;
		}
		d->checks = n;
		d->cap = cap;
	}
	c = &d->checks[d->nchecks];
	c->st = st;
	c->name = strdup(name);
	c->found = strdup(found);
	c->fix = fix != NULL && fix[0] != '\0' ? strdup(fix) : NULL;
	if (c->name == NULL || c->found == NULL ||
	    (fix != NULL && fix[0] != '\0' && c->fix == NULL)) {
		free(c->name);
		free(c->found);
		free(c->fix);
		d->oom = true;
		return;
	}
	d->nchecks++;
}

void
dr_cat(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strnlen(buf, n);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

const char *
dr_size(char *buf, size_t n, uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, n, "%.1f GiB", (double)bytes / (1ull << 30));
	else if (bytes >= (1ull << 20))
		snprintf(buf, n, "%.1f MiB", (double)bytes / (1ull << 20));
	else
		snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

void
dr_report_text(const struct dr *d, FILE *out)
{
	for (unsigned i = 0; i < d->nchecks; i++) {
		const struct dr_check *c = &d->checks[i];

		fprintf(out, "%s %s: %s", st_tag[c->st], c->name, c->found);
		if (c->fix != NULL)
			fprintf(out, "  fix: %s", c->fix);
		fputc('\n', out);
	}
}

void
dr_report_json(const struct dr *d, FILE *out, bool ready)
{
	struct gcap_json j = { .f = out };

	gcap_json_object_begin(&j, NULL);
	gcap_json_key_str(&j, "root", d->root[0] ? d->root : "/");
	gcap_json_key_bool(&j, "ready", ready);
	gcap_json_array_begin(&j, "checks");
	for (unsigned i = 0; i < d->nchecks; i++) {
		const struct dr_check *c = &d->checks[i];

		gcap_json_object_begin(&j, NULL);
		gcap_json_key_str(&j, "status", st_name[c->st]);
		gcap_json_key_str(&j, "check", c->name);
		gcap_json_key_str(&j, "found", c->found);
		gcap_json_key_str(&j, "fix", c->fix);
		gcap_json_object_end(&j);
	}
	gcap_json_array_end(&j);
	gcap_json_array_begin(&j, "ports");
	for (unsigned i = 0; i < d->nports; i++) {
		const struct dr_port *p = &d->ports[i];

		gcap_json_object_begin(&j, NULL);
		gcap_json_key_str(&j, "port", p->spec);
		gcap_json_key_str(&j, "pci", p->present ? p->dev.bdf : NULL);
		gcap_json_key_str(&j, "driver",
				  p->present && p->dev.driver[0] ? p->dev.driver : NULL);
		if (p->gpu >= 0)
			gcap_json_key_i64(&j, "gpu", d->gpus[p->gpu].ordinal);
		else
			gcap_json_key_str(&j, "gpu", NULL);
		gcap_json_key_str(&j, "mem_auto", p->mem);
		gcap_json_key_str(&j, "why", p->why);
		gcap_json_key_bool(&j, "ready", p->ready);
		gcap_json_key_str(&j, "blockers", p->blockers[0] ? p->blockers : NULL);
		gcap_json_object_end(&j);
	}
	gcap_json_array_end(&j);
	gcap_json_object_end(&j);
	fputc('\n', out);
}

void
dr_report_free(struct dr *d)
{
	for (unsigned i = 0; i < d->nchecks; i++) {
		free(d->checks[i].name);
		free(d->checks[i].found);
		free(d->checks[i].fix);
	}
	free(d->checks);
	d->checks = NULL;
	d->nchecks = d->cap = 0;
}
