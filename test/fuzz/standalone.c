/*
 * standalone: a main() for the fuzz targets without libFuzzer, so any
 * compiler builds them and make check replays the seed corpora and the
 * malformed-input corpus through them (under SANITIZE=1 with ASan and
 * UBSan watching):
 *
 *	fuzz_model FILE|DIR...
 *
 * runs the target once on each file (a directory: each regular file in
 * it, not recursively), then prints "N inputs" on stdout. A finding
 * aborts, as under libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static long ninputs;

static int
run_file(const char *path)
{
	uint8_t *buf = NULL, *nb;
	size_t len = 0, cap = 0, n;
	FILE *fp;

	if (!(fp = fopen(path, "rb"))) {
		perror(path);
		return -1;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			if (!(nb = realloc(buf, cap))) {
				fprintf(stderr, "%s: out of memory\n", path);
				free(buf);
				fclose(fp);
				return -1;
			}
			buf = nb;
		}
		if ((n = fread(buf + len, 1, cap - len, fp)) == 0)
			break;
		len += n;
	}
	if (ferror(fp)) {
		perror(path);
		free(buf);
		fclose(fp);
		return -1;
	}
	fclose(fp);
	/* an exact-size copy, so ASan sees reads past the end */
	if (!(nb = malloc(len ? len : 1))) {
		free(buf);
		return -1;
	}
	memcpy(nb, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(nb, len);
	free(nb);
	ninputs++;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
run_dir(const char *dir)
{
	char **names = NULL, **nn, *path;
	size_t n = 0, cap = 0;
	struct dirent *d;
	struct stat st;
	DIR *dp;
	int rc = 0;

	if (!(dp = opendir(dir))) {
		perror(dir);
		return -1;
	}
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if (!(nn = realloc(names, cap * sizeof *names)))
				abort();
			names = nn;
		}
		if (!(names[n++] = strdup(d->d_name)))
			abort();
	}
	closedir(dp);
	qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (!(path = malloc(strlen(dir) + strlen(names[i]) + 2)))
			abort();
		sprintf(path, "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    run_file(path) < 0)
			rc = -1;
		free(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

int
main(int argc, char **argv)
{
	struct stat st;
	int rc = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			rc = 1;
		} else if (S_ISDIR(st.st_mode) ? run_dir(argv[i]) < 0 :
		    run_file(argv[i]) < 0)
			rc = 1;
	}
	printf("%ld inputs\n", ninputs);
	return fflush(stdout) == 0 ? rc : 1;
}
