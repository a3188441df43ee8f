#include <errno.h>
#include <stdio.h>
#include "gpucap/gcap_gpu.h"
const struct gcap_exec_ops *gcap_exec_gpu_ops(void) { return NULL; }
int gcap_gpu_probe(int *n, char *e) { *n = 0; return gcap_err(e, ENOTSUP, "no CUDA"); }
char *gcap_gpu_code(const struct gcap_exec_conf *c, char *e) { gcap_err(e, ENOTSUP, "no CUDA"); errno = ENOTSUP; return NULL; }
