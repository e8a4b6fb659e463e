/*
 * launch.c - L: the plan's schedule run for real (pw_launch) on its own
 * thread, polled by the loop like the design search: its progress is
 * copied under a lock as each iteration ends and shown on the message
 * line, Esc cancels it, and the designer never waits on it while it
 * runs (a changed problem cancels and lets go of it, job.c); quitting
 * cancels it and waits for its thread a bounded time (TUI_LAUNCH_STOP),
 * so that its workers are not computing while exit() runs the
 * libraries' destructors (OpenBLAS frees its buffers there).  What it measured stays attached to the plan it was
 * launched from, compared with the prediction (pw_measured_compare), for
 * the measured lanes, the header and the details panel, while the plan's
 * problem and schedule are the ones that ran.
 *
 * The run computes the workload pw_workload_for gives (the problem's
 * model scaled down on the CPU, or the defaults) on the workload's own
 * problem without memory limits: the designer's limits are for its
 * problem's bytes, not for the workload's fp32 tensors, which the host
 * holds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui_int.h"

/* The launch's progress callback, on its thread.  With S->hold (a test
 * seam) the first report holds the thread until the launch is cancelled,
 * in the engine's 100 ms steps. */
static void
tui_launch_report(const struct pw_rt_progress *pr, void *arg)
{
	struct tui_launch *s = arg;

	pthread_mutex_lock(&s->job.lock);
	s->progress = *pr;
	while (s->hold && !atomic_load(&s->job.cancel))
		pw_sync_wait(&s->job.cond, &s->job.lock, 0.1);
	pthread_mutex_unlock(&s->job.lock);
}

/* Frees the launch J, which no one else holds. */
static void
tui_launch_destroy(struct tui_job *j)
{
	struct tui_launch *s = (struct tui_launch *)j;

	if (s->result.measured != NULL)
		pw_rt_result_free(&s->result);
	pw_workload_clear(&s->work);
	pw_schedule_free(s->sched);
	pw_problem_free(s->problem);
	pw_problem_free(s->key);
	free(s->fail_at);
	free(s);
}

static void
tui_launch_main(struct tui_job *j)
{
	struct tui_launch *s = (struct tui_launch *)j;

	s->rc = pw_launch(s->problem, s->sched, &s->work, &s->opts, &s->result,
	    &s->err);
}

bool
tui_launch_running(const struct tui *d)
{
	return d->launch != NULL;
}

/* Frees S (NULL: nothing) without waiting: a running launch is
 * cancelled and let go, its thread freeing it when it ends. */
static void
tui_launch_free(struct tui_launch *s)
{
	/* Never wait on it: the engine stops within 100 ms of the flag,
	 * and the thread owns its copies. */
	if (s != NULL)
		tui_job_let_go(&s->job);
}

void
tui_launch_stop(struct tui_launch *s)
{
	if (s != NULL)
		tui_job_stop(&s->job, TUI_LAUNCH_STOP);
}

/* Whether A and B are the same schedule: orders and reload anchors. */
static bool
tui_launch_same(const struct pw_schedule *a, const struct pw_schedule *b)
{
	struct pw_anchor x, y;
	bool hx, hy;
	int st, mb;

	if (!pw_schedule_same_orders(a, b, NULL, NULL) ||
	    a->nstages != b->nstages || a->microbatches != b->microbatches)
		return false;
	for (st = 0; st < a->nstages; st++) {
		for (mb = 0; mb < a->microbatches; mb++) {
			hx = pw_schedule_anchor(a, st, mb, &x);
			hy = pw_schedule_anchor(b, st, mb, &y);
			if (hx != hy || (hx && (!pw_op_same(x.op, y.op) ||
			    x.at_end != y.at_end)))
				return false;
		}
	}
	return true;
}

