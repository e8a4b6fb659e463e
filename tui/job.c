/*
 * job.c - a background job of the designer (the design search, the
 * memory sweep, a launch): one thread that runs the job's work, polled
 * by the loop, never waited on while the designer runs.  Two hold the
 * job while its thread runs, the thread and the designer; whoever lets
 * go last frees it, so that the designer may drop a running job (a
 * changed problem, a new search) without waiting for it to notice its
 * cancel flag.
 */
#include "tui_int.h"

void
tui_job_init(struct tui_job *j, void (*run)(struct tui_job *),
    void (*destroy)(struct tui_job *))
{
	j->run = run;
	j->destroy = destroy;
	atomic_init(&j->refs, 1);
	atomic_init(&j->cancel, 0);
	atomic_init(&j->finished, false);
	pw_sync_init(&j->lock, &j->cond);
}

void
tui_job_release(struct tui_job *j)
{
	if (atomic_fetch_sub(&j->refs, 1) != 1)
		return;
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	j->destroy(j);
}

static void *
tui_job_main(void *arg)
{
	struct tui_job *j = arg;

	j->run(j);
	pthread_mutex_lock(&j->lock);
	atomic_store(&j->finished, true);
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
	/* The last touch of J: a designer that let go has detached us. */
	tui_job_release(j);
	return NULL;
}

int
tui_job_start(struct tui_job *j)
{
	atomic_store(&j->refs, 2);
	if (pw_thread_start(&j->thread, tui_job_main, j) != 0) {
		atomic_store(&j->refs, 1);
		return -1;
	}
	return 0;
}

void
tui_job_cancel(struct tui_job *j)
{
	pthread_mutex_lock(&j->lock);
	atomic_store(&j->cancel, 1);
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
}

void
tui_job_let_go(struct tui_job *j)
{
	tui_job_cancel(j);
	pthread_detach(j->thread);
	tui_job_release(j);
}

void
tui_job_drop(struct tui_job *j, bool joined)
{
	if (joined)
		tui_job_release(j);
	else
		tui_job_let_go(j);
}

bool
tui_job_stop(struct tui_job *j, double seconds)
{
	double end = pw_now() + seconds, left;
	bool ended;

	tui_job_cancel(j);
	pthread_mutex_lock(&j->lock);
	while (!atomic_load(&j->finished) && (left = end - pw_now()) > 0)
		pw_sync_wait(&j->cond, &j->lock, left);
	ended = atomic_load(&j->finished);
	pthread_mutex_unlock(&j->lock);
	if (ended) {
		pthread_join(j->thread, NULL);
		tui_job_release(j);
	} else
		tui_job_let_go(j);
	return ended;
}
