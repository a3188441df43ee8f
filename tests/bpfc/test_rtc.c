/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gcap_rtc: SHA-256 vectors, NVRTC compiles of translated filters (NVRTC
 * needs no GPU), the cache (miss, hit, corrupt/truncated/foreign entries
 * rebuilt, unusable directory, entries or directories another user could
 * have planted not used), compile errors with the log, and the
 * translator's output through nvcc -c -x cu as --dump-gpu-code promises.
 * Exits 77 (skip) after the SHA-256 checks when libnvrtc cannot be loaded.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gcap_config.h"
#include "gpucap/gcap_bpfc.h"
#include "gpucap/gcap_filter.h"
#include "gpucap/gcap_rtc.h"

static void
to_hex(const uint8_t *b, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void
check_sha(const void *d, size_t n, const char *want)
{
	uint8_t h[32];
	char got[65];

	gcap_rtc_sha256(d, n, h);
	to_hex(h, got);
	ck_assert_str_eq(got, want);
}

START_TEST(test_sha256)
{
	char *a = malloc(1000000);

	check_sha("", 0,
		  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abc", 3,
		  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	ck_assert_ptr_nonnull(a);
	memset(a, 'a', 1000000);
	check_sha(a, 1000000,
		  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* 55, 56, 63, 64 bytes: the padding edges */
	check_sha(a, 55,
		  "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	check_sha(a, 64,
		  "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
	free(a);
}
END_TEST

static char tmpdir[64];

static void
make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/gcap-rtc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
rm_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* a unit of real filters, with the batch kernel */
static char *
filters_source(const char *prefix)
{
	static const char *const e[] = { "ip", "tcp port 80 or udp port 53",
					 "ip6 protochain 6", "ip[2:2] / ip[1] > 3", "" };
	struct bpf_program p[5];
	char eb[GCAP_ERRBUF_SIZE], *s;

	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(gcap_filter_compile(e[i], DLT_EN10MB, 262144, &p[i], eb),
				 0);
	s = gcap_bpfc_translate(p, 5, prefix, GCAP_BPFC_F_KERNEL, eb);
	ck_assert_msg(s != NULL, "%s", eb);
	for (int i = 0; i < 5; i++)
		gcap_filter_free(&p[i]);
	return s;
}

static int
memmem_has(const void *hay, size_t n, const char *needle)
{
	return memmem(hay, n, needle, strlen(needle)) != NULL;
}

START_TEST(test_compile_and_cache)
{
	struct gcap_rtc_info info;
	char eb[GCAP_ERRBUF_SIZE];
	void *img = NULL, *img2 = NULL;
	size_t n = 0, n2 = 0;
	char *src = filters_source("rt");
	struct stat st;

	make_tmpdir();
	/* miss: compiled and stored */
	ck_assert_msg(gcap_rtc_compile(src, "filters.cu", 9, 0, NULL, 0, tmpdir, 0, &img,
				       &n, &info, eb) == 0,
		      "%s", eb);
	printf("NVRTC %d.%d: %zu-byte CUBIN for sm_90 in %.1f ms (miss)\n",
	       info.nvrtc_major, info.nvrtc_minor, n, info.compile_ms);
	ck_assert_int_eq(info.cache_hit, 0);
	ck_assert_int_eq(info.cache_written, 1);
	ck_assert_str_eq(info.cache_warning, "");
	ck_assert_uint_eq(strlen(info.key), 64);
	ck_assert_int_eq(memcmp(img, "\177ELF", 4), 0);
	ck_assert(memmem_has(img, n, "rt_kernel"));
	ck_assert_int_eq(stat(info.cache_path, &st), 0);
	ck_assert_uint_gt((size_t)st.st_size, n);
	gcap_rtc_info_clear(&info);

	/* hit: the same bytes, no NVRTC */
	ck_assert_int_eq(gcap_rtc_compile(src, "filters.cu", 9, 0, NULL, 0, tmpdir, 0,
					  &img2, &n2, &info, eb),
			 0);
	printf("cache hit: load %.3f ms\n", info.load_ms);
	ck_assert_int_eq(info.cache_hit, 1);
	ck_assert_int_eq(info.cache_written, 0);
	ck_assert(info.compile_ms == 0.0);
	ck_assert_uint_eq(n2, n);
	ck_assert_int_eq(memcmp(img, img2, n), 0);
	free(img2);
	gcap_rtc_info_clear(&info);

	/* another architecture or another option: another key */
	{
		const char *opt[] = { "-DGCAP_X=1" };
		char key[65];

		ck_assert_int_eq(gcap_rtc_compile(src, NULL, 9, 0, NULL, 0, tmpdir, 0,
						  &img2, &n2, &info, eb),
				 0);
		strcpy(key, info.key);
		free(img2);
		gcap_rtc_info_clear(&info);
		ck_assert_int_eq(gcap_rtc_compile(src, NULL, 8, 0, NULL, 0, tmpdir, 0,
						  &img2, &n2, &info, eb),
				 0);
		ck_assert_int_eq(info.cache_hit, 0);
		ck_assert_str_ne(info.key, key);
		free(img2);
		gcap_rtc_info_clear(&info);
		ck_assert_int_eq(gcap_rtc_compile(src, NULL, 9, 0, opt, 1, tmpdir, 0,
						  &img2, &n2, &info, eb),
				 0);
		ck_assert_int_eq(info.cache_hit, 0);
		ck_assert_str_ne(info.key, key);
		free(img2);
		gcap_rtc_info_clear(&info);
	}
	free(img);
	free(src);
	rm_tmpdir();
}
END_TEST

/* damage the entry, then: a miss that rebuilds it, then a hit again */
static void
damage_and_rebuild(const char *src, void (*damage)(const char *path), const char *what)
{
	struct gcap_rtc_info info;
	char eb[GCAP_ERRBUF_SIZE], path[1024];
	void *img;
	size_t n;

	ck_assert_int_eq(gcap_rtc_compile(src, NULL, 9, 0, NULL, 0, tmpdir, 0, &img, &n,
					  &info, eb),
			 0);
	strcpy(path, info.cache_path);
	free(img);
	gcap_rtc_info_clear(&info);
	damage(path);
	ck_assert_int_eq(gcap_rtc_compile(src, NULL, 9, 0, NULL, 0, tmpdir, 0, &img, &n,
					  &info, eb),
			 0);
	ck_assert_msg(info.cache_hit == 0 && info.cache_rebuilt == 1 &&
			      info.cache_written == 1,
		      "%s: hit %d rebuilt %d written %d", what, info.cache_hit,
		      info.cache_rebuilt, info.cache_written);
	ck_assert_int_eq(memcmp(img, "\177ELF", 4), 0);
	free(img);
	gcap_rtc_info_clear(&info);
	ck_assert_int_eq(gcap_rtc_compile(src, NULL, 9, 0, NULL, 0, tmpdir, 0, &img, &n,
					  &info, eb),
			 0);
	ck_assert_msg(info.cache_hit == 1, "%s: not a hit after rebuilding", what);
	free(img);
	gcap_rtc_info_clear(&info);
}

static void
flip_payload_byte(const char *path)
{
	int fd = open(path, O_RDWR);
	unsigned char b;
	off_t off = 200;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, off), 1);
	b ^= 0x5a;
	ck_assert_int_eq(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void
truncate_entry(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
}

static void
empty_entry(const char *path)
{
	ck_assert_int_eq(truncate(path, 0), 0);
}

static void
foreign_entry(const char *path)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs("this is not a gpucap cache entry, but it has the right name\n", f);
	fclose(f);
}

static void
other_arch_header(const char *path)
{
	/* the arch field (offset 12) of an otherwise valid entry */
	int fd = open(path, O_RDWR);
	uint32_t arch = 75;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &arch, 4, 12), 4);
	close(fd);
}

START_TEST(test_cache_damaged)
{
	char *src = filters_source("dm");

	make_tmpdir();
	damage_and_rebuild(src, flip_payload_byte, "corrupt payload");
	damage_and_rebuild(src, truncate_entry, "truncated");
	damage_and_rebuild(src, empty_entry, "empty");
	damage_and_rebuild(src, foreign_entry, "foreign");
	damage_and_rebuild(src, other_arch_header, "other architecture");
	free(src);
	rm_tmpdir();
}
END_TEST

START_TEST(test_cache_unusable)
{
	struct gcap_rtc_info info;
	char eb[GCAP_ERRBUF_SIZE], dir[128];
	char *src = filters_source("un");
	void *img;
	size_t n;
	FILE *f;

	make_tmpdir();
	/* a directory below a regular file cannot exist (even for root) */
	snprintf(dir, sizeof(dir), "%s/file", tmpdir);
	f = fopen(dir, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	strcat(dir, "/cache");
	ck_assert_int_eq(
		gcap_rtc_compile(src, NULL, 9, 0, NULL, 0, dir, 0, &img, &n, &info, eb),
		0);
	printf("warning: %s\n", info.cache_warning);
	ck_assert_str_ne(info.cache_warning, "");
	ck_assert_ptr_nonnull(strstr(info.cache_warning, "without cache"));
	ck_assert_int_eq(info.cache_hit, 0);
	ck_assert_int_eq(info.cache_written, 0);
	ck_assert_int_eq(memcmp(img, "\177ELF", 4), 0);
	free(img);
	gcap_rtc_info_clear(&info);

	/* GCAP_RTC_F_NO_CACHE: nothing read or written, no warning */
	ck_assert_int_eq(gcap_rtc_compile(src, NULL, 9, 0, NULL, 0, tmpdir,
					  GCAP_RTC_F_NO_CACHE, &img, &n, &info, eb),
			 0);
	ck_assert_str_eq(info.cache_warning, "");
	ck_assert_str_eq(info.cache_path, "");
	ck_assert_int_eq(info.cache_written, 0);
	free(img);
	gcap_rtc_info_clear(&info);
	free(src);
	rm_tmpdir();
}
END_TEST

/* compile src with the cache in dir: its info (image freed) */
static void
compile_in(const char *src, const char *dir, struct gcap_rtc_info *info)
{
	char eb[GCAP_ERRBUF_SIZE];
	void *img;
	size_t n;

	ck_assert_msg(gcap_rtc_compile(src, NULL, 9, 0, NULL, 0, dir, 0, &img, &n, info,
				       eb) == 0,
		      "%s", eb);
	ck_assert_int_eq(memcmp(img, "\177ELF", 4), 0);
	free(img);
}

START_TEST(test_cache_not_ours)
{
	struct gcap_rtc_info info;
	char path[1024], other[1024], cmd[2200];
	char *src = filters_source("no"), *src2 = filters_source("n2");
	struct stat st;

	make_tmpdir();
	/* another source's entry under this one's name: its key differs */
	compile_in(src, tmpdir, &info);
	strcpy(path, info.cache_path);
	gcap_rtc_info_clear(&info);
	compile_in(src2, tmpdir, &info);
	strcpy(other, info.cache_path);
	gcap_rtc_info_clear(&info);
	ck_assert_int_eq(rename(other, path), 0);
	compile_in(src, tmpdir, &info);
	ck_assert_int_eq(info.cache_hit, 0);
	ck_assert_int_eq(info.cache_rebuilt, 1);
	gcap_rtc_info_clear(&info);

	/* an entry of another owner, writable by others, or a link: not
	 * used, and left as it is */
	for (int how = 0; how < 3; how++) {
		if (how == 0 && geteuid() != 0)
			continue;
		ck_assert_int_eq(how == 0 ? chown(path, 65534, 65534) :
				 how == 1 ? chmod(path, 0666) :
					    (rename(path, other) || symlink(other, path)),
				 0);
		compile_in(src, tmpdir, &info);
		printf("warning: %s\n", info.cache_warning);
		ck_assert_int_eq(info.cache_hit, 0);
		ck_assert_int_eq(info.cache_written, 0);
		ck_assert_ptr_nonnull(strstr(info.cache_warning, "not used"));
		gcap_rtc_info_clear(&info);
		ck_assert_int_eq(lstat(path, &st), 0);
		ck_assert(how == 0 ? st.st_uid == 65534 :
			  how == 1 ? (st.st_mode & 0777) == 0666 :
				     S_ISLNK(st.st_mode));
		if (how == 2)
			ck_assert_int_eq(rename(other, path), 0);
		ck_assert_int_eq(chown(path, geteuid(), getegid()), 0);
		ck_assert_int_eq(chmod(path, 0600), 0);
	}

	/* a directory others can write (or, for root, another user's) */
	snprintf(cmd, sizeof(cmd), "%s/shared", tmpdir);
	ck_assert_int_eq(mkdir(cmd, 0777), 0);
	ck_assert_int_eq(chmod(cmd, 0777), 0);
	compile_in(src, cmd, &info);
	ck_assert_ptr_nonnull(strstr(info.cache_warning, "not used"));
	ck_assert_int_eq(info.cache_written, 0);
	gcap_rtc_info_clear(&info);
	if (geteuid() == 0) {
		ck_assert_int_eq(chmod(cmd, 0700), 0);
		ck_assert_int_eq(chown(cmd, 65534, 65534), 0);
		compile_in(src, cmd, &info);
		ck_assert_ptr_nonnull(
			strstr(info.cache_warning, "owned by another user"));
		ck_assert_int_eq(info.cache_written, 0);
		gcap_rtc_info_clear(&info);
	}
	free(src);
	free(src2);
	rm_tmpdir();
}
END_TEST

START_TEST(test_cache_env)
{
	struct gcap_rtc_info info;
	char eb[GCAP_ERRBUF_SIZE], buf[256], want[256];
	char *src = filters_source("en");
	void *img;
	size_t n;

	make_tmpdir();
	snprintf(want, sizeof(want), "%s/sub/dir", tmpdir);
	setenv("GCAP_CACHE_DIR", want, 1);
	ck_assert_int_eq(gcap_rtc_default_cache_dir(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(
		gcap_rtc_compile(src, NULL, 9, 0, NULL, 0, NULL, 0, &img, &n, &info, eb),
		0);
	ck_assert_int_eq(strncmp(info.cache_path, want, strlen(want)), 0);
	ck_assert_int_eq(access(info.cache_path, R_OK), 0);
	free(img);
	gcap_rtc_info_clear(&info);
	unsetenv("GCAP_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "/x/y", 1);
	ck_assert_int_eq(gcap_rtc_default_cache_dir(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/x/y/gpucap");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/h", 1);
	ck_assert_int_eq(gcap_rtc_default_cache_dir(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/h/.cache/gpucap");
	unsetenv("HOME");
	ck_assert_int_eq(gcap_rtc_default_cache_dir(buf, sizeof(buf)), -ENOENT);
	free(src);
	rm_tmpdir();
}
END_TEST

START_TEST(test_compile_error)
{
	struct gcap_rtc_info info;
	char eb[GCAP_ERRBUF_SIZE] = "";
	void *img = (void *)1;
	size_t n = 1;
	const char *bad = "__device__ int f(void) { return undeclared_thing + ; }\n";

	make_tmpdir();
	ck_assert_int_eq(gcap_rtc_compile(bad, "bad.cu", 9, 0, NULL, 0, tmpdir, 0, &img,
					  &n, &info, eb),
			 -ENOEXEC);
	printf("errbuf: %s\n", eb);
	ck_assert_ptr_null(img);
	ck_assert_ptr_nonnull(strstr(eb, "bad.cu"));
	ck_assert_ptr_nonnull(strstr(eb, "error"));
	ck_assert_ptr_nonnull(info.log);
	ck_assert_ptr_nonnull(strstr(info.log, "undeclared_thing"));
	ck_assert_int_eq(info.cache_written, 0);
	gcap_rtc_info_clear(&info);
	ck_assert_ptr_null(info.log);
	/* bad arguments */
	ck_assert_int_eq(gcap_rtc_compile(NULL, NULL, 9, 0, NULL, 0, tmpdir, 0, &img, &n,
					  &info, eb),
			 -EINVAL);
	ck_assert_int_eq(
		gcap_rtc_compile("", NULL, 0, 0, NULL, 0, tmpdir, 0, &img, &n, &info, eb),
		-EINVAL);
	ck_assert_int_eq(
		gcap_rtc_compile("", NULL, 9, 0, NULL, 1, tmpdir, 0, &img, &n, &info, eb),
		-EINVAL);
	/* an architecture NVRTC does not know */
	ck_assert_int_eq(gcap_rtc_compile("__device__ int x;", NULL, 1, 0, NULL, 0,
					  tmpdir, 0, &img, &n, &info, eb) < 0,
			 1);
	gcap_rtc_info_clear(&info);
	rm_tmpdir();
}
END_TEST

/* --dump-gpu-code promises: the unit compiles with nvcc -c -x cu as is */
START_TEST(test_nvcc_compiles_translation)
{
	char path[128], cmd[512], nvcc[256];
	char *src = filters_source("nv");
	FILE *f;

	snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc", GCAP_CUDA_HOME);
	if (access(nvcc, X_OK) != 0) {
		printf("no %s: nvcc check not run\n", nvcc);
		free(src);
		return;
	}
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/dump.cu", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -c -x cu -arch=sm_90 -o %s/dump.o %s", nvcc,
		 tmpdir, path);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
	free(src);
	rm_tmpdir();
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rtc");
	TCase *t = tcase_create("sha256");
	SRunner *sr;
	char eb[GCAP_ERRBUF_SIZE];
	int failed, nvrtc;

	tcase_add_test(t, test_sha256);
	suite_add_tcase(s, t);
	nvrtc = gcap_rtc_load(eb) == 0;
	if (nvrtc) {
		t = tcase_create("nvrtc");
		tcase_set_timeout(t, 600);
		tcase_add_test(t, test_compile_and_cache);
		tcase_add_test(t, test_cache_damaged);
		tcase_add_test(t, test_cache_unusable);
		tcase_add_test(t, test_cache_not_ours);
		tcase_add_test(t, test_cache_env);
		tcase_add_test(t, test_compile_error);
		tcase_add_test(t, test_nvcc_compiles_translation);
		suite_add_tcase(s, t);
	} else {
		ck_assert_int_eq(gcap_rtc_load(eb), -ENOTSUP);
		printf("NVRTC tests skipped: %s\n", eb);
	}
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return 1;
	return nvrtc ? 0 : 77;
}
