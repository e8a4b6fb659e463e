/*
 * pool.c - one block of memory allocated up front, handed out in pieces.
 *
 * The CUDA backend allocates a GPU's memory (and pinned host memory) once
 * and takes the tensors' pieces from it here: cudaMalloc and cudaHostAlloc
 * are slow, and cudaFree waits for the whole device, which an op's free
 * in the middle of a pipeline must not do.
 *
 * The range may be a GPU's, so the pool never reads or writes the bytes
 * it manages: it keeps their addresses only, in two arrays sorted by
 * address, the free extents (never two adjacent: a give merges them) and
 * the pieces handed out (so that a give needs no size).  Both are
 * searched by bisection; inserting and removing move the tail.  A take
 * is first fit from the low end, a walk over the free extents.
 *
 * Every piece's address and length are multiples of the alignment: the
 * usable range starts at BASE rounded up and ends rounded down, and each
 * take is rounded up, so every free extent stays aligned too.
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_int.h"

/* [at, at + len): free, or a piece handed out. */
struct pw_pool_extent {
	uintptr_t at;
	size_t	len;
};

/* A sorted array of extents. */
struct pw_pool_list {
	struct pw_pool_extent *v;
	size_t	n;
	size_t	cap;
};

struct pw_rt_pool {
	pthread_mutex_t lock;
	uintptr_t start;	/* BASE rounded up to align */
	size_t	size;		/* from start, a multiple of align */
	size_t	align;
	struct pw_pool_list free;
	struct pw_pool_list live;
	size_t	used;
	size_t	peak;
};

/* The index of the first extent of L at or above AT (L->n when none). */
static size_t
pw_pool_search(const struct pw_pool_list *l, uintptr_t at)
{
	size_t lo = 0, hi = l->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (l->v[mid].at < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Inserts [AT, AT + LEN) into L at index I (where the search put it). */
static void
pw_pool_insert(struct pw_pool_list *l, size_t i, uintptr_t at, size_t len)
{
	if (l->n == l->cap) {
		l->cap = l->cap == 0 ? 16 : l->cap * 2;
		l->v = pw_xreallocarray(l->v, l->cap, sizeof *l->v);
	}
	memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof *l->v);
	l->v[i].at = at;
	l->v[i].len = len;
	l->n++;
}

static void
pw_pool_remove(struct pw_pool_list *l, size_t i)
{
	memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
	l->n--;
}

struct pw_rt_pool *
pw_rt_pool_new(void *base, size_t bytes, size_t align)
{
	struct pw_rt_pool *p;
	uintptr_t b = (uintptr_t)base;
	size_t off;

	assert(align != 0 && (align & (align - 1)) == 0);
	/* NULL is what a failed take returns, so no piece may be at 0; and
	 * the range must not wrap, so that no end computed below does. */
	assert(base != NULL);
	assert(bytes <= UINTPTR_MAX - b);

	p = pw_xcalloc(1, sizeof *p);
	pthread_mutex_init(&p->lock, NULL);
	p->align = align;
	/* The distance from BASE up to the next multiple of ALIGN, computed
	 * without BASE + ALIGN - 1, which could wrap. */
	off = (size_t)(-b & (align - 1));
	p->start = b + (off < bytes ? off : 0);
	p->size = off < bytes ? (bytes - off) & ~(align - 1) : 0;
	if (p->size > 0)
		pw_pool_insert(&p->free, 0, p->start, p->size);
	return p;
}

void
pw_rt_pool_free(struct pw_rt_pool *p)
{
	if (p == NULL)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p->free.v);
	free(p->live.v);
	free(p);
}

void *
pw_rt_pool_take(struct pw_rt_pool *p, size_t bytes, size_t *largest)
{
	struct pw_pool_extent *e;
	size_t i, need, most;
	uintptr_t at;

	if (bytes == 0)
		bytes = 1;
	pthread_mutex_lock(&p->lock);
	/* SIZE is a multiple of ALIGN no larger than SIZE_MAX, so rounding
	 * BYTES up cannot wrap once BYTES <= SIZE; anything larger cannot
	 * fit anyway. */
	if (bytes <= p->size) {
		need = (bytes + p->align - 1) & ~(p->align - 1);
		for (i = 0; i < p->free.n; i++) {
			e = &p->free.v[i];
			if (e->len < need)
				continue;
			at = e->at;
			e->at += need;
			e->len -= need;
			if (e->len == 0)
				pw_pool_remove(&p->free, i);
			pw_pool_insert(&p->live, pw_pool_search(&p->live, at),
			    at, need);
			p->used += need;
			if (p->used > p->peak)
				p->peak = p->used;
			pthread_mutex_unlock(&p->lock);
			return (void *)at;
		}
	}
	if (largest != NULL) {
		for (most = 0, i = 0; i < p->free.n; i++)
			if (p->free.v[i].len > most)
				most = p->free.v[i].len;
		*largest = most;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void
pw_rt_pool_give(struct pw_rt_pool *p, void *piece)
{
	struct pw_pool_extent *l, *r;
	uintptr_t at = (uintptr_t)piece;
	size_t i, len;
	bool left, right;

	if (piece == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	i = pw_pool_search(&p->live, at);
	if (i == p->live.n || p->live.v[i].at != at) {
		/* Not a piece of this pool, or given back twice. */
		assert(!"pw_rt_pool_give: not a piece handed out");
		pthread_mutex_unlock(&p->lock);
		return;
	}
	len = p->live.v[i].len;
	pw_pool_remove(&p->live, i);
	p->used -= len;

	/* The free extents either side of the piece: merge with those that
	 * touch it, so that the free list never holds two adjacent ones. */
	i = pw_pool_search(&p->free, at);
	l = i > 0 ? &p->free.v[i - 1] : NULL;
	r = i < p->free.n ? &p->free.v[i] : NULL;
	assert(l == NULL || l->at + l->len <= at);
	assert(r == NULL || at + len <= r->at);
	left = l != NULL && l->at + l->len == at;
	right = r != NULL && at + len == r->at;
	if (left && right) {
		l->len += len + r->len;
		pw_pool_remove(&p->free, i);
	} else if (left)
		l->len += len;
	else if (right) {
		r->at = at;
		r->len += len;
	} else
		pw_pool_insert(&p->free, i, at, len);
	pthread_mutex_unlock(&p->lock);
}

/* *FIELD of P, read under its lock (the workers change it). */
static size_t
pw_pool_read(const struct pw_rt_pool *p, const size_t *field)
{
	struct pw_rt_pool *m = (struct pw_rt_pool *)p;
	size_t v;

	pthread_mutex_lock(&m->lock);
	v = *field;
	pthread_mutex_unlock(&m->lock);
	return v;
}

size_t
pw_rt_pool_used(const struct pw_rt_pool *p)
{
	return pw_pool_read(p, &p->used);
}

size_t
pw_rt_pool_peak(const struct pw_rt_pool *p)
{
	return pw_pool_read(p, &p->peak);
}

/* Fixed when the pool is made: no lock. */
size_t
pw_rt_pool_size(const struct pw_rt_pool *p)
{
	return p->size;
}
