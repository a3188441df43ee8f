/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal to the doctor (gcap_doctor.h): the report being built, the facts
 * the checks share, and the functions of its parts. doctor.c runs the parts
 * in order; each part reads through fs.c and adds lines through report.c,
 * which call nothing of the doctor's own.
 */
#ifndef GCAP_DOCTOR_INTERNAL_H
#define GCAP_DOCTOR_INTERNAL_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpucap/gcap_doctor.h"

#define DR_MAX_GPUS 64
#define DR_TEXT 1536 /* one finding or one fix */

enum dr_status {
	DR_OK,
	DR_WARN,
	DR_FAIL,
	DR_INFO
};

/* One line of the report. */
struct dr_check {
	enum dr_status st;
	char *name;
	char *found;
	char *fix; /* NULL: none */
};

/* A PCI function as sysfs shows it. */
struct dr_pci {
	char bdf[32]; /* "0000:3b:00.0" */
	unsigned cls; /* class, e.g. 0x020000 */
	unsigned vendor, device;
	int numa;            /* numa_node; -1: unknown */
	int group;           /* iommu_group; -1: none */
	char driver[64];     /* bound driver; "": none */
	char path[PATH_MAX]; /* where /sys/bus/pci/devices/<bdf> leads */
};

struct dr_gpu {
	int ordinal; /* CUDA ordinal; -1: seen in sysfs only */
	char name[128];
	char bdf[32];  /* lower case; "": unknown */
	bool in_sysfs; /* pci is valid */
	struct dr_pci pci;
	int cc_major, cc_minor;
	bool integrated, usable, rdma;
	int flush, ordering; /* the GPUDirect RDMA attributes */
	uint64_t vram;       /* cuDeviceTotalMem; 0: unknown */
};

enum dr_iommu {
	DR_IOMMU_OFF,
	DR_IOMMU_PT,
	DR_IOMMU_ON
};

struct dr_port {
	const char *spec; /* as given, or the BDF of a NIC found */
	bool pci;         /* a PCI address (else a software port) */
	bool present;     /* dev is valid */
	struct dr_pci dev;
	int gpu;         /* index into dr.gpus; -1: none */
	const char *mem; /* what --mem auto would choose: gpu, host, none */
	char why[DR_TEXT];
	char blockers[DR_TEXT]; /* why GPU-memory capture cannot work */
	bool ready;
};

struct dr {
	char root[PATH_MAX]; /* prefix of every path read; "" for "/" */
	const struct gcap_doctor_conf *conf;
	struct dr_check *checks;
	unsigned nchecks, cap;
	bool oom;
	int cuda_driver; /* cuDriverGetVersion */
	int cuda_built;  /* CUDA_VERSION of cuda.h; 0: built without */
	struct dr_gpu gpus[DR_MAX_GPUS];
	unsigned ngpus;
	const char *peermem; /* the module found; NULL: none */
	enum dr_iommu iommu;
	bool huge; /* hugepages free and a hugetlbfs mounted */
	struct dr_port *ports;
	unsigned nports;
};

/* ---- fs.c: every path, host-absolute, read under d->root ---- */
int dr_root_set(struct dr *d, const char *root, char *errbuf);
FILE *dr_fopen(const struct dr *d, const char *path);
/* the file's first line (newline stripped); -errno */
int dr_read(const struct dr *d, const char *path, char *buf, size_t n);
/* an integer file (decimal, 0x hex or negative); -errno, -EINVAL */
int dr_read_ll(const struct dr *d, const char *path, long long *v);
/* the last component of a symbolic link's target; -errno */
int dr_link_base(const struct dr *d, const char *path, char *buf, size_t n);
/* the resolved path, as a host path (root removed); -errno */
int dr_real(const struct dr *d, const char *path, char *buf, size_t n);
bool dr_exists(const struct dr *d, const char *path);
/* sorted entries of a directory, "." and ".." left out; count or -errno */
int dr_scan(const struct dr *d, const char *path, struct dirent ***list);
void dr_scan_free(struct dirent **list, int n);
/* a shared library in the usual directories; its host path in buf */
bool dr_find_lib(const struct dr *d, const char *name, char *buf, size_t n);

/* ---- report.c ---- */
void dr_check(struct dr *d, enum dr_status st, const char *name, const char *fix,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* append to a string (truncating) */
void
dr_cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "1.5 GiB", "256.0 MiB", "4096 bytes" */
const char *dr_size(char *buf, size_t n, uint64_t bytes);
void dr_report_text(const struct dr *d, FILE *out);
void dr_report_json(const struct dr *d, FILE *out, bool ready);
void dr_report_free(struct dr *d);

/* ---- pci.c ---- */
/* normalise a PCI address ("3b:00.0" -> "0000:3b:00.0"); false: not one */
bool dr_pci_bdf(const char *spec, char *bdf, size_t n);
int dr_pci_read(const struct dr *d, const char *bdf, struct dr_pci *p);
/* the PCI function a sysfs device path is (or is below); false: none */
bool dr_pci_owner(const char *path, char *bdf, size_t n);
/* every function whose class >> 16 is cls; count (list malloc'd) or -errno */
int dr_pci_scan(const struct dr *d, unsigned cls, struct dr_pci **list);
/* size of BAR n from the resource file; 0: none or unreadable */
uint64_t dr_pci_bar(const struct dr *d, const char *bdf, int bar);
/* nvidia-smi topo's class of the path a-b (PIX PXB PHB NODE SYS), why */
const char *
dr_pci_path(const struct dr_pci *a, const struct dr_pci *b, char *why, size_t n);

/* ---- cuda_gpus.c (cuda_gpus_none.c without CUDA) ---- */
/* fill d->gpus from the driver API; -errno with the reason in why */
int dr_cuda_gpus(struct dr *d, char *why, size_t n);

/* ---- nvml.c: BAR1 figures and the driver version from NVML ---- */
struct dr_nvml;
struct dr_nvml *dr_nvml_open(char *why, size_t n);
int dr_nvml_bar1(struct dr_nvml *m, const char *bdf, uint64_t *total, uint64_t *avail);
int dr_nvml_driver(struct dr_nvml *m, char *buf, size_t n);
void dr_nvml_close(struct dr_nvml *m);

/* ---- gpu.c: the driver, the GPUs, GPUDirect RDMA, BAR1 ---- */
void dr_check_gpus(struct dr *d);

/* ---- host.c: kernel modules, IOMMU, hugepages ---- */
void dr_check_peermem(struct dr *d);
void dr_check_iommu(struct dr *d);
void dr_check_hugepages(struct dr *d);

/* ---- nic.c: the ports ---- */
int dr_ports_collect(struct dr *d);
void dr_check_ports(struct dr *d);

#endif /* GCAP_DOCTOR_INTERNAL_H */
