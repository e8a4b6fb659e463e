/*
 * pattern.c - Lua patterns (the Lua 5.4 reference manual, section 6.4.1)
 * for scripts: string.find, string.match, string.gmatch and string.gsub.
 * Lua's own matcher backtracks inside C with no limit, where no hook can
 * stop it; this one charges every step to a meter (the run's instruction
 * budget and deadline) and raises "pattern too complex" when it is spent.
 */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include <lualib.h>

#include "pwlua_int.h"

#define PAT_MAXCAP	32	/* captures, as Lua allows */
#define PAT_DEPTH	200	/* nested matching calls */
#define PAT_BATCH	1024	/* steps charged to the meter at once */
#define PAT_SPECIALS	"^$*+?.([%-"

enum {
	PAT_OPEN = -1,		/* a capture not closed yet */
	PAT_POSITION = -2,	/* a () capture */
};

struct pat_state {
	lua_State *L;
	struct pwl_meter *meter;
	const char *s, *s_end;	/* the subject */
	const char *p_end;	/* the pattern's end */
	int	depth;
	int	ncap;
	struct {
		const char *at;
		ptrdiff_t len;	/* or PAT_OPEN, PAT_POSITION */
	} cap[PAT_MAXCAP];
};

static const char *pat_do(struct pat_state *, const char *s, const char *p);

/* Counts N steps, charging the meter a batch at a time (what is left
 * over waits for the next call); raises when it has nothing left. */
static void
pat_step(struct pat_state *ms, unsigned long n)
{
	struct pwl_meter *m = ms->meter;
	const char *why;

	m->pending += n;
	if (m->pending < PAT_BATCH)
		return;
	n = m->pending;
	m->pending = 0;
	if ((why = m->charge(m, ms->L, n)) != NULL)
		luaL_error(ms->L, "pattern too complex (%s)", why);
}

static void
pat_start(struct pat_state *ms, lua_State *L, const char *s, size_t ls,
    const char *p, size_t lp)
{
	ms->L = L;
	ms->meter = lua_touserdata(L, lua_upvalueindex(1));
	ms->s = s;
	ms->s_end = s + ls;
	ms->p_end = p + lp;
}

/* Forgets the captures and depth of the last attempt. */
static void
pat_reset(struct pat_state *ms)
{
	ms->ncap = 0;
	ms->depth = 0;
}

/* Whether C is in the class %CL (a letter), or is CL itself. */
static bool
pat_class(int c, int cl)
{
	bool in;

	switch (tolower(cl)) {
	case 'a': in = isalpha(c); break;
	case 'c': in = iscntrl(c); break;
	case 'd': in = isdigit(c); break;
	case 'g': in = isgraph(c); break;
	case 'l': in = islower(c); break;
	case 'p': in = ispunct(c); break;
	case 's': in = isspace(c); break;
	case 'u': in = isupper(c); break;
	case 'w': in = isalnum(c); break;
	case 'x': in = isxdigit(c); break;
	case 'z': in = c == '\0'; break;	/* not in the manual since 5.2,
						 * still in Lua 5.4 */
	default: return cl == c;
	}
	return isupper(cl) ? !in : in;
}

/* The end of the single-character class at P ("x", "%x" or "[...]"). */
static const char *
pat_class_end(struct pat_state *ms, const char *p)
{
	const char *start = p;

	if (*p == '%') {
		if (p + 1 >= ms->p_end)
			luaL_error(ms->L, "malformed pattern (ends with '%%')");
		return p + 2;
	}
	if (*p != '[')
		return p + 1;
	p++;
	if (p < ms->p_end && *p == '^')
		p++;
	/* A ']' right after "[" or "[^" is a member, not the end. */
	do {
		if (p >= ms->p_end)
			luaL_error(ms->L, "malformed pattern (missing ']')");
		if (*p == '%')
			p++;
		p++;
	} while (p >= ms->p_end || *p != ']');
	/* Scanned again at every step that uses it. */
	pat_step(ms, (unsigned long)(p - start));
	return p + 1;
}

/* Whether C is in the set from P ('[') to END (its ']'), charged by
 * the set's length. */
static bool
pat_set(struct pat_state *ms, int c, const char *p, const char *end)
{
	bool negate = false;

	pat_step(ms, (unsigned long)(end - p));
	p++;
	if (*p == '^') {
		negate = true;
		p++;
	}
	for (; p < end; p++) {
		if (*p == '%' && p + 1 < end) {
			p++;
			if (pat_class(c, (unsigned char)*p))
				return !negate;
		} else if (p + 2 < end && p[1] == '-') {
			if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2])
				return !negate;
			p += 2;
		} else if ((unsigned char)*p == c)
			return !negate;
	}
	return negate;
}

