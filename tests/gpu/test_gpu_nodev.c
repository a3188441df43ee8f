/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gpu module where no GPU is needed: argument checking, the probe
 * failing cleanly without a driver, and the CUDA translation unit of
 * --dump-gpu-code (compiled with nvcc -c -x cu when nvcc is installed),
 * with and without an inline kernel (every example compiled by nvcc and
 * by NVRTC for sm_90; errors in a kernel reported as FILE:LINE).
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
#include "gpucap/gcap_khost.h"
#include "../../gpu/gpu_internal.h" /* the executor's NVRTC step */
#ifdef GCAP_TEST_HAVE_RTC
#include "gpucap/gcap_rtc.h"
#endif

static struct bpf_program progs[3];

static void
mk_conf(struct gcap_exec_conf *c)
{
	char err[GCAP_ERRBUF_SIZE];

	if (progs[1].bf_len == 0) {
		ck_assert_int_eq(
			gcap_filter_compile("", DLT_EN10MB, 65535, &progs[0], err), 0);
		ck_assert_int_eq(gcap_filter_compile("tcp port 80", DLT_EN10MB, 65535,
						     &progs[1], err),
				 0);
		ck_assert_int_eq(gcap_filter_compile("udp and len > 100", DLT_EN10MB,
						     65535, &progs[2], err),
				 0);
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
	} * t;

	if (ops == NULL)
		return;
	mk_conf(&c);
	c.ring_size = 12;
	err[0] = '\0';
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "power of two") != NULL, "%s", err);
	mk_conf(&c);
	c.batch_max = GCAP_FILE_BATCH_MAX + 1;
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
	/* blocks per queue: a power of two, at most the ring (8 here) */
	mk_conf(&c);
	c.blocks_per_queue = 3;
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "blocks per queue") != NULL, "%s", err);
	mk_conf(&c);
	c.blocks_per_queue = 16;
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "blocks per queue") != NULL, "%s", err);
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
	snprintf(cmd, sizeof(cmd), "%s -c -x cu -arch=sm_90 -o /dev/null %s", nvcc, path);
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
		rc = gcap_rtc_compile(src, "gpucap_pipeline.cu", 9, 0, NULL, 0, NULL,
				      GCAP_RTC_F_NO_CACHE, &img, &len, &info, err);
		ck_assert_msg(rc == 0, "nvrtc (%s): %d %s\n%s",
			      variant ? "compiled" : "interp", rc, err,
			      info.log ? info.log : "");
		ck_assert_uint_gt(len, 0);
		printf("nvrtc %s TU: %zu bytes of cubin in %.0f ms\n",
		       variant ? "compiled-filter" : "interpreter", len, info.compile_ms);
		free(img);
		free(src);
		gcap_rtc_info_clear(&info);
	}
#endif
}
END_TEST

static const char *kernel_examples[] = { "dns", "synflood", "sigmatch", "flowfirst" };

static const char *
example_path(const char *name)
{
	static char buf[4096];
	const char *root = getenv("GCAP_SOURCE_ROOT");

	snprintf(buf, sizeof(buf), "%s/kernels/examples/%s/%s.c", root ? root : ".", name,
		 name);
	return buf;
}

/* write text to a new directory /tmp/gcap_nodev_kXXXXXX/name; returns the
 * path (static); rm_kernel() removes both */
static const char *
write_kernel(const char *name, const char *text)
{
	static char dir[64], path[4200];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/gcap_nodev_kXXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static void
rm_kernel(const char *path)
{
	char dir[4200], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	unlink(path);
	if (slash != NULL) {
		*slash = '\0';
		rmdir(dir);
	}
}

/* The TU with each example kernel: the header inlined, the kernel under
 * its own file name, the hook on; compiles with nvcc as is, and with the
 * executor's NVRTC step for sm_90. */
START_TEST(test_code_kernel)
{
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "", line[4300];
	const char *name = kernel_examples[_i];
	const char *path = example_path(name);
	char *src;

	if (!GCAP_HAVE_CUDA)
		return;
	mk_conf(&c);
	c.kernel_path = path;
	src = gcap_gpu_code(&c, err);
	ck_assert_msg(src != NULL, "%s: %s", name, err);
	snprintf(line, sizeof(line), "#line 1 \"%s\"\n", path);
	ck_assert_msg(strstr(src, line) != NULL, "%s: no #line 1", name);
	ck_assert_ptr_nonnull(strstr(src, "#define GCAP_GPU_INLINE_KERNEL 1"));
	ck_assert_ptr_nonnull(strstr(src, "gcap_flt_mask")); /* compiled path */
	ck_assert_ptr_nonnull(strstr(src, "gcap_kstate_copy"));
	ck_assert_ptr_nonnull(strstr(src, "inlined above"));
	/* ordered kernels (gcap_kernel_order) get the define, others not */
	ck_assert_msg(
		(strstr(src, "#define GCAP_KERNEL_ORDERED 1") != NULL) ==
			(strcmp(name, "synflood") == 0 || strcmp(name, "flowfirst") == 0),
		"%s: ordered?", name);
	/* standalone: nothing left to find on an include path */
	ck_assert_ptr_null(strstr(src, "#include \""));
	ck_assert_ptr_null(strstr(src, "\n#include <gpucap/"));
	nvcc_compile(src, name);
#ifdef GCAP_TEST_HAVE_RTC
	if (gcap_rtc_load(err) != 0) {
		printf("%s: nvrtc not available (%s), skipped\n", name, err);
	} else {
		struct gcap_khost *k = gcap_khost_load(path, NULL, err);
		void *img = NULL;
		size_t len = 0;
		int rc;

		ck_assert_msg(k != NULL, "%s: %s", name, err);
		rc = gcap_gpu_rtc_build(src, k, 9, 0, &img, &len, err);
		ck_assert_msg(rc == 0, "%s: NVRTC: %d %s", name, rc, err);
		ck_assert_uint_gt(len, 1000);
		printf("%s: TU compiled by NVRTC for sm_90, %zu bytes\n", name, len);
		free(img);
		gcap_khost_free(k);
	}
#endif
	free(src);
}
END_TEST

/* An ordered kernel keeps packet order only with one block per queue:
 * --gpu-blocks 2 with flowfirst is refused at create, before any driver. */
START_TEST(test_kernel_ordered_blocks)
{
	const struct gcap_exec_ops *ops = gcap_exec_gpu_ops();
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "";

	if (!GCAP_HAVE_CUDA)
		return;
	mk_conf(&c);
	c.kernel_path = example_path("flowfirst");
	c.blocks_per_queue = 2;
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "gcap_kernel_order") != NULL &&
			      strstr(err, "--gpu-blocks 2") != NULL,
		      "%s", err);
}
END_TEST

