/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gpu module where no GPU is needed: argument checking, the probe
 * failing cleanly without a driver, and the CUDA translation unit of
 * --dump-gpu-code (compiled with nvcc -c -x cu when nvcc is installed).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "gcap_config.h"
#include "gpucap/gcap_exec.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_gpu.h"
#ifdef GCAP_TEST_HAVE_RTC
#include "gpucap/gcap_rtc.h"
#endif

static struct bpf_program progs[3];

static void
mk_conf(struct gcap_exec_conf *c)
{
	char err[GCAP_ERRBUF_SIZE];

	if (progs[1].bf_len == 0) {
		ck_assert_int_eq(gcap_filter_compile("", DLT_EN10MB, 65535,
						     &progs[0], err), 0);
		ck_assert_int_eq(gcap_filter_compile("tcp port 80", DLT_EN10MB,
						     65535, &progs[1], err), 0);
		ck_assert_int_eq(gcap_filter_compile("udp and len > 100",
						     DLT_EN10MB, 65535,
						     &progs[2], err), 0);
	}
	memset(c, 0, sizeof(*c));
	c->nqueues = 2;
	c->ring_size = 8;
	c->batch_max = 64;
	c->nxbufs = 4;
	c->xbuf_size = 65536;
	c->snaplen = 65535;
	c->nfilters = 3;
	c->filters = progs;
	c->linktype = DLT_EN10MB;
	c->mem = GCAP_MEM_HOST;
}

START_TEST(test_ops_present)
{
	const struct gcap_exec_ops *ops = gcap_exec_gpu_ops();

	if (!GCAP_HAVE_CUDA) {
		ck_assert_ptr_null(ops);
		return;
	}
	ck_assert_ptr_nonnull(ops);
	ck_assert_str_eq(ops->name, "gpu");
	ck_assert_ptr_nonnull(ops->create);
	ck_assert_ptr_nonnull(ops->pool_create);
	ck_assert_ptr_nonnull(ops->health);
	ck_assert_ptr_nonnull(ops->stop);
}
END_TEST

START_TEST(test_bad_conf)
{
	const struct gcap_exec_ops *ops = gcap_exec_gpu_ops();
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE];
	struct {
		const char *what;
		void (*fn)(struct gcap_exec_conf *);
	} *t;

	if (ops == NULL)
		return;
	mk_conf(&c);
	c.ring_size = 12;
	err[0] = '\0';
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "power of two") != NULL, "%s", err);
	mk_conf(&c);
	c.batch_max = GCAP_BATCH_MAX + 1;
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	mk_conf(&c);
	c.nfilters = 0;
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	mk_conf(&c);
	c.xbuf_size = 100; /* not a multiple of 8 */
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	mk_conf(&c);
	c.mem = GCAP_MEM_PLAIN;
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(ops->create(NULL, err));
	ck_assert_int_eq(errno, EINVAL);
	(void)t;
	ops->destroy(NULL);
}
END_TEST

/* Without a driver (this machine, CI) the probe says why and the executor
 * refuses to start with the same reason; with one, both work. */
START_TEST(test_probe_consistent)
{
	const struct gcap_exec_ops *ops = gcap_exec_gpu_ops();
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "", err2[GCAP_ERRBUF_SIZE] = "";
	struct gcap_exec *ex;
	int n = -1, rc = gcap_gpu_probe(&n, err);

	printf("probe: %d (%s)\n", rc, rc ? err : "ok");
	if (rc == 0) {
		ck_assert_int_gt(n, 0);
		ck_assert_int_ge(gcap_gpu_pick(-1), 0);
		return;
	}
	ck_assert_int_eq(n, 0);
	ck_assert(rc == -ENOENT || rc == -ENODEV || rc == -ENOTSUP);
	ck_assert_uint_gt(strlen(err), 0);
	ck_assert_int_eq(gcap_gpu_pick(0), rc);
	if (ops == NULL)
		return;
	mk_conf(&c);
	ex = ops->create(&c, err2);
	ck_assert_ptr_null(ex);
	ck_assert_int_eq(-errno, rc);
	ck_assert_str_eq(err, err2);
}
END_TEST

