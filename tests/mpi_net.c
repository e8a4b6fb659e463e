/*
 * mpi_net.c - drives the MPI transport (runtime/mpi.c) under mpirun for
 * tests/test_mpi.sh, before and beside the engine's own use of it.
 *
 *   mpi_net built          exit 0 when the program is built with MPI, else 1
 *   mpi_net start          pw_rt_mpi_start alone (its error without a launcher)
 *   mpi_net handoffs       every rank hands the next one tensors and
 *                          tokens under several tags, all sent before any
 *                          is received and received in the other order;
 *                          then bcast, gather and barrier; exact values
 *   mpi_net stop RANK      RANK fails and stops the net while every other
 *                          rank waits for a tensor that never comes
 *   mpi_net forever DIR    hands tensors round the ring until stopped,
 *                          each rank's pid in DIR/pid.RANK
 *
 * Rank 0 prints one line when every check held; a rank whose check
 * fails prints "rank R: what" on stderr.  Exit status: 0, 1 for a failed
 * check, 2 for a start or a transport error, 4 (PW_EXIT_RUNTIME) after a
 * stop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_int.h"

/* Floats in the hand-offs: one below Open MPI's eager limit, one well
 * above it (its rendezvous), and a token. */
#define MN_SMALL	100
#define MN_LARGE	100000

static const struct mn_msg {
	uint64_t tag;
	size_t	n;
} mn_msgs[] = {
	{ 1, MN_SMALL },
	{ 7, MN_LARGE },
	/* 48 bits, as pw_rt_tag packs kind, stage and microbatch: folded */
	{ (uint64_t)3 << 44 | (uint64_t)5 << 24 | 9, MN_SMALL },
	{ (uint64_t)2 << 44 | (uint64_t)5 << 24 | 9, 0 },
};
#define MN_NMSGS	(sizeof mn_msgs / sizeof mn_msgs[0])

static float
mn_value(int rank, size_t msg, size_t i)
{
	return (float)(rank * 1000000 + (int)msg * 100000 + (int)i);
}

static int
mn_fail(int rank, const char *what, const struct pw_error *err)
{
	fprintf(stderr, "rank %d: %s%s%s\n", rank, what, err ? ": " : "",
	    err ? err->msg : "");
	return 1;
}

static int
mn_handoffs(struct pw_rt_net *net, struct pw_error *err)
{
	int	r = net->rank, next = (r + 1) % net->size;
	int	prev = (r + net->size - 1) % net->size;
	float	*buf = pw_xmalloc(MN_LARGE * sizeof *buf);
	char	*text = r == 0 ? pw_xstrdup("the schedule") : NULL, **all = NULL;
	size_t	len = r == 0 ? strlen(text) + 1 : 0, *lens = NULL, k, i;
	char	mine[32];
	int	rc = 0;

	for (k = 0; k < MN_NMSGS && rc == 0; k++) {
		for (i = 0; i < mn_msgs[k].n; i++)
			buf[i] = mn_value(r, k, i);
		if (net->send(net, r, next, mn_msgs[k].tag, buf, mn_msgs[k].n,
		    err) != PW_OK)
			rc = mn_fail(r, "send", err);
	}
	for (k = MN_NMSGS; k-- > 0 && rc == 0; ) {
		memset(buf, 0, MN_LARGE * sizeof *buf);
		if (net->recv(net, prev, r, mn_msgs[k].tag, buf, mn_msgs[k].n,
		    err) != PW_OK) {
			rc = mn_fail(r, "recv", err);
			break;
		}
		for (i = 0; i < mn_msgs[k].n; i++)
			if (buf[i] != mn_value(prev, k, i)) {
				fprintf(stderr, "rank %d: tag %#llx float %zu is %g, "
				    "not %g\n", r, (unsigned long long)mn_msgs[k].tag,
				    i, buf[i], mn_value(prev, k, i));
				rc = 1;
				break;
			}
	}
	/* The wrong ends: this rank cannot send as another device. */
	if (rc == 0 && (net->send(net, next, r, 1, buf, 1, err) != PW_ERR_INTERNAL ||
	    strstr(err->msg, "rank d runs device d") == NULL))
		rc = mn_fail(r, "a send from another device was not refused", NULL);
	if (rc == 0 && net->bcast(net, &text, &len, err) != PW_OK)
		rc = mn_fail(r, "bcast", err);
	if (rc == 0 && (len != strlen("the schedule") + 1 ||
	    strcmp(text, "the schedule") != 0))
		rc = mn_fail(r, "bcast delivered other bytes", NULL);
	snprintf(mine, sizeof mine, "rank %d", r);
	if (rc == 0 && net->gather(net, mine, strlen(mine), &all, &lens, err) !=
	    PW_OK)
		rc = mn_fail(r, "gather", err);
	if (rc == 0 && r == 0)
		for (i = 0; i < (size_t)net->size; i++) {
			snprintf(mine, sizeof mine, "rank %zu", i);
			if (lens[i] != strlen(mine) || strcmp(all[i], mine) != 0)
				rc = mn_fail(r, "gather delivered other bytes", NULL);
		}
	if (rc == 0 && net->barrier(net, err) != PW_OK)
		rc = mn_fail(r, "barrier", err);
	if (rc == 0 && r == 0)
		printf("handoffs ok on %d ranks\n", net->size);
	for (i = 0; all != NULL && i < (size_t)net->size; i++)
		free(all[i]);
	free(all);
	free(lens);
	free(text);
	free(buf);
	return rc;
}

