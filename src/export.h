/*
 * export.h - private to the views (show.c, export*.c): the export writers
 * the registry in export.c names, and the layout facts every view shares,
 * so that the text chart, the trace and the SVG agree on rows, chunks,
 * titles and tick steps.
 */
#ifndef PW_EXPORT_H
#define PW_EXPORT_H

#include "pipewright.h"

/* The registry's writers (struct pw_export_format), OPTIONS NULL for
 * the defaults. */
int	pw_export_chrome(FILE *, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *,
	    const struct pw_metrics *, const struct pw_export_options *,
	    struct pw_error *);
int	pw_export_svg(FILE *, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *,
	    const struct pw_metrics *, const struct pw_export_options *,
	    struct pw_error *);
int	pw_export_png(FILE *, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *,
	    const struct pw_metrics *, const struct pw_export_options *,
	    struct pw_error *);
/* torch.c: pw_torch_write without and with the transfers' rows. */
int	pw_export_torch(FILE *, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *,
	    const struct pw_metrics *, const struct pw_export_options *,
	    struct pw_error *);
int	pw_export_torch_offload(FILE *, const struct pw_problem *,
	    const struct pw_schedule *, const struct pw_timing *,
	    const struct pw_metrics *, const struct pw_export_options *,
	    struct pw_error *);

/* One timeline row: a device's compute ops or a channel's transfers. */
struct pw_view_row {
	char	label[32];	/* "dev 3", "link0.d2h" */
	int	device;		/* the device of a compute row, else -1 */
	int	channel;	/* the channel of a transfer row, else -1 */
	const struct pw_seq *seq;	/* borrowed from the schedule */
};

/* Returns the rows to draw (every device, then each channel that carries
 * a transfer) in an array the caller frees; *N is its length. */
struct pw_view_row *pw_view_rows(const struct pw_problem *,
	    const struct pw_schedule *, int *n);
/* Writes into BUF (returned) the devices CHANNEL serves and its way:
 * "d0-1->host", "host->d2", "d4,d6<->host" (half duplex), "+" ending a
 * list cut short. */
char	*pw_view_link_devices(const struct pw_problem *, int channel,
	    char *buf, size_t len);
/* Returns [nstages] chunk numbers (how many earlier stages share the
 * stage's device) in an array the caller frees. */
int	*pw_view_chunks(const struct pw_problem *);
/* Writes OP's name, "F s2.c1 mb5" (kind, stage and its chunk from
 * CHUNKS, microbatch), into BUF of LEN bytes (48 always hold it) and
 * returns BUF: the name every view gives an op. */
char	*pw_view_op_label(char *buf, size_t len, struct pw_op op,
	    const int *chunks);
/* True when any device holds more than one stage. */
bool	pw_view_interleaved(const int *chunks, int nstages);
/* Returns "name (family)", or whichever of the two is known, followed by
 * ", TIMELINE" when that is not NULL (a measured timing), in a string the
 * caller frees. */
char	*pw_view_title(const struct pw_problem *, const struct pw_schedule *,
	    const char *timeline);
/* OPTIONS, or the defaults for NULL. */
const struct pw_export_options *pw_export_options_or_default(
	    const struct pw_export_options *);
/* Start and end of OP; false when the timing lacks it. */
bool	pw_view_times(const struct pw_problem *, const struct pw_timing *,
	    struct pw_op, double *start, double *end);
/* Where time T falls on a chart of SPAN seconds from T0, as a fraction
 * in [0, 1] (0 for a chart of no span).  Never NaN, whatever finite times
 * it is given: spans of a denormal, times near DBL_MAX. */
double	pw_view_at(double t0, double span, double t);
/* A chart's time axis: from T0, where the schedule starts (0 when that
 * is not finite), over SPAN, its makespan, which pw_view_at and
 * pw_view_ticks take as no span when it is 0 or not finite. */
struct pw_view {
	double	t0;
	double	span;
};
struct pw_view pw_view_of(const struct pw_metrics *);
/* Tick K of V's axis, whose ticks are STEP apart (from pw_view_ticks):
 * returns its place as pw_view_at gives it; *T is its time from t0. */
double	pw_view_tick(const struct pw_view *v, double step, int k, double *t);
/* The ticks of an axis of SPAN seconds: returns how many (1 to
 * MAXTICKS + 1) at multiples of *STEP from 0, *STEP a round step (1, 2 or
 * 5 times a power of ten) where one exists, else SPAN itself. */
int	pw_view_ticks(double span, int maxticks, double *step);

#endif /* PW_EXPORT_H */
