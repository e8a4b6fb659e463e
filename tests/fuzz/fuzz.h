/*
 * fuzz.h - what the fuzz targets share with their replay driver: the
 * libFuzzer entry point, and the file each input is written to (the
 * readers take paths, as every front end gives them).
 */
#ifndef PW_FUZZ_H
#define PW_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes DATA to a file of this process's own, named with SUFFIX
 * (".json", ".lua"), and returns its path (static storage); aborts when
 * the file cannot be written, which is the harness's failure, not the
 * program's. */
const char *fuzz_input_file(const uint8_t *data, size_t size,
	    const char *suffix);

#endif