/* Starts the launch of D's plan.  Returns it, or NULL with ERR. */
static struct tui_launch *
tui_launch_start(struct tui *d, struct pw_error *err)
{
	const struct pw_problem *p = pw_plan_problem(d->plan);
	enum pw_rt_backend backend = pw_rt_backend_default();
	struct tui_launch *s = pw_xcalloc(1, sizeof *s);
	const char *fail;

	tui_job_init(&s->job, tui_launch_main, tui_launch_destroy);
	s->key = pw_problem_copy(p);
	s->sched = pw_schedule_copy(pw_plan_schedule(d->plan));
	s->hold = d->launch_hold;
	if (pw_workload_for(p, NULL, backend, &s->work, err) != PW_OK)
		goto fail;
	if ((s->problem = pw_workload_problem(p, &s->work, INFINITY,
	    err)) == NULL)
		goto fail;
	pw_rt_opts_init(&s->opts);
	s->opts.backend = backend;
	s->opts.transport = PW_RT_LOCAL;
	s->opts.cancel = &s->job.cancel;
	/* The testing aid of docs/runtime.md, as pipewright launch reads it;
	 * copied, since the environment may change while it runs. */
	if ((fail = getenv("PIPEWRIGHT_FAIL_AT")) != NULL)
		s->opts.fail_at = s->fail_at = pw_xstrdup(fail);
	if (pw_rt_wire_env(getenv("PIPEWRIGHT_WIRE"), &s->opts, err) != PW_OK)
		goto fail;
	s->opts.progress = tui_launch_report;
	s->opts.progress_arg = s;
	if (tui_job_start(&s->job) != 0) {
		pw_error_set(err, "cannot start its thread");
		goto fail;
	}
	return s;
fail:
	tui_job_release(&s->job);
	return NULL;
}

unsigned
tui_launch_begin(struct tui *d)
{
	const struct pw_workload *w;
	struct pw_error err;
	char sched[64];

	if (tui_launch_running(d)) {
		tui_message(d, true, "a launch is running: Esc stops it first");
		return TUI_DRAW_MESSAGE;
	}
	if (pw_plan_status(d->plan, &err) != PW_OK) {
		tui_message(d, true, "launch: the orders do not time (undo "
		    "first): %s", err.msg);
		return TUI_DRAW_MESSAGE;
	}
	if ((d->launch = tui_launch_start(d, &err)) == NULL) {
		tui_message(d, true, "launch: %s", err.msg);
		return TUI_DRAW_MESSAGE;
	}
	w = &d->launch->work;
	tui_source(d, sched, sizeof sched);
	/* Short enough for 80 columns with a family's name. */
	tui_message(d, false, "launch: %s on %s, MLP blocks %dx%d, %d tokens%s, "
	    "no attention (Esc stops)", sched,
	    pw_rt_backend_name(d->launch->opts.backend), w->hidden, w->ffn,
	    w->tokens, w->scaled ? ", scaled down" : "");
	return TUI_DRAW_MESSAGE;
}

unsigned
tui_launch_cancel(struct tui *d)
{
	if (!tui_launch_running(d))
		return 0;
	tui_job_cancel(&d->launch->job);
	tui_message(d, false, "stopping the launch");
	return TUI_DRAW_MESSAGE;
}

/* Whether CMP's measured and predicted steps are more than 10 times
 * apart: a problem whose times are not the machine's (given stages'
 * seconds against the workload's milliseconds), whose run lanes on the
 * shared axis are a cell or so, and which only a calibration makes
 * comparable. */
static bool
tui_launch_apart(const struct pw_measured_cmp *cmp)
{
	double lo = fmin(cmp->step_measured, cmp->step_predicted);
	double hi = fmax(cmp->step_measured, cmp->step_predicted);

	return hi > 10 * lo;
}

/* The thread is over: joined, and its measured run attached when the
 * plan is still the one launched; the message line says how it went. */
static unsigned
tui_launch_end(struct tui *d, struct tui_launch *s)
{
	const struct tui_measured *m;
	struct pw_measured *run;
	char step[32], pred[32];

	pthread_join(s->job.thread, NULL);
	d->launch = NULL;
	if (s->rc == PW_ERR_CANCELLED)
		tui_message(d, false, "launch stopped: %s",
		    s->err.msg);
	else if (s->rc != PW_OK)
		tui_message(d, true, "launch: %s", s->err.msg);
	else if (!tui_launch_same(s->sched, pw_plan_schedule(d->plan)))
		tui_message(d, false, "launch: done, but the schedule changed "
		    "since: its measured run no longer describes it");
	else {
		run = s->result.measured;
		s->result.measured = NULL;
		if (tui_measured_attach(d, s->problem, run, &s->err) != PW_OK)
			tui_message(d, true, "launch: %s",
			    s->err.msg);
		else {
			m = d->measured;
			pw_fmt_seconds(step, sizeof step, m->cmp.step_measured);
			pw_fmt_seconds(pred, sizeof pred, m->cmp.step_predicted);
			/* What to do first, within 80 columns. */
			tui_message(d, false, tui_launch_apart(&m->cmp) ?
			    "launch: %s measured, %s predicted: over 10x apart, "
			    "calibrate to compare (pipewright calibrate); %d "
			    "iterations, loss %.4f" : "launch: step %s measured "
			    "against %s predicted, %d iterations, loss %.4f; the "
			    "run lanes show it", step, pred, m->run->iterations,
			    m->run->loss[m->run->iterations - 1]);
		}
		s->problem = NULL;
	}
	tui_job_release(&s->job);
	return TUI_DRAW_ALL;
}