/* A syntax error: the host build (which the gpu executor runs first)
 * reports FILE:LINE, from gcap_gpu_code() and from create(), before any
 * driver is needed. */
START_TEST(test_kernel_syntax_error)
{
	const struct gcap_exec_ops *ops = gcap_exec_gpu_ops();
	static const char bad[] =
		"#include <gpucap/gcap_kernel.h>\n"
		"struct gcap_kstate { uint64_t n; };\n"
		"GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,\n"
		"                                 struct gcap_kstate *st)\n"
		"{\n"
		"\tgcap_atomic_add_u64(&st->n, 1)\n"
		"\treturn pkt->caplen ? GCAP_CAPTURE : GCAP_DROP;\n"
		"}\n";
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "", want[4300];
	const char *path;

	if (!GCAP_HAVE_CUDA)
		return;
	path = write_kernel("syntax.c", bad);
	mk_conf(&c);
	c.kernel_path = path;
	ck_assert_ptr_null(gcap_gpu_code(&c, err));
	ck_assert_int_eq(errno, ENOEXEC);
	/* the missing ';' is found on line 6 or 7 depending on the compiler */
	snprintf(want, sizeof(want), "%s:", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	ck_assert_msg(strncmp(err + strlen(want), "6:", 2) == 0 ||
			      strncmp(err + strlen(want), "7:", 2) == 0,
		      "%s", err);
	ck_assert_ptr_nonnull(ops);
	err[0] = '\0';
	ck_assert_ptr_null(ops->create(&c, err));
	ck_assert_int_eq(errno, ENOEXEC);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	/* no such file */
	rm_kernel(path);
	c.kernel_path = "/nonexistent/k.c";
	ck_assert_ptr_null(gcap_gpu_code(&c, err));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* Valid C that is not C++ (an implicit conversion from void *): the host
 * build accepts it, NVRTC does not, and its error is reported as
 * FILE:LINE: of the user's file. */
START_TEST(test_kernel_nvrtc_error)
{
#ifdef GCAP_TEST_HAVE_RTC
	static const char cxx[] =
		"#include <gpucap/gcap_kernel.h>\n"
		"struct gcap_kstate { uint64_t n; };\n"
		"GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,\n"
		"                                 struct gcap_kstate *st)\n"
		"{\n"
		"\tvoid *v = st;\n"
		"\tstruct gcap_kstate *s2 = v;\n"
		"\tgcap_atomic_add_u64(&s2->n, 1);\n"
		"\treturn pkt->caplen ? GCAP_CAPTURE : GCAP_DROP;\n"
		"}\n";
	struct gcap_exec_conf c;
	char err[GCAP_ERRBUF_SIZE] = "", want[4300];
	struct gcap_khost *k;
	const char *path;
	void *img = NULL;
	size_t len = 0;
	char *src;
	int rc;

	if (!GCAP_HAVE_CUDA || gcap_rtc_load(err) != 0) {
		printf("nvrtc: not available (%s), skipped\n", err);
		return;
	}
	path = write_kernel("notcxx.c", cxx);
	mk_conf(&c);
	c.kernel_path = path;
	src = gcap_gpu_code(&c, err);
	ck_assert_msg(src != NULL, "host build should accept it: %s", err);
	k = gcap_khost_load(path, NULL, err);
	ck_assert_msg(k != NULL, "%s", err);
	rc = gcap_gpu_rtc_build(src, k, 9, 0, &img, &len, err);
	ck_assert_int_eq(rc, -ENOEXEC);
	snprintf(want, sizeof(want), "%s:7: ", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	ck_assert_msg(strstr(err, "error") != NULL, "%s", err);
	printf("NVRTC error reported as: %s\n", err);
	gcap_khost_free(k);
	free(src);
	rm_kernel(path);
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
	tcase_add_loop_test(tc, test_code_kernel, 0,
			    sizeof(kernel_examples) / sizeof(kernel_examples[0]));
	tcase_add_test(tc, test_kernel_ordered_blocks);
	tcase_add_test(tc, test_kernel_syntax_error);
	tcase_add_test(tc, test_kernel_nvrtc_error);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