/* Whether the character at S (if any) matches the class from P to EP. */
static bool
pat_single(struct pat_state *ms, const char *s, const char *p,
    const char *ep)
{
	int c;

	if (s >= ms->s_end)
		return false;
	c = (unsigned char)*s;
	switch (*p) {
	case '.':
		return true;
	case '%':
		return pat_class(c, (unsigned char)p[1]);
	case '[':
		return pat_set(ms, c, p, ep - 1);
	default:
		return (unsigned char)*p == c;
	}
}

/* %bxy at P: a balanced run from S, or NULL. */
static const char *
pat_balance(struct pat_state *ms, const char *s, const char *p)
{
	int open, close, level = 1;

	if (p + 3 >= ms->p_end)
		luaL_error(ms->L, "malformed pattern (missing arguments to "
		    "'%%b')");
	open = (unsigned char)p[2];
	close = (unsigned char)p[3];
	if (s >= ms->s_end || (unsigned char)*s != open)
		return NULL;
	for (s++; s < ms->s_end; s++) {
		pat_step(ms, 1);
		if ((unsigned char)*s == close) {
			if (--level == 0)
				return s + 1;
		} else if ((unsigned char)*s == open)
			level++;
	}
	return NULL;
}

/* The longest run of the class P..EP from S, then shorter ones. */
static const char *
pat_greedy(struct pat_state *ms, const char *s, const char *p,
    const char *ep)
{
	const char *r;
	ptrdiff_t n = 0;

	/* Charged as it goes: the run may be the whole subject. */
	while (pat_single(ms, s + n, p, ep)) {
		pat_step(ms, 1);
		n++;
	}
	for (; n >= 0; n--)
		if ((r = pat_do(ms, s + n, ep + 1)) != NULL)
			return r;
	return NULL;
}

/* The shortest run of the class P..EP from S, then longer ones. */
static const char *
pat_lazy(struct pat_state *ms, const char *s, const char *p, const char *ep)
{
	const char *r;

	for (;;) {
		if ((r = pat_do(ms, s, ep + 1)) != NULL)
			return r;
		if (!pat_single(ms, s, p, ep))
			return NULL;
		s++;
	}
}

/* Opens capture (WHAT: PAT_OPEN or PAT_POSITION) at S, then matches P. */
static const char *
pat_open(struct pat_state *ms, const char *s, const char *p, ptrdiff_t what)
{
	const char *r;

	if (ms->ncap >= PAT_MAXCAP)
		luaL_error(ms->L, "too many captures");
	ms->cap[ms->ncap].at = s;
	ms->cap[ms->ncap].len = what;
	ms->ncap++;
	if ((r = pat_do(ms, s, p)) == NULL)
		ms->ncap--;
	return r;
}

/* Closes the innermost open capture at S, then matches P. */
static const char *
pat_close(struct pat_state *ms, const char *s, const char *p)
{
	const char *r;
	int i;

	for (i = ms->ncap - 1; i >= 0 && ms->cap[i].len != PAT_OPEN; i--)
		continue;
	if (i < 0)
		luaL_error(ms->L, "invalid pattern capture");
	ms->cap[i].len = s - ms->cap[i].at;
	if ((r = pat_do(ms, s, p)) == NULL)
		ms->cap[i].len = PAT_OPEN;
	return r;
}

/* The index of the closed capture %C (a digit), raising otherwise. */
static int
pat_capture_index(struct pat_state *ms, int c)
{
	int i = c - '1';

	if (i < 0 || i >= ms->ncap || ms->cap[i].len == PAT_OPEN)
		luaL_error(ms->L, "invalid capture index %%%d", i + 1);
	return i;
}

/* A back reference %N at S: the end of the repeat, or NULL. */
static const char *
pat_backref(struct pat_state *ms, const char *s, int c)
{
	int i = pat_capture_index(ms, c);
	size_t len;

	/* A position capture has no text: it matches nothing, as in Lua. */
	if (ms->cap[i].len == PAT_POSITION)
		return NULL;
	len = (size_t)ms->cap[i].len;
	pat_step(ms, len);
	if ((size_t)(ms->s_end - s) >= len &&
	    memcmp(ms->cap[i].at, s, len) == 0)
		return s + len;
	return NULL;
}

