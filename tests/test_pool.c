/*
 * The pool (runtime/pool.c): the CUDA backend's sub-allocator, checked on
 * fake addresses, since it never touches the bytes it manages: the
 * alignment of the first and later pieces on a misaligned base, the
 * exhaustion and the largest free extent it reports, merging on give,
 * the used and peak counts, a 0-byte take, requests too large to round
 * up; a randomized run against a model of first fit; and, on a real
 * buffer, several threads taking and giving at once.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"
#include "tap.h"

#define TP_ADDR(x)	((void *)(uintptr_t)(x))
#define TP_LL(p)	((long long)(uintptr_t)(p))

/* Rounds N up to ALIGN (a power of two). */
static size_t
tp_round(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* The first piece at BASE rounded up, later ones at the previous end
 * rounded up; 0 bytes count as 1; the end is rounded down. */
static void
tp_align(void)
{
	struct pw_rt_pool *p;
	void *a, *b, *c, *z;
	size_t largest = 7;

	/* 0x10001 up to 256: 0x10100; 0x10000 - 0xff bytes left, down to
	 * 256: 0xff00. */
	p = pw_rt_pool_new(TP_ADDR(0x10001), 0x10000, 256);
	tap_int(pw_rt_pool_size(p), 0xff00,
	    "size: from the base rounded up to the end rounded down");
	a = pw_rt_pool_take(p, 1, NULL);
	tap_int(TP_LL(a), 0x10100, "the first piece: the base rounded up");
	b = pw_rt_pool_take(p, 300, NULL);
	tap_int(TP_LL(b), 0x10200, "1 byte holds 256: the next at 0x10200");
	c = pw_rt_pool_take(p, 256, NULL);
	tap_int(TP_LL(c), 0x10400, "300 bytes hold 512: the next at 0x10400");
	z = pw_rt_pool_take(p, 0, NULL);
	tap_int(TP_LL(z), 0x10500, "a 0-byte take: a piece of its own");
	tap_ok(z != NULL && z != c, "a 0-byte take is not NULL nor shared");
	tap_int(pw_rt_pool_used(p), 256 + 512 + 256 + 256,
	    "used: the aligned sizes (0 bytes hold 256)");
	pw_rt_pool_give(p, b);
	tap_int(pw_rt_pool_used(p), 256 + 256 + 256, "used after one give");
	tap_int(pw_rt_pool_peak(p), 1280, "peak: the most used so far");
	b = pw_rt_pool_take(p, 512, NULL);
	tap_int(TP_LL(b), 0x10200, "512 bytes fit where 300 were");
	pw_rt_pool_give(p, a);
	pw_rt_pool_give(p, b);
	pw_rt_pool_give(p, c);
	pw_rt_pool_give(p, z);
	pw_rt_pool_give(p, NULL);
	tap_int(pw_rt_pool_used(p), 0, "used 0 once all is given back");
	tap_int(pw_rt_pool_peak(p), 1280, "peak kept");
	pw_rt_pool_free(p);

	/* 0x10001 + 0x1000 ends at 0x11001: the pool ends at 0x11000. */
	p = pw_rt_pool_new(TP_ADDR(0x10001), 0x1000, 64);
	tap_int(pw_rt_pool_size(p), 0x11000 - 0x10040,
	    "64-aligned: 0x10040 to 0x11000");
	a = pw_rt_pool_take(p, 0x11000 - 0x10040, NULL);
	tap_int(TP_LL(a), 0x10040, "a take of the whole size");
	pw_rt_pool_free(p);

	/* Fewer bytes than the way to the first aligned address. */
	p = pw_rt_pool_new(TP_ADDR(0x10001), 100, 256);
	tap_int(pw_rt_pool_size(p), 0, "a pool shorter than its alignment: 0");
	a = pw_rt_pool_take(p, 0, &largest);
	tap_ok(a == NULL && largest == 0,
	    "its takes fail with largest 0 (%zu)", largest);
	pw_rt_pool_free(p);
}

/* NULL when no extent holds a take, with the largest free extent; first
 * fit from the low end. */
static void
tp_exhaust(void)
{
	struct pw_rt_pool *p = pw_rt_pool_new(TP_ADDR(0x100000), 4096, 64);
	void *v[4], *x;
	size_t largest;
	int i, ok;

	for (ok = 1, i = 0; i < 4; i++) {
		v[i] = pw_rt_pool_take(p, 1000, NULL);
		ok &= TP_LL(v[i]) == 0x100000 + 1024 * i;
	}
	tap_ok(ok, "four 1000-byte takes: 1024 apart from the start");
	tap_int(pw_rt_pool_used(p), 4096, "used: all of it");
	largest = 99;
	x = pw_rt_pool_take(p, 1, &largest);
	tap_ok(x == NULL && largest == 0, "full: NULL, largest 0 (%zu)",
	    largest);
	pw_rt_pool_give(p, v[0]);
	pw_rt_pool_give(p, v[2]);
	largest = 0;
	x = pw_rt_pool_take(p, 1025, &largest);
	tap_ok(x == NULL && largest == 1024,
	    "two 1024-byte holes, 1025 asked: NULL, largest 1024 (%zu)",
	    largest);
	pw_rt_pool_give(p, v[3]);
	x = pw_rt_pool_take(p, 2049, &largest);
	tap_ok(x == NULL && largest == 2048,
	    "the last two merged, 2049 asked: NULL, largest 2048 (%zu)",
	    largest);
	x = pw_rt_pool_take(p, 1500, NULL);
	tap_int(TP_LL(x), 0x100800, "1500 bytes: the first extent that holds "
	    "them, past the lower one");
	v[2] = pw_rt_pool_take(p, 1, NULL);
	tap_int(TP_LL(v[2]), 0x100000, "1 byte: the lowest extent");
	tap_int(pw_rt_pool_used(p), 1024 + 1536 + 64, "used exact");
	tap_int(pw_rt_pool_peak(p), 4096, "peak: 4096");
	pw_rt_pool_free(p);
}

/* A give merges with its free neighbours: after freeing the middle of
 * three, one extent again. */
static void
tp_merge(void)
{
	struct pw_rt_pool *p = pw_rt_pool_new(TP_ADDR(0x2000), 3 * 512, 256);
	void *a, *b, *c, *x;
	size_t largest = 0;

	a = pw_rt_pool_take(p, 512, NULL);
	b = pw_rt_pool_take(p, 512, NULL);
	c = pw_rt_pool_take(p, 512, NULL);
	tap_ok(a != NULL && b != NULL && c != NULL, "three pieces fill it");
	pw_rt_pool_give(p, a);
	pw_rt_pool_give(p, c);
	x = pw_rt_pool_take(p, 1024, &largest);
	tap_ok(x == NULL && largest == 512,
	    "the outer two given: 1024 does not fit, largest 512 (%zu)",
	    largest);
	pw_rt_pool_give(p, b);
	x = pw_rt_pool_take(p, 3 * 512, NULL);
	tap_int(TP_LL(x), 0x2000,
	    "the middle given: one extent, a take of the whole size");
	pw_rt_pool_give(p, x);

	/* Merging with the right neighbour, then the left. */
	a = pw_rt_pool_take(p, 512, NULL);
	b = pw_rt_pool_take(p, 512, NULL);
	c = pw_rt_pool_take(p, 512, NULL);
	pw_rt_pool_give(p, b);
	pw_rt_pool_give(p, a);
	x = pw_rt_pool_take(p, 1024, NULL);
	tap_int(TP_LL(x), 0x2000, "the first given after the second: merged");
	pw_rt_pool_give(p, c);
	pw_rt_pool_give(p, x);
	x = pw_rt_pool_take(p, 3 * 512, NULL);
	tap_int(TP_LL(x), 0x2000, "the last given after the rest: merged");
	pw_rt_pool_free(p);
}

/* Requests whose rounding up would wrap: NULL, not a wrapped small
 * piece. */
static void
tp_huge(void)
{
	struct pw_rt_pool *p = pw_rt_pool_new(TP_ADDR(0x4000), 8192, 4096);
	void *x;
	size_t largest = 0, size;

	x = pw_rt_pool_take(p, SIZE_MAX, &largest);
	tap_ok(x == NULL && largest == 8192,
	    "SIZE_MAX: NULL, largest 8192 (%zu)", largest);
	x = pw_rt_pool_take(p, SIZE_MAX - 4094, NULL);
	tap_ok(x == NULL, "SIZE_MAX - 4094 (wraps to 0 rounded up): NULL");
	x = pw_rt_pool_take(p, 8193, NULL);
	tap_ok(x == NULL, "one byte more than the pool: NULL");
	tap_int(pw_rt_pool_used(p), 0, "nothing taken");
	pw_rt_pool_free(p);

	/* A pool reaching to the top of the address space (fake): sizes
	 * near SIZE_MAX round up without wrapping. */
	p = pw_rt_pool_new(TP_ADDR(0x1001), SIZE_MAX - 0x1001, 4096);
	size = pw_rt_pool_size(p);
	tap_ok(size == ((SIZE_MAX - 0x1001 - 0xfff) & ~(size_t)4095),
	    "a pool up to the top: its size rounded down");
	x = pw_rt_pool_take(p, SIZE_MAX - 10, &largest);
	tap_ok(x == NULL && largest == size,
	    "SIZE_MAX - 10 from it: NULL, largest its size");
	x = pw_rt_pool_take(p, size - 1, NULL);
	tap_int(TP_LL(x), 0x2000, "its size less 1: rounded up, the whole");
	tap_ok(pw_rt_pool_used(p) == size, "used: its size");
	pw_rt_pool_free(p);
}

/* ------------------------------------------------------------------ */
/* The randomized run: each take and give also applied to a model (the  */
/* pool's live pieces sorted by address), whose gaps say where first   */
/* fit puts a take, or the largest free extent when none holds it.     */

#define TP_OPS		20000
#define TP_BASE		0x70000003u
#define TP_BYTES	((1u << 20) + 12345)
#define TP_ALIGN	128

struct tp_piece {
	uintptr_t at;
	size_t	len;		/* aligned */
};

struct tp_model {
	struct tp_piece *v;
	size_t	n;
	size_t	cap;
	uintptr_t start;
	size_t	size;
	size_t	used;
	size_t	peak;
};

/* Where first fit puts NEED bytes in M (0 when nowhere), and the largest
 * gap in *LARGEST. */
static uintptr_t
tp_model_fit(const struct tp_model *m, size_t need, size_t *largest)
{
	uintptr_t at = m->start, fit = 0, end;
	size_t i, gap;

	*largest = 0;
	for (i = 0; i <= m->n; i++) {
		end = i < m->n ? m->v[i].at : m->start + m->size;
		gap = end - at;
		if (gap >= need && fit == 0)
			fit = at;
		if (gap > *largest)
			*largest = gap;
		if (i < m->n)
			at = m->v[i].at + m->v[i].len;
	}
	return fit;
}

/* Whether M's pieces lie inside the pool, aligned, none overlapping the
 * next, and their lengths sum to M->used. */
static bool
tp_model_sane(const struct tp_model *m)
{
	size_t i, sum = 0;

	for (i = 0; i < m->n; i++) {
		if (m->v[i].at % TP_ALIGN != 0 || m->v[i].at < m->start ||
		    m->v[i].at > m->start + m->size ||
		    m->v[i].len > m->start + m->size - m->v[i].at)
			return false;
		if (i + 1 < m->n && m->v[i].at + m->v[i].len > m->v[i + 1].at)
			return false;
		sum += m->v[i].len;
	}
	return sum == m->used;
}

/* A request size: mostly small, some large, a few of 0 bytes. */
static size_t
tp_size(uint64_t *rng)
{
	uint64_t r = pw_splitmix64(rng);

	switch (r % 10) {
	case 0:
		return 0;
	case 7:
	case 8:
		return (size_t)(r >> 8) % 32768 + 1;
	case 9:
		return (size_t)(r >> 8) % 300000 + 1;
	default:
		return (size_t)(r >> 8) % 2048 + 1;
	}
}

static void
tp_random(void)
{
	struct pw_rt_pool *p = pw_rt_pool_new(TP_ADDR(TP_BASE), TP_BYTES,
	    TP_ALIGN);
	struct tp_model m;
	uint64_t rng = 20240601;
	size_t bad_fit = 0, bad_largest = 0, bad_sane = 0, bad_used = 0;
	size_t takes = 0, fails = 0, gives = 0, most = 0;
	size_t i, k, bytes, need, want_largest, largest;
	uintptr_t want, got;
	void *x;
	int op;

	memset(&m, 0, sizeof m);
	m.start = tp_round(TP_BASE, TP_ALIGN);
	m.size = (TP_BASE + TP_BYTES - m.start) & ~(size_t)(TP_ALIGN - 1);
	m.cap = m.size / TP_ALIGN;
	m.v = pw_xcalloc(m.cap, sizeof *m.v);
	tap_int(pw_rt_pool_size(p), m.size, "random: the pool's size");
	for (op = 0; op < TP_OPS; op++) {
		if (m.n == 0 || pw_splitmix64(&rng) % 100 < 55) {
			bytes = tp_size(&rng);
			need = tp_round(bytes == 0 ? 1 : bytes, TP_ALIGN);
			want = tp_model_fit(&m, need, &want_largest);
			largest = (size_t)-1;
			x = pw_rt_pool_take(p, bytes, &largest);
			got = (uintptr_t)x;
			takes++;
			if (got != want)
				bad_fit++;
			if (x == NULL) {
				fails++;
				if (largest != want_largest)
					bad_largest++;
			}
			/* The model holds what the pool handed out, where
			 * first fit put it or not: tp_model_sane checks the
			 * pool's pieces themselves. */
			if (x != NULL && m.n < m.cap) {
				for (k = 0; k < m.n && m.v[k].at < got; k++)
					;
				memmove(&m.v[k + 1], &m.v[k],
				    (m.n - k) * sizeof *m.v);
				m.v[k].at = got;
				m.v[k].len = need;
				m.n++;
				m.used += need;
				if (m.used > m.peak)
					m.peak = m.used;
			} else if (x != NULL)
				bad_sane++;	/* more pieces than fit */
		} else {
			k = (size_t)(pw_splitmix64(&rng) % m.n);
			pw_rt_pool_give(p, TP_ADDR(m.v[k].at));
			m.used -= m.v[k].len;
			memmove(&m.v[k], &m.v[k + 1],
			    (m.n - k - 1) * sizeof *m.v);
			m.n--;
			gives++;
		}
		if (!tp_model_sane(&m))
			bad_sane++;
		if (pw_rt_pool_used(p) != m.used ||
		    pw_rt_pool_peak(p) != m.peak)
			bad_used++;
		if (m.n > most)
			most = m.n;
	}
	tap_diag("%d ops: %zu takes (%zu refused), %zu gives, at most %zu "
	    "pieces live", TP_OPS, takes, fails, gives, most);
	tap_ok(fails > 100 && takes - fails > 1000,
	    "the run both filled the pool and took from it");
	tap_int(bad_fit, 0, "every take where first fit puts it (or NULL)");
	tap_int(bad_largest, 0, "every refusal reports the largest extent");
	tap_int(bad_sane, 0, "pieces inside, aligned, disjoint; used their sum");
	tap_int(bad_used, 0, "used and peak equal the model's after each op");

	/* Everything back, in the order the model keeps (by address) from
	 * both ends, so that gives merge left, right and both ways. */
	for (i = 0; i < m.n; i++)
		pw_rt_pool_give(p, TP_ADDR(m.v[i % 2 == 0 ? i / 2 :
		    m.n - 1 - i / 2].at));
	tap_int(pw_rt_pool_used(p), 0, "all given back: used 0");
	x = pw_rt_pool_take(p, m.size, NULL);
	tap_int(TP_LL(x), (long long)m.start,
	    "then one take of the whole aligned size");
	free(m.v);
	pw_rt_pool_free(p);
}

/* ------------------------------------------------------------------ */
/* Threads: each takes and gives on a real buffer, fills its pieces     */
/* with its own byte and finds them intact when it gives them back.     */

#define TP_THREADS	4
#define TP_ROUNDS	5000
#define TP_RING		4	/* pieces a thread holds at once */
#define TP_MAX		1024	/* bytes a piece asks at most */
#define TP_POOL		(1u << 20)

struct tp_worker {
	pthread_t thread;
	struct pw_rt_pool *pool;
	uintptr_t start;
	size_t	size;
	int	id;
	long	bad;		/* takes refused, misplaced or overwritten */
};

static void *
tp_work(void *arg)
{
	struct tp_worker *w = arg;
	unsigned char *piece[TP_RING] = { NULL }, *q;
	size_t len[TP_RING] = { 0 }, j;
	uint64_t rng = 77 + (uint64_t)w->id;
	unsigned char mark = (unsigned char)(0xa0 + w->id);
	int r, s;

	for (r = 0; r < TP_ROUNDS + TP_RING; r++) {
		s = r % TP_RING;
		if ((q = piece[s]) != NULL) {
			for (j = 0; j < len[s]; j++)
				if (q[j] != mark) {
					w->bad++;
					break;
				}
			pw_rt_pool_give(w->pool, q);
			piece[s] = NULL;
		}
		if (r >= TP_ROUNDS)
			continue;
		len[s] = (size_t)(pw_splitmix64(&rng) % TP_MAX) + 1;
		q = pw_rt_pool_take(w->pool, len[s], NULL);
		if (q == NULL || (uintptr_t)q % 64 != 0 ||
		    (uintptr_t)q < w->start ||
		    (uintptr_t)q + len[s] > w->start + w->size) {
			w->bad++;
			continue;
		}
		memset(q, mark, len[s]);
		piece[s] = q;
	}
	return NULL;
}

static void
tp_threads(void)
{
	/* At most TP_THREADS * TP_RING = 16 pieces of TP_MAX bytes are live
	 * at once: the free extents (17 at most) then hold all but 16 KiB
	 * of a MiB, so one of them holds TP_MAX and no take can fail,
	 * whatever the interleaving. */
	unsigned char *buf = pw_xmalloc(TP_POOL + 1);
	struct tp_worker w[TP_THREADS];
	struct pw_rt_pool *p;
	long bad = 0;
	uintptr_t start;
	size_t size;
	int i, started = 0;
	void *x;

	p = pw_rt_pool_new(buf + 1, TP_POOL, 64);
	start = tp_round((uintptr_t)(buf + 1), 64);
	size = pw_rt_pool_size(p);
	for (i = 0; i < TP_THREADS; i++) {
		w[i].pool = p;
		w[i].start = start;
		w[i].size = size;
		w[i].id = i;
		w[i].bad = 0;
		if (pthread_create(&w[i].thread, NULL, tp_work, &w[i]) == 0)
			started++;
		else
			break;
	}
	for (i = 0; i < started; i++) {
		pthread_join(w[i].thread, NULL);
		bad += w[i].bad;
	}
	tap_int(started, TP_THREADS, "threads: %d started", TP_THREADS);
	tap_int(bad, 0, "threads: every take placed, no piece overwritten");
	tap_int(pw_rt_pool_used(p), 0, "threads: used 0 at the end");
	tap_ok(pw_rt_pool_peak(p) > 0 && pw_rt_pool_peak(p) <=
	    TP_THREADS * TP_RING * TP_MAX, "threads: peak within 16 pieces");
	x = pw_rt_pool_take(p, size, NULL);
	tap_ok((uintptr_t)x == start,
	    "threads: then one take of the whole size");
	pw_rt_pool_free(p);
	free(buf);
}

int
main(void)
{
	tp_align();
	tp_exhaust();
	tp_merge();
	tp_huge();
	tp_random();
	tp_threads();
	return tap_done();
}
