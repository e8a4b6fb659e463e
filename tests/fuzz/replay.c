/*
 * replay.c - runs a fuzz target on the files named on the command line
 * (or the files of the directories named), one TAP line each; without
 * arguments, on its seeds and on every input a fuzzer found crashing
 * (tests/data/fuzz/REPLAY_SET), which is how each crash becomes a test,
 * run by make check with the compiler and sanitizers of that build.
 * Compiled with REPLAY_SET ("json", "lua") and REPLAY_SUFFIX (".json",
 * ".lua"): a directory's files are those whose names end so.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tap.h"
#include "fuzz.h"

/* Runs the target on the file PATH. */
static void
replay_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	/* Never NULL, as libFuzzer's inputs are not, even when empty. */
	unsigned char *data = malloc(1);
	size_t size = 0, got;
	unsigned char chunk[65536];

	if (data == NULL)
		abort();
	if (fp == NULL) {
		tap_ok(false, "%s: %s", path, strerror(errno));
		free(data);
		return;
	}
	while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0) {
		if ((data = realloc(data, size + got)) == NULL)
			abort();
		memcpy(data + size, chunk, got);
		size += got;
	}
	fclose(fp);
	tap_ok(LLVMFuzzerTestOneInput(data, size) == 0, "%s", path);
	free(data);
}

/* Compares directory entries by name, so the order is the same on every
 * file system. */
static int
replay_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether NAME ends in REPLAY_SUFFIX. */
static bool
replay_wanted(const char *name)
{
	size_t len = strlen(name), n = strlen(REPLAY_SUFFIX);

	return len > n &&
	    strcmp(name + len - n, REPLAY_SUFFIX) == 0;
}

/* Runs the target on DIR's files: all of them, or (ALL false) those
 * replay_wanted names. */
static void
replay_dir(const char *dir, bool all)
{
	char **names = NULL, path[4096];
	struct dirent *de;
	size_t i, n = 0;
	DIR *d;

	if ((d = opendir(dir)) == NULL) {
		tap_ok(false, "%s: %s", dir, strerror(errno));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    (!all && !replay_wanted(de->d_name)))
			continue;
		if ((names = realloc(names, (n + 1) * sizeof *names)) == NULL ||
		    (names[n] = strdup(de->d_name)) == NULL)
			abort();
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof *names, replay_cmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		replay_file(path);
		free(names[i]);
	}
	free(names);
}

/* The directory NAME of the environment variable VAR, or of "."; ARG,
 * when given, below it. */
static void
replay_env_dir(const char *var, const char *arg)
{
	const char *top = getenv(var);
	char dir[4096];

	snprintf(dir, sizeof dir, "%s%s%s", top != NULL ? top : ".",
	    arg != NULL ? "/" : "", arg != NULL ? arg : "");
	replay_dir(dir, false);
}

int
main(int argc, char **argv)
{
	struct stat st;
	int i;

	if (argc == 1) {
		replay_env_dir("EXAMPLES", NULL);
		replay_env_dir("TESTDATA", "bad");
		replay_env_dir("TESTDATA", "fuzz/" REPLAY_SET);
	}
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			replay_dir(argv[i], true);
		else
			replay_file(argv[i]);
	}
	return tap_done();
}