/*
 * Matches the pattern from P against the subject from S: the end of the
 * match, or NULL.  A single class followed by no quantifier goes round
 * the loop; everything that may backtrack recurses (at most PAT_DEPTH).
 */
static const char *
pat_do(struct pat_state *ms, const char *s, const char *p)
{
	const char *ep, *r = NULL;

	if (++ms->depth > PAT_DEPTH)
		luaL_error(ms->L, "pattern too complex");
	for (;;) {
		pat_step(ms, 1);
		if (p >= ms->p_end) {
			r = s;
			break;
		}
		if (*p == '(') {
			r = p + 1 < ms->p_end && p[1] == ')' ?
			    pat_open(ms, s, p + 2, PAT_POSITION) :
			    pat_open(ms, s, p + 1, PAT_OPEN);
			break;
		}
		if (*p == ')') {
			r = pat_close(ms, s, p + 1);
			break;
		}
		if (*p == '$' && p + 1 == ms->p_end) {
			r = s == ms->s_end ? s : NULL;
			break;
		}
		if (*p == '%' && p + 1 < ms->p_end && p[1] == 'b') {
			if ((s = pat_balance(ms, s, p)) == NULL)
				break;
			p += 4;
			continue;
		}
		if (*p == '%' && p + 1 < ms->p_end && p[1] == 'f') {
			p += 2;
			if (p >= ms->p_end || *p != '[')
				luaL_error(ms->L, "missing '[' after '%%f' in "
				    "pattern");
			ep = pat_class_end(ms, p);
			if (pat_set(ms, s == ms->s ? '\0' : (unsigned char)s[-1],
			    p, ep - 1) || !pat_set(ms, s < ms->s_end ?
			    (unsigned char)*s : '\0', p, ep - 1))
				break;
			p = ep;
			continue;
		}
		if (*p == '%' && p + 1 < ms->p_end && isdigit((unsigned char)p[1])) {
			if ((s = pat_backref(ms, s, (unsigned char)p[1])) == NULL)
				break;
			p += 2;
			continue;
		}
		ep = pat_class_end(ms, p);
		if (ep < ms->p_end && *ep == '?') {
			if (pat_single(ms, s, p, ep) &&
			    (r = pat_do(ms, s + 1, ep + 1)) != NULL)
				break;
			p = ep + 1;
			continue;
		}
		if (ep < ms->p_end && *ep == '+') {
			r = pat_single(ms, s, p, ep) ?
			    pat_greedy(ms, s + 1, p, ep) : NULL;
			break;
		}
		if (ep < ms->p_end && *ep == '*') {
			r = pat_greedy(ms, s, p, ep);
			break;
		}
		if (ep < ms->p_end && *ep == '-') {
			r = pat_lazy(ms, s, p, ep);
			break;
		}
		if (!pat_single(ms, s, p, ep))
			break;
		s++;
		p = ep;
	}
	ms->depth--;
	return r;
}

/* Pushes capture I of the match S..E (the whole match for capture 0 of
 * a pattern without captures). */
static void
pat_push_capture(struct pat_state *ms, int i, const char *s, const char *e)
{
	if (i >= ms->ncap) {
		if (i != 0)
			luaL_error(ms->L, "invalid capture index %%%d", i + 1);
		lua_pushlstring(ms->L, s, (size_t)(e - s));
	} else if (ms->cap[i].len == PAT_OPEN)
		luaL_error(ms->L, "unfinished capture");
	else if (ms->cap[i].len == PAT_POSITION)
		lua_pushinteger(ms->L, ms->cap[i].at - ms->s + 1);
	else
		lua_pushlstring(ms->L, ms->cap[i].at, (size_t)ms->cap[i].len);
}

/* Pushes every capture, or the whole match S..E when there are none (S
 * NULL: nothing then); returns how many. */
static int
pat_push_captures(struct pat_state *ms, const char *s, const char *e)
{
	int i, n = ms->ncap == 0 && s != NULL ? 1 : ms->ncap;

	luaL_checkstack(ms->L, n, "too many captures");
	for (i = 0; i < n; i++)
		pat_push_capture(ms, i, s, e);
	return n;
}

/* A string position from Lua's 1-based, possibly negative INIT, as a
 * 0-based offset into a string of LEN bytes (LEN + 1 past its end). */
