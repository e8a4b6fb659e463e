/* fuzz_file.c - the input file of a fuzz target. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

const char *
fuzz_input_file(const uint8_t *data, size_t size, const char *suffix)
{
	static char path[256];
	FILE *fp;

	if (path[0] == '\0') {
		const char *dir = getenv("TMPDIR");

		snprintf(path, sizeof path, "%s/pw-fuzz.%ld%s",
		    dir != NULL ? dir : "/tmp", (long)getpid(), suffix);
	}
	if ((fp = fopen(path, "wb")) == NULL ||
	    (size > 0 && fwrite(data, 1, size, fp) != size) ||
	    fclose(fp) != 0) {
		perror(path);
		abort();
	}
	return path;
}
