/*
 * cuda_load.c - finds and loads the CUDA backend's module
 * (pipewright-cuda.so, rt_int.h) the first time the program asks for a
 * GPU.  Linking cuBLAS, NCCL and the CUDA runtime into the program made
 * every command, a --version or a schedule's check, pay for loading them
 * at start (0.39 s and 225 MB on a 2-core machine with CUDA); now
 * only a CUDA launch, or the question whether one could run, does.
 *
 * Where the module is looked for, first found wins:
 *   1. $PIPEWRIGHT_CUDA_MODULE, a path, when set (the suite's programs,
 *      which live in tests/, point it at the build tree's);
 *   2. the running program's own folder, which holds the module in a
 *      build tree (./pipewright launch --backend cuda works uninstalled);
 *   3. PW_CUDA_MODULE_DIR, the folder make install put it in.
 * The module must be of the program's version (its version string is
 * PACKAGE_STRING, its table of this build's size), since the table's
 * layout is this version's.
 *
 * The answer, the table or why it did not load, is found once per process
 * and kept: dlopen is not undone, the backend's state lives in the
 * module until exit.
 */
#include "config.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_int.h"

/* What the module calls back into (nm -D --undefined-only
 * pipewright-cuda.so): named here so that every program that can load
 * the module links them from the static libraries, whatever else it
 * uses; dlopen's RTLD_NOW below turns one missing into a one-line error
 * and test_cuda into a failure. */
typedef void (*pw_cload_import)(void);
static const pw_cload_import pw_cload_imports[] __attribute__((used)) = {
	(pw_cload_import)pw_error_set,
	(pw_cload_import)pw_fmt_bytes,
	(pw_cload_import)pw_now,
	(pw_cload_import)pw_parse_int,
	(pw_cload_import)pw_xcalloc,
	(pw_cload_import)pw_xmalloc,
	(pw_cload_import)pw_xreallocarray,
	(pw_cload_import)pw_rt_gpu_of,
	(pw_cload_import)pw_rt_math_of,
	(pw_cload_import)pw_rt_pool_new,
	(pw_cload_import)pw_rt_pool_take,
	(pw_cload_import)pw_rt_pool_give,
	(pw_cload_import)pw_rt_pool_peak,
	(pw_cload_import)pw_rt_pool_free,
	(pw_cload_import)pw_rt_wire_matched,
};

static pthread_once_t pw_cload_once = PTHREAD_ONCE_INIT;
static const struct pw_rt_cuda_module *pw_cload_module;
static char pw_cload_why[PATH_MAX + 256];

/* The module's path by the order above, in PATH[len]; false, with why,
 * when $PIPEWRIGHT_CUDA_MODULE does not fit. */
static bool
pw_cload_path(char *path, size_t len)
{
	const char *env = getenv("PIPEWRIGHT_CUDA_MODULE");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env != NULL && env[0] != '\0') {
		/* A bare name is a file here, not one for dlopen to look for
		 * in the system's library folders. */
		if (snprintf(path, len, "%s%s", strchr(env, '/') != NULL ? "" :
		    "./", env) >= (int)len) {
			snprintf(pw_cload_why, sizeof pw_cload_why,
			    "PIPEWRIGHT_CUDA_MODULE is longer than a path may be");
			return false;
		}
		return true;
	}
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			slash[1] = '\0';
			if (snprintf(path, len, "%s%s", self,
			    PW_RT_CUDA_MODULE_NAME) < (int)len &&
			    access(path, F_OK) == 0)
				return true;
		}
	}
	snprintf(path, len, "%s/%s", PW_CUDA_MODULE_DIR, PW_RT_CUDA_MODULE_NAME);
	return true;
}

static void
pw_cload_load(void)
{
	char path[PATH_MAX];
	const struct pw_rt_cuda_module *m;
	const char *err;
	bool named;
	void *h;

	if (!pw_cload_path(path, sizeof path))
		return;
	/* RTLD_NOW: a symbol the module needs and the program lacks is
	 * found here, as one line, not at a call in the middle of a run. */
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		err = dlerror();
		if (err == NULL)
			err = "";
		/* dlerror names the module when it is the module that is
		 * missing, and a library of CUDA's when that is. */
		named = strncmp(err, path, strlen(path)) == 0;
		snprintf(pw_cload_why, sizeof pw_cload_why,
		    "the CUDA backend's module did not load (%s%s%s)",
		    named ? "" : path, named ? "" : ": ", err);
		return;
	}
	m = dlsym(h, PW_RT_CUDA_MODULE_SYMBOL);
	if (m == NULL)
		snprintf(pw_cload_why, sizeof pw_cload_why, "%s is not the "
		    "CUDA backend's module (no %s)", path,
		    PW_RT_CUDA_MODULE_SYMBOL);
	else if (m->size != sizeof *m || m->version == NULL ||
	    strcmp(m->version, PACKAGE_STRING) != 0)
		snprintf(pw_cload_why, sizeof pw_cload_why, "%s is another "
		    "version's CUDA backend (%s, this program is %s)", path,
		    m->size == sizeof *m && m->version != NULL ? m->version :
		    "another table", PACKAGE_STRING);
	else {
		pw_cload_module = m;
		return;
	}
	dlclose(h);
}

const struct pw_rt_cuda_module *
pw_rt_cuda_load(char *why, size_t len)
{
	pthread_once(&pw_cload_once, pw_cload_load);
	if (pw_cload_module == NULL && why != NULL && len > 0)
		snprintf(why, len, "%s", pw_cload_why);
	return pw_cload_module;
}