static size_t
pat_offset(lua_Integer init, size_t len)
{
	if (init > 0)
		return (size_t)init - 1;
	if (init == 0 || (size_t)-(init + 1) >= len)
		return 0;
	return len - (size_t)-init;
}

/* Whether the pattern P is taken literally by string.find. */
static bool
pat_plain(struct pat_state *ms, const char *p, size_t lp)
{
	size_t i;

	pat_step(ms, lp);
	for (i = 0; i < lp; i++)
		if (p[i] != '\0' && strchr(PAT_SPECIALS, p[i]) != NULL)
			return false;
	return true;
}

/* The first P (LP bytes) in S (LS bytes), or NULL; charged as it
 * compares. */
static const char *
pat_search(struct pat_state *ms, const char *s, size_t ls, const char *p,
    size_t lp)
{
	const char *at, *end = s + ls;

	if (lp == 0)
		return s;
	while (lp <= (size_t)(end - s) &&
	    (at = memchr(s, *p, (size_t)(end - s) - lp + 1)) != NULL) {
		pat_step(ms, (unsigned long)(at - s) + lp);
		if (memcmp(at, p, lp) == 0)
			return at;
		s = at + 1;
	}
	/* The last scan, which found nothing. */
	pat_step(ms, (unsigned long)(end - s));
	return NULL;
}

/* string.find (FIND) and string.match. */
static int
pat_find(lua_State *L, bool find)
{
	struct pat_state ms;
	size_t ls, lp, init;
	const char *s = luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	const char *at, *e;
	size_t i;
	bool anchor;

	init = pat_offset(luaL_optinteger(L, 3, 1), ls);
	if (init > ls) {
		luaL_pushfail(L);
		return 1;
	}
	pat_start(&ms, L, s, ls, p, lp);
	if (find && (lua_toboolean(L, 4) || pat_plain(&ms, p, lp))) {
		if ((at = pat_search(&ms, s + init, ls - init, p, lp)) == NULL) {
			luaL_pushfail(L);
			return 1;
		}
		lua_pushinteger(L, at - s + 1);
		lua_pushinteger(L, (lua_Integer)(at - s) + (lua_Integer)lp);
		return 2;
	}
	anchor = lp > 0 && *p == '^';
	if (anchor) {
		p++;
		lp--;
	}
	for (i = init; i <= ls; i++) {
		at = s + i;
		pat_reset(&ms);
		if ((e = pat_do(&ms, at, p)) != NULL) {
			if (!find)
				return pat_push_captures(&ms, at, e);
			lua_pushinteger(L, at - s + 1);
			lua_pushinteger(L, e - s);
			return pat_push_captures(&ms, NULL, NULL) + 2;
		}
		if (anchor)
			break;
	}
	luaL_pushfail(L);
	return 1;
}

static int
pat_str_find(lua_State *L)
{
	return pat_find(L, true);
}

static int
pat_str_match(lua_State *L)
{
	return pat_find(L, false);
}

/* Where a gmatch iteration stands, as offsets into its subject. */
struct pat_iter {
	size_t	next;		/* where the next attempt starts */
	size_t	last;		/* the end of the last match; SIZE_MAX: none */
};

/* The iterator: upvalues are the meter, the subject, the pattern and
 * the struct pat_iter. */
static int
pat_gmatch_next(lua_State *L)
{
	struct pat_state ms;
	size_t ls, lp;
	const char *s = lua_tolstring(L, lua_upvalueindex(2), &ls);
	const char *p = lua_tolstring(L, lua_upvalueindex(3), &lp);
	struct pat_iter *it = lua_touserdata(L, lua_upvalueindex(4));
	const char *at, *e;
	size_t i;

	pat_start(&ms, L, s, ls, p, lp);
	for (i = it->next; i <= ls; i++) {
		at = s + i;
		pat_reset(&ms);
		e = pat_do(&ms, at, p);
		if (e != NULL && (size_t)(e - s) != it->last) {
			it->next = it->last = (size_t)(e - s);
			return pat_push_captures(&ms, at, e);
		}
	}
	it->next = ls + 1;
	return 0;
}

static int
pat_str_gmatch(lua_State *L)
{
	size_t ls, next;
	struct pat_iter *it;

	luaL_checklstring(L, 1, &ls);
	luaL_checkstring(L, 2);
	next = pat_offset(luaL_optinteger(L, 3, 1), ls);
	it = lua_newuserdatauv(L, sizeof *it, 0);
	it->next = next > ls ? ls + 1 : next;
	it->last = SIZE_MAX;
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 2);
	lua_pushvalue(L, -4);
	lua_pushcclosure(L, pat_gmatch_next, 4);
	return 1;
}

