/*
 * csv.h - reading the reference tables in tests/data: a header line of
 * column names, then comma-separated values; lines starting with '#' and
 * blank lines are skipped.  Failures print as failed test lines.
 */
#ifndef PW_TEST_CSV_H
#define PW_TEST_CSV_H

#include <stdbool.h>
#include <stdio.h>

#define TEST_CSV_MAXCOLS	32
#define TEST_CSV_MAXLINE	1024

struct test_csv {
	FILE	*fp;
	char	*path;		/* owned; freed by test_csv_close */
	char	head[TEST_CSV_MAXLINE];
	char	*name[TEST_CSV_MAXCOLS];
	int	ncols;
	char	line[TEST_CSV_MAXLINE];
	char	*field[TEST_CSV_MAXCOLS];
	int	lineno;
};

/* Opens the table NAME in $TESTDATA (tests/data when unset) and reads its
 * header; false after a failed test line.  Call test_csv_close either
 * way. */
bool	test_csv_open(struct test_csv *, const char *name);
/* Reads and splits the next data line; false at the end of the file. */
bool	test_csv_next(struct test_csv *);
/* The text of column COL in the current line; "" (and a failed test line)
 * when there is no such column. */
const char *test_csv_text(const struct test_csv *, const char *col);
/* Column COL as a number; NAN (and a failed test line) when it is not. */
double	test_csv_num(const struct test_csv *, const char *col);
void	test_csv_close(struct test_csv *);

/* One setting of the Zero Bubble tables (zb_table5.csv, zbv_table8.csv)
 * for what the table's times are for (a stage; a ZB-V chunk): times in
 * seconds (the tables give microseconds), memory in the tables' units:
 * F allocates act = 34h + 5as, W frees hold = 32h. */
struct test_zb_case {
	const char *name;	/* points into the CSV's current line */
	int	p, m;
	int	v;		/* layers per device */
	double	f, b, w, comm;
	double	act, hold;
};

/* Reads the setting of the current line (failed test lines for missing
 * or malformed columns). */
void	test_zb_case_read(const struct test_csv *, struct test_zb_case *);

#endif
