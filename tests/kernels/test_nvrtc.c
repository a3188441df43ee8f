/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every example, and a kernel that uses every device helper, compiles with
 * NVRTC (the gpu executor's compiler, through gcap_rtc, uncached) into a
 * CUBIN for sm_90, wrapped in a __global__ function that calls
 * gcap_kernel() as the persistent kernel does. NVRTC needs no GPU; the
 * test skips (77) when libnvrtc cannot be loaded.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpucap/gcap_rtc.h"
#include "kt_util.h"

static const char *wrapper =
	"\n#line 1 \"<test-wrapper>\"\n"
	"extern \"C\" __global__ void gcap_test_entry(const struct gcap_kpkt *p,\n"
	"\tunsigned n, struct gcap_kstate *st, unsigned *v)\n"
	"{\n"
	"\tunsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\tv[i] = gcap_kernel(&p[i], st);\n"
	"}\n";

static const char *every_helper =
	"#include <gpucap/gcap_kernel.h>\n"
	"struct gcap_kstate { uint64_t a; uint32_t b; GCAP_HASH_DECLARE(t, 97); };\n"
	"GCAP_KERNEL uint32_t gcap_kernel(const struct gcap_kpkt *pkt,\n"
	"                                 struct gcap_kstate *st)\n"
	"{\n"
	"\tstruct gcap_parsed p; uint8_t u8; uint16_t u16; uint32_t u32; uint8_t "
	"buf[4];\n"
	"\tgcap_parse(pkt, &p);\n"
	"\tgcap_load_u8(pkt, 0, &u8); gcap_load_u16be(pkt, 0, &u16);\n"
	"\tgcap_load_u32be(pkt, 0, &u32); gcap_load_u16le(pkt, 0, &u16);\n"
	"\tgcap_load_u32le(pkt, 0, &u32); gcap_load_bytes(pkt, 0, buf, 4);\n"
	"\tconst uint8_t *q = gcap_ptr(pkt, 0, 4);\n"
	"\tuint64_t x = gcap_atomic_add_u64(&st->a, gcap_byte(pkt, 3) + gcap_avail(pkt, "
	"1));\n"
	"\tx += gcap_atomic_add_u32(&st->b, 1) + gcap_atomic_cas_u32(&st->b, 1, 2);\n"
	"\tx += gcap_atomic_cas_u64(&st->a, 1, 2) + gcap_atomic_max_u64(&st->a, 3);\n"
	"\tx += gcap_atomic_min_u64(&st->a, 3) + gcap_atomic_max_u32(&st->b, 3);\n"
	"\tx += gcap_atomic_or_u64(&st->a, 4) + gcap_atomic_load_u64(&st->a);\n"
	"\tstruct gcap_hkey k; gcap_hkey_set(&k, p.src, 16);\n"
	"\tbool ins; int32_t s = gcap_htab_insert(&st->t, &k, &ins);\n"
	"\ts += gcap_htab_find(&st->t, &k) + (int32_t)gcap_htab_size(&st->t);\n"
	"\tx += gcap_hash_bytes(buf, 4, 1) + gcap_mix32(u32) + (q ? q[0] : 0);\n"
	"\tuint64_t m; uint32_t sn;\n"
	"\tgcap_verdict_apply(GCAP_SNAP(x & 255), 1, pkt->caplen, &m, &sn);\n"
	"\treturn s > 0 ? GCAP_OUTPUT(s & 63) : (uint32_t)m | sn;\n"
	"}\n";

/* Compile source (as the gpu executor would) and fail with NVRTC's log. */
/* Compile text with NVRTC for sm_90, uncached: 0, or -ENOEXEC with the
 * log in *log (malloc'd; NULL when there is none). */
static int
nvrtc_compile(const char *text, const char *name, char **log)
{
	const char *root = getenv("GCAP_SOURCE_ROOT");
	char inc[4200], eb[GCAP_ERRBUF_SIZE];
	snprintf(inc, sizeof(inc), "-I%s/include", root ? root : ".");
	const char *opts[] = { inc, "-std=c++17" };
	struct gcap_rtc_info info;
	void *img = NULL;
	size_t len = 0;
	memset(&info, 0, sizeof(info));
	int rc = gcap_rtc_compile(text, name, 9, 0, opts, 2, NULL, GCAP_RTC_F_NO_CACHE,
				  &img, &len, &info, eb);
	*log = info.log ? strdup(info.log) : NULL;
	if (rc == 0)
		ck_assert_uint_gt(len, 100);
	ck_assert_msg(rc == 0 || rc == -ENOEXEC, "gcap_rtc_compile: %s", eb);
	free(img);
	gcap_rtc_info_clear(&info);
	return rc;
}

/* Compile source (as the gpu executor would) and fail with NVRTC's log. */
static void
nvrtc_check(const char *path, const char *src)
{
	size_t n = strlen(path) + strlen(src) + strlen(wrapper) + 64;
	char *text = malloc(n), *log;
	snprintf(text, n, "#line 1 \"%s\"\n%s%s", path, src, wrapper);
	int rc = nvrtc_compile(text, path, &log);
	ck_assert_msg(rc == 0, "NVRTC: %s", log ? log : "");
	free(log);
	free(text);
}

static void
check_example(const char *name)
{
	const char *path = kt_example(name);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	static char src[1 << 20];
	size_t n = fread(src, 1, sizeof(src) - 1, f);
	src[n] = '\0';
	fclose(f);
	nvrtc_check(path, src);
}

START_TEST(example_dns)
{
	check_example("dns");
}
END_TEST
START_TEST(example_synflood)
{
	check_example("synflood");
}
END_TEST
START_TEST(example_sigmatch)
{
	check_example("sigmatch");
}
END_TEST
START_TEST(example_flowfirst)
{
	check_example("flowfirst");
}
END_TEST
START_TEST(helpers)
{
	nvrtc_check("every_helper.c", every_helper);
}
END_TEST

/* a syntax error is reported by NVRTC with the user's file and line */
START_TEST(error_line)
{
	const char *src = "#line 1 \"bad.c\"\n#include <gpucap/gcap_kernel.h>\n"
			  "struct gcap_kstate { int x; };\nint y = ;\n";
	char *log;
	ck_assert_int_eq(nvrtc_compile(src, "bad.c", &log), -ENOEXEC);
	ck_assert_msg(log && strstr(log, "bad.c(3)") != NULL, "log: %s", log ? log : "");
	free(log);
}
END_TEST

int
main(void)
{
	char eb[GCAP_ERRBUF_SIZE];
	if (gcap_rtc_load(eb) != 0) {
		printf("SKIP: %s\n", eb);
		return 77;
	}
	Suite *s = suite_create("kernels-nvrtc");
	TCase *t = tcase_create("nvrtc");
	tcase_set_timeout(t, 240);
	tcase_add_test(t, helpers);
	tcase_add_test(t, example_dns);
	tcase_add_test(t, example_synflood);
	tcase_add_test(t, example_sigmatch);
	tcase_add_test(t, example_flowfirst);
	tcase_add_test(t, error_line);
	suite_add_tcase(s, t);
	SRunner *r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