unsigned
tui_launch_tick(struct tui *d)
{
	struct tui_launch *s = d->launch;
	struct pw_rt_progress pr;
	unsigned redraw = 0;
	char step[32];

	if (d->measured != NULL && tui_measured_of(d) == NULL) {
		tui_measured_free(d->measured);
		d->measured = NULL;
		redraw = TUI_DRAW_ALL;
	}
	if (s == NULL)
		return redraw;
	if (!pw_problem_same(s->key, pw_plan_problem(d->plan))) {
		tui_launch_free(s);
		d->launch = NULL;
		tui_message(d, false, "launch cancelled: the problem changed");
		return TUI_DRAW_ALL;
	}
	if (atomic_load(&s->job.finished))
		return redraw | tui_launch_end(d, s);
	pthread_mutex_lock(&s->job.lock);
	pr = s->progress;
	pthread_mutex_unlock(&s->job.lock);
	if (pr.iteration == s->shown)
		return redraw;
	s->shown = pr.iteration;
	tui_progress(d, "launch: iteration %d/%d%s, %s, loss %.4f (Esc stops)",
	    pr.iteration, pr.total, pr.warmup ? " (warm-up)" : "",
	    pw_fmt_seconds(step, sizeof step, pr.step), pr.loss);
	return redraw | TUI_DRAW_MESSAGE;
}

/* ------------------------------------------------------------------ */
/* The measured run                                                    */

void
tui_measured_free(struct tui_measured *m)
{
	if (m == NULL)
		return;
	pw_measured_cmp_free(&m->cmp);
	pw_timing_free(m->timing);
	pw_measured_free(m->run);
	pw_plan_free(m->plan);
	pw_schedule_free(m->sched);
	pw_problem_free(m->key);
	free(m);
}

int
tui_measured_attach(struct tui *d, struct pw_problem *problem,
    struct pw_measured *run, struct pw_error *err)
{
	struct tui_measured *m = pw_xcalloc(1, sizeof *m);
	const struct pw_plan *pl;
	size_t i;
	int rc;

	m->key = pw_problem_copy(pw_plan_problem(d->plan));
	m->sched = pw_schedule_copy(pw_plan_schedule(d->plan));
	m->run = run;
	if ((rc = pw_plan_new(problem, pw_schedule_copy(m->sched), &m->plan,
	    err)) != PW_OK)
		goto fail;
	pl = m->plan;
	if ((m->timing = pw_measured_timing(pw_plan_problem(pl), run,
	    err)) == NULL) {
		rc = PW_ERR_INPUT;
		goto fail;
	}
	if ((rc = pw_measured_compare(pw_plan_problem(pl), pw_plan_schedule(pl),
	    pw_plan_timing(pl), pw_plan_metrics(pl), run, &m->cmp, err)) !=
	    PW_OK)
		goto fail;
	for (i = 0; i < m->timing->universe; i++) {
		if (pw_timing_has(m->timing, i))
			m->end = fmax(m->end, m->timing->end[i]);
	}
	tui_measured_free(d->measured);
	d->measured = m;
	tui_view_fit(d);
	tui_view_follow(d);
	return PW_OK;
fail:
	tui_measured_free(m);
	return rc;
}

const struct tui_measured *
tui_measured_of(const struct tui *d)
{
	const struct tui_measured *m = d->measured;

	if (m == NULL || !pw_problem_same(m->key, pw_plan_problem(d->plan)) ||
	    !tui_launch_same(m->sched, pw_plan_schedule(d->plan)))
		return NULL;
	return m;
}

const struct pw_op_error *
tui_measured_op(const struct tui_measured *m, struct pw_op op)
{
	size_t i;

	for (i = 0; i < m->cmp.nops; i++) {
		if (pw_op_same(m->cmp.ops[i].op, op))
			return &m->cmp.ops[i];
	}
	return NULL;
}