static void
nvcc_compile(const char *src, const char *tag)
{
	char path[] = "/tmp/gcap_tu_XXXXXX.cu", cmd[1024];
	const char *nvcc = GCAP_CUDA_HOME "/bin/nvcc";
	FILE *f;
	int fd, rc;

	if (access(nvcc, X_OK) != 0) {
		printf("%s: no nvcc, compile check skipped\n", tag);
		return;
	}
	fd = mkstemps(path, 3);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -c -x cu -arch=sm_90 -o /dev/null %s",
		 nvcc, path);
	rc = system(cmd);
	unlink(path);
	ck_assert_msg(rc == 0, "%s: nvcc -c -x cu failed", tag);
}

START_TEST(test_code_interp)
{
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "";
	char *src;

	mk_conf(&c);
	src = gcap_gpu_code(&c, err);
	if (!GCAP_HAVE_CUDA) {
		ck_assert_ptr_null(src);
		ck_assert_int_eq(errno, ENOTSUP);
		return;
	}
	ck_assert_msg(src != NULL, "%s", err);
	ck_assert_ptr_nonnull(strstr(src, "gcap_pipeline_kernel"));
	ck_assert_ptr_nonnull(strstr(src, "gcap_bpf_interp"));
	ck_assert_ptr_null(strstr(src, "#include \"")); /* self-contained */
	nvcc_compile(src, "interpreter TU");
	free(src);
	c.nfilters = 0;
	ck_assert_ptr_null(gcap_gpu_code(&c, err));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_code_compiled)
{
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "";
	char *src;

	if (!GCAP_HAVE_CUDA)
		return;
	mk_conf(&c);
	c.compile_filters = true;
	src = gcap_gpu_code(&c, err);
	ck_assert_msg(src != NULL, "%s", err);
	ck_assert_ptr_nonnull(strstr(src, "gcap_flt_mask"));
	ck_assert_ptr_nonnull(strstr(src, "#define GCAP_GPU_COMPILED_FILTERS"));
	nvcc_compile(src, "compiled-filter TU");
	free(src);
}
END_TEST

/* Both translation units compile with NVRTC (what the executor does on a
 * GPU machine; NVRTC itself needs no GPU). */
START_TEST(test_code_nvrtc)
{
#ifdef GCAP_TEST_HAVE_RTC
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "";
	int variant;

	if (!GCAP_HAVE_CUDA || gcap_rtc_load(err) != 0) {
		printf("nvrtc: not available (%s), skipped\n", err);
		return;
	}
	for (variant = 0; variant < 2; variant++) {
		struct gcap_rtc_info info = { 0 };
		void *img = NULL;
		size_t len = 0;
		char *src;
		int rc;

		mk_conf(&c);
		c.compile_filters = variant;
		src = gcap_gpu_code(&c, err);
		ck_assert_msg(src != NULL, "%s", err);
		rc = gcap_rtc_compile(src, "gpucap_pipeline.cu", 9, 0, NULL, 0,
				      NULL, GCAP_RTC_F_NO_CACHE, &img, &len,
				      &info, err);
		ck_assert_msg(rc == 0, "nvrtc (%s): %d %s\n%s",
			      variant ? "compiled" : "interp", rc, err,
			      info.log ? info.log : "");
		ck_assert_uint_gt(len, 0);
		printf("nvrtc %s TU: %zu bytes of cubin in %.0f ms\n",
		       variant ? "compiled-filter" : "interpreter", len,
		       info.compile_ms);
		free(img);
		free(src);
		gcap_rtc_info_clear(&info);
	}
#endif
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("gpu_nodev");
	TCase *tc = tcase_create("nodev");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_ops_present);
	tcase_add_test(tc, test_bad_conf);
	tcase_add_test(tc, test_probe_consistent);
	tcase_add_test(tc, test_code_interp);
	tcase_add_test(tc, test_code_compiled);
	tcase_add_test(tc, test_code_nvrtc);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