/* Adds the value at the top (made a string first when TEXT) to B,
 * charged by its length: gsub copies every byte of its result. */
static void
pat_add_top(struct pat_state *ms, luaL_Buffer *b, bool text)
{
	size_t len;

	if (text) {
		luaL_tolstring(ms->L, -1, &len);
		lua_remove(ms->L, -2);
	} else
		lua_tolstring(ms->L, -1, &len);
	pat_step(ms, len);
	luaL_addvalue(b);
}

/* Adds the replacement string at 3 for the match S..E to B. */
static void
pat_add_string(struct pat_state *ms, luaL_Buffer *b, const char *s,
    const char *e)
{
	size_t len, i;
	const char *r = lua_tolstring(ms->L, 3, &len);

	for (i = 0; i < len; i++) {
		pat_step(ms, 1);
		if (r[i] != '%') {
			luaL_addchar(b, r[i]);
			continue;
		}
		if (++i == len || (r[i] != '%' && !isdigit((unsigned char)r[i])))
			luaL_error(ms->L, "invalid use of '%%' in replacement "
			    "string");
		if (r[i] == '%') {
			luaL_addchar(b, '%');
			continue;
		}
		if (r[i] == '0')
			lua_pushlstring(ms->L, s, (size_t)(e - s));
		else
			pat_push_capture(ms, r[i] - '1', s, e);
		pat_add_top(ms, b, true);
	}
}

/* Adds gsub's replacement for the match S..E to B: the string, or what
 * the table or function at 3 gives (false or nil: the match itself). */
static void
pat_add_value(struct pat_state *ms, luaL_Buffer *b, const char *s,
    const char *e, int type)
{
	lua_State *L = ms->L;

	if (type == LUA_TSTRING || type == LUA_TNUMBER) {
		pat_add_string(ms, b, s, e);
		return;
	}
	if (type == LUA_TFUNCTION) {
		lua_pushvalue(L, 3);
		lua_call(L, pat_push_captures(ms, s, e), 1);
	} else {
		pat_push_capture(ms, 0, s, e);
		lua_gettable(L, 3);
	}
	if (!lua_toboolean(L, -1)) {
		lua_pop(L, 1);
		lua_pushlstring(L, s, (size_t)(e - s));
	} else if (!lua_isstring(L, -1))
		luaL_error(L, "invalid replacement value (a %s)",
		    luaL_typename(L, -1));
	pat_add_top(ms, b, false);
}

static int
pat_str_gsub(lua_State *L)
{
	struct pat_state ms;
	size_t ls, lp;
	const char *s = luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	const char *src = s, *last = NULL, *e;
	int type = lua_type(L, 3);
	lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1), n = 0;
	bool anchor = lp > 0 && *p == '^';
	luaL_Buffer b;

	luaL_argexpected(L, type == LUA_TNUMBER || type == LUA_TSTRING ||
	    type == LUA_TFUNCTION || type == LUA_TTABLE, 3,
	    "string/function/table");
	if (anchor) {
		p++;
		lp--;
	}
	pat_start(&ms, L, s, ls, p, lp);
	luaL_buffinit(L, &b);
	while (n < max) {
		pat_reset(&ms);
		if ((e = pat_do(&ms, src, p)) != NULL && e != last) {
			n++;
			pat_add_value(&ms, &b, src, e, type);
			src = last = e;
		} else if (src < ms.s_end) {
			pat_step(&ms, 1);
			luaL_addchar(&b, *src++);
		} else
			break;
		if (anchor)
			break;
	}
	pat_step(&ms, (unsigned long)(ms.s_end - src));
	luaL_addlstring(&b, src, (size_t)(ms.s_end - src));
	luaL_pushresult(&b);
	lua_pushinteger(L, n);
	return 2;
}

void
pwl_open_pattern(lua_State *L, struct pwl_meter *meter)
{
	static const luaL_Reg funcs[] = {
		{ "find", pat_str_find },
		{ "match", pat_str_match },
		{ "gmatch", pat_str_gmatch },
		{ "gsub", pat_str_gsub },
		{ NULL, NULL }
	};

	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_getfield(L, -1, LUA_STRLIBNAME);
	lua_pushlightuserdata(L, meter);
	luaL_setfuncs(L, funcs, 1);
	lua_pop(L, 2);
}