/*
 * FAILING stops the net; every other rank waits for a tensor from the
 * rank before it that is never sent, and must see PW_ERR_CANCELLED.
 * Then, as the engine does, the ranks gather what each saw and rank 0
 * alone prints it: one line, the failing rank's.
 */
static int
mn_stop(struct pw_rt_net *net, int failing, struct pw_error *err)
{
	int	r = net->rank, prev = (r + net->size - 1) % net->size, i;
	char	saw[128] = "", **all = NULL;
	size_t	*lens = NULL;
	float	x;

	if (r == failing) {
		net->stop(net);
		snprintf(saw, sizeof saw, "rank %d: injected failure", r);
	} else if (net->recv(net, prev, r, 1, &x, 1, err) != PW_ERR_CANCELLED)
		snprintf(saw, sizeof saw, "rank %d: a recv outlived the stop", r);
	if (net->gather(net, saw, strlen(saw), &all, &lens, err) != PW_OK)
		return mn_fail(r, "gather after the stop", err);
	for (i = 0; all != NULL && i < net->size; i++) {
		if (lens[i] > 0)
			fprintf(stderr, "mpi_net: %s\n", all[i]);
		free(all[i]);
	}
	free(all);
	free(lens);
	return PW_EXIT_RUNTIME;
}

/* Round the ring until a transport error; writes this rank's pid first. */
static int
mn_forever(struct pw_rt_net *net, const char *dir, struct pw_error *err)
{
	int	r = net->rank, next = (r + 1) % net->size;
	int	prev = (r + net->size - 1) % net->size;
	float	buf[MN_SMALL] = { 0 };
	char	*path = pw_xasprintf("%s/pid.%d", dir, r);
	FILE	*f = fopen(path, "w");
	uint64_t i;

	free(path);
	if (f == NULL)
		return mn_fail(r, "cannot write its pid", NULL);
	fprintf(f, "%ld\n", (long)getpid());
	fclose(f);
	for (i = 0;; i++)
		if (net->send(net, r, next, i, buf, MN_SMALL, err) != PW_OK ||
		    net->recv(net, prev, r, i, buf, MN_SMALL, err) != PW_OK)
			return mn_fail(r, "ring", err) + 1;
}

int
main(int argc, char **argv)
{
	struct pw_error err = { { 0 } };
	struct pw_rt_net *net = NULL;
	int	rank, size, rc;

	if (argc < 2 || (strcmp(argv[1], "built") != 0 &&
	    strcmp(argv[1], "start") != 0 &&
	    strcmp(argv[1], "handoffs") != 0 && argc < 3)) {
		fprintf(stderr, "usage: mpi_net built|start|handoffs|stop RANK|"
		    "forever DIR\n");
		return 2;
	}
	if (strcmp(argv[1], "built") == 0)
		return pw_rt_mpi_built() ? 0 : 1;
	if (pw_rt_mpi_start(&rank, &size, &err) != PW_OK) {
		fprintf(stderr, "mpi_net: %s\n", err.msg);
		return 2;
	}
	if (strcmp(argv[1], "start") == 0) {
		pw_rt_mpi_stop();
		return 0;
	}
	if (pw_rt_net_mpi(&net, &err) != PW_OK) {
		fprintf(stderr, "mpi_net: %s\n", err.msg);
		pw_rt_mpi_stop();
		return 2;
	}
	if (strcmp(argv[1], "handoffs") == 0)
		rc = mn_handoffs(net, &err);
	else if (strcmp(argv[1], "stop") == 0)
		rc = mn_stop(net, atoi(argv[2]), &err);
	else
		rc = mn_forever(net, argv[2], &err);
	net->close(net);
	pw_rt_mpi_stop();
	return rc;
}
