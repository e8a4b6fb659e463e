/* csv.c - the reference tables' reader for the tests (csv.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "pipewright.h"
#include "tap.h"

/* Splits LINE in place at commas; returns the number of fields, or -1
 * when there are more than TEST_CSV_MAXCOLS. */
static int
test_split(char *line, char **field)
{
	int n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	for (;;) {
		if (n == TEST_CSV_MAXCOLS)
			return -1;
		field[n++] = line;
		if ((line = strchr(line, ',')) == NULL)
			return n;
		*line++ = '\0';
	}
}

/* Reads the next line that is not a comment or blank into csv->line;
 * false at the end of the file. */
static bool
test_csv_line(struct test_csv *csv)
{
	while (fgets(csv->line, sizeof csv->line, csv->fp) != NULL) {
		csv->lineno++;
		if (csv->line[0] != '#' && csv->line[strspn(csv->line,
		    " \r\n")] != '\0')
			return true;
	}
	return false;
}

bool
test_csv_next(struct test_csv *csv)
{
	while (test_csv_line(csv)) {
		if (test_split(csv->line, csv->field) == csv->ncols)
			return true;
		tap_ok(false, "%s:%d: %d fields expected", csv->path,
		    csv->lineno, csv->ncols);
	}
	return false;
}

bool
test_csv_open(struct test_csv *csv, const char *name)
{
	const char *dir = getenv("TESTDATA");

	memset(csv, 0, sizeof *csv);
	csv->path = pw_xasprintf("%s/%s", dir != NULL ? dir : "tests/data",
	    name);
	/* Only failures print: the benchmark reads the tables too. */
	if ((csv->fp = fopen(csv->path, "r")) == NULL)
		return tap_ok(false, "%s opens", csv->path);
	if (!test_csv_line(csv))
		return tap_ok(false, "%s has a header", csv->path);
	memcpy(csv->head, csv->line, sizeof csv->head);
	csv->ncols = test_split(csv->head, csv->name);
	if (csv->ncols <= 0)
		return tap_ok(false, "%s: header has at most %d columns",
		    csv->path, TEST_CSV_MAXCOLS);
	return true;
}

const char *
test_csv_text(const struct test_csv *csv, const char *col)
{
	int i;

	for (i = 0; i < csv->ncols; i++)
		if (strcmp(csv->name[i], col) == 0)
			return csv->field[i];
	tap_ok(false, "%s has a column %s", csv->path, col);
	return "";
}

double
test_csv_num(const struct test_csv *csv, const char *col)
{
	const char *text = test_csv_text(csv, col);
	char *end;
	double x;

	x = strtod(text, &end);
	if (end == text || *end != '\0') {
		tap_ok(false, "%s:%d: %s: not a number: \"%s\"", csv->path,
		    csv->lineno, col, text);
		return NAN;
	}
	return x;
}

void
test_csv_close(struct test_csv *csv)
{
	if (csv->fp != NULL)
		fclose(csv->fp);
	csv->fp = NULL;
	free(csv->path);
	csv->path = NULL;
}

void
test_zb_case_read(const struct test_csv *csv, struct test_zb_case *c)
{
	double h = test_csv_num(csv, "h"), a = test_csv_num(csv, "a");
	double s = test_csv_num(csv, "s");

	c->name = test_csv_text(csv, "case");
	c->p = (int)test_csv_num(csv, "p");
	c->m = (int)test_csv_num(csv, "m");
	c->v = c->p > 0 ? (int)test_csv_num(csv, "layers") / c->p : 0;
	c->f = test_csv_num(csv, "t_f") * 1e-6;
	c->b = test_csv_num(csv, "t_b") * 1e-6;
	c->w = test_csv_num(csv, "t_w") * 1e-6;
	c->comm = test_csv_num(csv, "t_comm") * 1e-6;
	c->act = 34 * h + 5 * a * s;
	c->hold = 32 * h;
}
