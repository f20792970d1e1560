/* efab_probe --diff's reader: a --json output (or any JSON of that shape) or
 * a --csv long-format file into a side (probe_diff.h), told apart by the
 * content; a bad input is one line naming the file, the line and what is
 * wrong. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rows.h"
#include "probe_diff.h"

#define DIFF_MAX_BYTES (64u << 20)
#define DIFF_MAX_COLS 4096
#define DIFF_MAX_PROPS 1024

typedef struct dbuf {
	char *s;
	size_t n, cap;
} dbuf_t;

static int dbuf_add(dbuf_t *b, const char *p, size_t k)
{
	if (b->n + k + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 32;
		while (cap < b->n + k + 1)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s)
			return -1;
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->n, p, k);
	b->n += k;
	b->s[b->n] = '\0';
	return 0;
}

/* Hands the string over (never NULL on success: "" for an empty buffer). */
static char *dbuf_take(dbuf_t *b)
{
	char *s = b->s ? b->s : strdup("");
	b->s = NULL;
	b->n = b->cap = 0;
	return s;
}

static int diff_fail(dside_t *s, long line, const char *fmt, ...) EFAB_PRINTF(3, 4);
static int diff_fail(dside_t *s, long line, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(s->err, sizeof(s->err), "%s:%ld: %s", s->path, line, what);
	else
		snprintf(s->err, sizeof(s->err), "%s: %s", s->path, what);
	return -1;
}

void probe_dside_free(dside_t *s)
{
	for (size_t i = 0; i < s->n; i++) {
		for (size_t k = 0; k < s->c[i].n; k++) {
			free(s->c[i].p[k].name);
			free(s->c[i].p[k].value);
		}
		free(s->c[i].p);
		for (int k = 0; k < 3; k++)
			free(s->c[i].key[k]);
	}
	free(s->c);
	s->c = NULL;
	s->n = s->cap = 0;
}

static dcol_t *col_new(dside_t *s)
{
	if (s->n >= DIFF_MAX_COLS) {
		diff_fail(s, 0, "more than %d columns: not an efab_probe output", DIFF_MAX_COLS);
		return NULL;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		dcol_t *c = realloc(s->c, cap * sizeof(*c));
		if (!c) {
			diff_fail(s, 0, "out of memory");
			return NULL;
		}
		s->c = c;
		s->cap = cap;
	}
	dcol_t *c = &s->c[s->n++];
	memset(c, 0, sizeof(*c));
	c->peer = -1;
	return c;
}

const char *dcol_get(const dcol_t *c, const char *name)
{
	for (size_t k = 0; k < c->n; k++)
		if (!strcmp(c->p[k].name, name))
			return c->p[k].value;
	return NULL;
}

/* Takes name and value (freed on failure). 1: the property is there already
 * (the caller says where), -1: other failure (s->err set). */
static int col_put(dside_t *s, dcol_t *c, char *name, char *value)
{
	int rc = 0;
	if (dcol_get(c, name)) {
		rc = 1;
	} else if (c->n >= DIFF_MAX_PROPS) {
		rc = diff_fail(s, 0,
			       "a column with more than %d properties: not an efab_probe output",
			       DIFF_MAX_PROPS);
	} else if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		dprop_t *p = realloc(c->p, cap * sizeof(*p));
		if (!p) {
			rc = diff_fail(s, 0, "out of memory");
		} else {
			c->p = p;
			c->cap = cap;
		}
	}
	if (rc) {
		free(name);
		free(value);
		return rc;
	}
	c->p[c->n].name = name;
	c->p[c->n].value = value;
	c->n++;
	return 0;
}

char *dcol_key(const dcol_t *c)
{
	static char buf[2][600];
	static int k;
	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s/%s", c->key[0], c->key[1], c->key[2]);
	return buf[k];
}

/* -- JSON (what probe_print_json writes, or any JSON of that shape) -- */

typedef struct jcur {
	const char *s, *end;
	long line; /* raw newlines only occur between tokens */
	dside_t *side;
} jcur_t;

static int jpeek(jcur_t *j)
{
	while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n' || *j->s == '\r'))
		j->line += *j->s++ == '\n';
	return j->s < j->end ? (unsigned char)*j->s : -1;
}

static int jfail(jcur_t *j, const char *what)
{
	if (jpeek(j) < 0)
		return diff_fail(j->side, j->line,
				 "not valid JSON: the file ends early (truncated?)");
	return diff_fail(j->side, j->line, "not valid JSON: %s", what);
}

static int jexpect(jcur_t *j, char ch, const char *what)
{
	if (jpeek(j) != ch)
		return jfail(j, what);
	j->s++;
	return 0;
}

/* After a member or an element: 0 past a ',' (another follows), 1 past
 * close (the object or array ends), -1 with what as the error otherwise. */
static int jnext(jcur_t *j, int close, const char *what)
{
	int ch = jpeek(j);
	if (ch != ',' && ch != close)
		return jfail(j, what);
	j->s++;
	return ch == close;
}

static int hex4(const char *p, unsigned *out)
{
	*out = 0;
	for (int k = 0; k < 4; k++) {
		int c = (unsigned char)p[k], d = isdigit(c) ? c - '0'
						 : (c | 32) >= 'a' && (c | 32) <= 'f'
							 ? (c | 32) - 'a' + 10
							 : -1;
		if (d < 0)
			return -1;
		*out = *out * 16 + (unsigned)d;
	}
	return 0;
}

/* Code point u as UTF-8 into enc (4 bytes of room); returns its length. */
static size_t utf8_encode(unsigned u, char *enc)
{
	if (u < 0x80) {
		enc[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		enc[0] = (char)(0xc0 | u >> 6);
		enc[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	if (u < 0x10000) {
		enc[0] = (char)(0xe0 | u >> 12);
		enc[1] = (char)(0x80 | (u >> 6 & 0x3f));
		enc[2] = (char)(0x80 | (u & 0x3f));
		return 3;
	}
	enc[0] = (char)(0xf0 | u >> 18);
	enc[1] = (char)(0x80 | (u >> 12 & 0x3f));
	enc[2] = (char)(0x80 | (u >> 6 & 0x3f));
	enc[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

/* The code point of a \u escape (j->s past the 'u'), a surrogate pair
 * joined; NULL, or what is wrong with it. */
static const char *junicode(jcur_t *j, unsigned *u)
{
	unsigned lo;
	if (j->end - j->s < 4 || hex4(j->s, u))
		return "bad \\u escape";
	j->s += 4;
	if (*u >= 0xd800 && *u < 0xdc00) {
		if (j->end - j->s < 6 || j->s[0] != '\\' || j->s[1] != 'u' || hex4(j->s + 2, &lo) ||
		    lo < 0xdc00 || lo > 0xdfff)
			return "unpaired surrogate in a \\u escape";
		j->s += 6;
		*u = 0x10000 + ((*u - 0xd800) << 10) + (lo - 0xdc00);
	} else if (*u >= 0xdc00 && *u < 0xe000) {
		return "unpaired surrogate in a \\u escape";
	} else if (*u == 0) {
		return "\\u0000 inside a string";
	}
	return NULL;
}

/* The escape after a backslash (j->s at its letter), decoded into enc and
 * its length into *k; NULL, or what is wrong with it. */
static const char *jescape(jcur_t *j, char *enc, size_t *k)
{
	static const char letters[] = "\"\\/bfnrt", chars[] = "\"\\/\b\f\n\r\t";
	if (j->s >= j->end)
		return "unterminated string";
	char e = *j->s++;
	const char *hit = e ? strchr(letters, e) : NULL;
	if (hit) {
		enc[0] = chars[hit - letters];
		*k = 1;
		return NULL;
	}
	if (e != 'u')
		return "unknown escape in a string";
	unsigned u;
	const char *bad = junicode(j, &u);
	if (!bad)
		*k = utf8_encode(u, enc);
	return bad;
}

/* A string, decoded to UTF-8 into *out (malloc'd) unless out is NULL. */
static int jstring(jcur_t *j, char **out)
{
	dbuf_t b = {0};
	const char *bad = NULL;
	if (jpeek(j) != '"')
		return jfail(j, "expected a string");
	j->s++;
	for (;;) {
		if (j->s >= j->end) {
			bad = "unterminated string";
			break;
		}
		unsigned char ch = (unsigned char)*j->s++;
		char enc[4];
		size_t k = 0;
		if (ch == '"')
			break;
		if (ch < 0x20) {
			bad = "control character inside a string";
			break;
		}
		if (ch != '\\')
			enc[k++] = (char)ch;
		else if ((bad = jescape(j, enc, &k)))
			break;
		if (out && dbuf_add(&b, enc, k)) {
			free(b.s);
			return diff_fail(j->side, 0, "out of memory");
		}
	}
	if (bad) {
		free(b.s);
		return jfail(j, bad);
	}
	if (out && !(*out = dbuf_take(&b)))
		return diff_fail(j->side, 0, "out of memory");
	return 0;
}

/* An object key and its ':', the key into *out (malloc'd) unless out is NULL. */
static int jkey(jcur_t *j, char **out)
{
	if (jstring(j, out))
		return -1;
	if (jexpect(j, ':', "expected ':' after an object key")) {
		if (out) {
			free(*out);
			*out = NULL;
		}
		return -1;
	}
	return 0;
}

static int jnumber(jcur_t *j, char **out)
{
	const char *p = j->s;
	if (p < j->end && *p == '-')
		p++;
	if (p >= j->end || !isdigit((unsigned char)*p))
		return jfail(j, "bad number");
	while (p < j->end && (isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' ||
			      *p == '+' || *p == '-'))
		p++;
	if (out && !(*out = strndup(j->s, (size_t)(p - j->s))))
		return diff_fail(j->side, 0, "out of memory");
	j->s = p;
	return 0;
}

static int jskip(jcur_t *j, int depth)
{
	int ch = jpeek(j);
	if (depth > 64)
		return jfail(j, "nested too deeply");
	if (ch == '"')
		return jstring(j, NULL);
	if (ch == '{' || ch == '[') {
		int close = ch == '{' ? '}' : ']';
		j->s++;
		if (jpeek(j) == close) {
			j->s++;
			return 0;
		}
		int end = 0;
		while (!end) {
			if ((ch == '{' && jkey(j, NULL)) || jskip(j, depth + 1))
				return -1;
			end = jnext(j, close,
				    ch == '{' ? "expected ',' or '}' in an object"
					      : "expected ',' or ']' in an array");
		}
		return end < 0 ? -1 : 0;
	}
	if (ch == '-' || (ch >= '0' && ch <= '9'))
		return jnumber(j, NULL);
	static const char *const lit[] = {"true", "false", "null"};
	for (size_t k = 0; k < EFAB_ARRAY_SIZE(lit); k++) {
		size_t l = strlen(lit[k]);
		if ((size_t)(j->end - j->s) >= l && !memcmp(j->s, lit[k], l)) {
			j->s += l;
			return 0;
		}
	}
	return jfail(j, ch < 0 ? "unexpected end of file" : "expected a value");
}

static const char *const diff_keys[3] = {"provider", "fabric", "domain"};

/* One entry of "fabrics": an object of property -> string. */
static int json_fabric(jcur_t *j, size_t idx)
{
	long line = (jpeek(j), j->line);
	if (jpeek(j) != '{')
		return jpeek(j) < 0 ? jfail(j, "")
				    : diff_fail(j->side, line,
						"entry %zu of \"fabrics\" is not an object", idx);
	j->s++;
	dcol_t *c = col_new(j->side);
	if (!c)
		return -1;
	if (jpeek(j) == '}') {
		j->s++;
	} else {
		int end = 0;
		while (!end) {
			char *name = NULL, *value = NULL;
			if (jkey(j, &name))
				return -1;
			int ch = jpeek(j), rc;
			if (ch == '"')
				rc = jstring(j, &value);
			else if (ch == '-' || (ch >= '0' && ch <= '9'))
				rc = jnumber(j, &value);
			else if (ch < 0)
				rc = jfail(j, "");
			else
				rc = diff_fail(
					j->side, j->line,
					"entry %zu of \"fabrics\": the value of \"%s\" is not a string",
					idx, name);
			if (rc) {
				free(name);
				return -1;
			}
			char dup[64];
			snprintf(dup, sizeof(dup), "%s", name);
			rc = col_put(j->side, c, name, value);
			if (rc > 0)
				return diff_fail(j->side, j->line,
						 "entry %zu of \"fabrics\" has \"%s\" twice", idx,
						 dup);
			if (rc)
				return -1;
			end = jnext(j, '}', "expected ',' or '}' in an object");
		}
		if (end < 0)
			return -1;
	}
	for (int k = 0; k < 3; k++) {
		const char *v = dcol_get(c, diff_keys[k]);
		if (!v)
			return diff_fail(j->side, line, "entry %zu of \"fabrics\" has no \"%s\"",
					 idx, diff_keys[k]);
		if (!(c->key[k] = strdup(v)))
			return diff_fail(j->side, 0, "out of memory");
	}
	return 0;
}

/* The value of "fabrics": an array of json_fabric entries. */
static int json_fabrics(jcur_t *j)
{
	if (jpeek(j) != '[')
		return jpeek(j) < 0 ? jfail(j, "")
				    : diff_fail(j->side, j->line, "\"fabrics\" is not an array");
	j->s++;
	if (jpeek(j) == ']') {
		j->s++;
		return 0;
	}
	int end = 0;
	for (size_t idx = 1; !end; idx++) {
		if (json_fabric(j, idx))
			return -1;
		end = jnext(j, ']', "expected ',' or ']' in \"fabrics\"");
	}
	return end < 0 ? -1 : 0;
}

static int parse_json(dside_t *s, const char *buf, size_t len)
{
	jcur_t j = {buf, buf + len, 1, s};
	int have = 0;
	if (jexpect(&j, '{', "expected '{'"))
		return -1;
	if (jpeek(&j) == '}') {
		j.s++;
	} else {
		int end = 0;
		while (!end) {
			char *key = NULL;
			if (jkey(&j, &key))
				return -1;
			int fabrics = !strcmp(key, "fabrics");
			free(key);
			if (fabrics && have)
				return diff_fail(s, j.line, "\"fabrics\" appears twice");
			have |= fabrics;
			if (fabrics ? json_fabrics(&j) : jskip(&j, 0))
				return -1;
			end = jnext(&j, '}', "expected ',' or '}' in an object");
		}
		if (end < 0)
			return -1;
	}
	if (jpeek(&j) != -1)
		return jfail(&j, "text after the JSON object");
	if (!have)
		return diff_fail(s, 0,
				 "JSON without a \"fabrics\" array: not efab_probe --json output");
	return 0;
}

/* -- CSV long format (what probe_write_csv writes) -- */

static const char csv_header[] = "provider,fabric,domain,property,value";

/* Where the CSV reader stands: line counts raw newlines, quoted ones too. */
typedef struct ccur {
	const char *p, *end;
	long line;
	dside_t *side;
} ccur_t;

/* A quoted field (c->p at its opening quote; "" is one quote) into b. */
static int csv_quoted(ccur_t *c, long rline, dbuf_t *b)
{
	for (c->p++;; c->p++) {
		if (c->p >= c->end)
			return diff_fail(c->side, rline, "unterminated quoted field");
		if (*c->p == '"' && !(c->p + 1 < c->end && c->p[1] == '"'))
			break;
		c->p += *c->p == '"';
		c->line += *c->p == '\n';
		if (dbuf_add(b, c->p, 1))
			return diff_fail(c->side, 0, "out of memory");
	}
	if (++c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
		return diff_fail(c->side, c->line, "text after the closing quote of a field");
	return 0;
}

/* One field, quoted or not, into *out (malloc'd). */
static int csv_field(ccur_t *c, long rline, char **out)
{
	dbuf_t b = {0};
	int rc = 0;
	if (c->p < c->end && *c->p == '"') {
		rc = csv_quoted(c, rline, &b);
	} else {
		const char *q = c->p;
		while (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
			c->p++;
		if (dbuf_add(&b, q, (size_t)(c->p - q)))
			rc = diff_fail(c->side, 0, "out of memory");
	}
	*out = rc ? NULL : dbuf_take(&b);
	free(b.s);
	if (!rc && !*out)
		rc = diff_fail(c->side, 0, "out of memory");
	return rc;
}

/* One record and its line end: the first five fields into f (the caller
 * frees them), how many there were into *nf. */
static int csv_record(ccur_t *c, long rline, char *f[5], int *nf)
{
	for (;;) {
		char *field;
		if (csv_field(c, rline, &field))
			return -1;
		if (*nf < 5)
			f[*nf] = field;
		else
			free(field);
		(*nf)++;
		if (c->p >= c->end || *c->p != ',')
			break;
		c->p++;
	}
	c->p += c->p < c->end && *c->p == '\r';
	if (c->p < c->end && *c->p == '\n') {
		c->p++;
		c->line++;
	}
	return 0;
}

static int same_column(const dcol_t *c, char *const f[3])
{
	return !strcmp(c->key[0], f[0]) && !strcmp(c->key[1], f[1]) && !strcmp(c->key[2], f[2]);
}

/* The column of provider/fabric/domain f[0..2]: the previous record's (rows
 * come grouped), an earlier one, or a new one that takes over the keys. */
static dcol_t *csv_column(dside_t *s, char *f[5], long last)
{
	if (last >= 0 && same_column(&s->c[last], f))
		return &s->c[last];
	for (size_t i = 0; i < s->n; i++)
		if (same_column(&s->c[i], f))
			return &s->c[i];
	dcol_t *c = col_new(s);
	for (int k = 0; c && k < 3; k++) {
		c->key[k] = f[k];
		f[k] = NULL;
	}
	return c;
}

/* A record's property into its column (f[3], f[4] taken over). */
static int csv_put(dside_t *s, char *f[5], long rline, long *last)
{
	dcol_t *c = csv_column(s, f, *last);
	if (!c)
		return -1;
	*last = c - s->c;
	char dup[64];
	snprintf(dup, sizeof(dup), "%s", f[3]);
	int rc = col_put(s, c, f[3], f[4]);
	f[3] = f[4] = NULL;
	if (rc > 0)
		rc = diff_fail(s, rline, "property '%s' of %s appears twice", dup, dcol_key(c));
	return rc;
}

static int parse_csv(dside_t *s, const char *buf, size_t len)
{
	ccur_t c = {buf, buf + len, 2, s};
	size_t hl = strlen(csv_header);
	long last = -1;
	if (len < hl || memcmp(buf, csv_header, hl) ||
	    (len > hl && buf[hl] != '\n' && buf[hl] != '\r'))
		return diff_fail(s, 1, "expected the header '%s'", csv_header);
	c.p += hl;
	c.p += c.p < c.end && *c.p == '\r';
	c.p += c.p < c.end && *c.p == '\n';
	while (c.p < c.end) {
		long rline = c.line;
		char *f[5] = {0};
		int nf = 0;
		if (*c.p == '\n' || *c.p == '\r') { /* a blank line */
			c.line += *c.p++ == '\n';
			continue;
		}
		int rc = csv_record(&c, rline, f, &nf);
		if (!rc && nf != 5)
			rc = diff_fail(s, rline, "%d fields, expected 5 (%s)", nf, csv_header);
		if (!rc)
			rc = csv_put(s, f, rline, &last);
		for (int k = 0; k < 5; k++)
			free(f[k]);
		if (rc)
			return -1;
	}
	return 0;
}

int probe_diff_load(dside_t *s)
{
	FILE *f = fopen(s->path, "rb");
	if (!f)
		return diff_fail(s, 0, "cannot open: %s", strerror(errno));
	dbuf_t b = {0};
	char chunk[65536];
	size_t k;
	int rc = 0;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b.n + k > DIFF_MAX_BYTES) {
			rc = diff_fail(s, 0, "larger than %u MiB: not an efab_probe output",
				       DIFF_MAX_BYTES >> 20);
			break;
		}
		if (dbuf_add(&b, chunk, k)) {
			rc = diff_fail(s, 0, "out of memory");
			break;
		}
	}
	if (!rc && ferror(f))
		rc = diff_fail(s, 0, "cannot read: %s", strerror(errno));
	fclose(f);
	const char *p = b.s ? b.s : "", *end = p + b.n;
	if (!rc && memchr(p, '\0', b.n))
		rc = diff_fail(s, 0,
			       "contains NUL bytes: not an efab_probe output (JSON or CSV text)");
	if (!rc) {
		if (end - p >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark */
			p += 3;
		const char *q = p;
		while (q < end && isspace((unsigned char)*q))
			q++;
		if (q == end) {
			rc = diff_fail(
				s, 0, "empty: expected efab_probe --json output or its --csv file");
		} else if (*q == '{') {
			s->format = "JSON";
			rc = parse_json(s, p, (size_t)(end - p));
		} else if (!strncmp(p, csv_header, 9)) { /* "provider," */
			s->format = "CSV";
			rc = parse_csv(s, p, (size_t)(end - p));
		} else if (!strncmp(q, "provider ", 9)) {
			rc = diff_fail(s, 0,
				       "efab_probe's table, not its --json output or --csv file");
		} else {
			char head[41];
			size_t n = 0;
			for (; q < end && *q != '\n' && n < sizeof(head) - 1; q++)
				head[n++] = isprint((unsigned char)*q) ? *q : '?';
			head[n] = '\0';
			rc = diff_fail(s, 0,
				       "neither efab_probe --json output nor its --csv long format "
				       "(it begins '%s')",
				       head);
		}
	}
	free(b.s);
	for (size_t i = 0; !rc && i < s->n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->c[i].key[0], s->c[j].key[0]) &&
			    !strcmp(s->c[i].key[1], s->c[j].key[1]) &&
			    !strcmp(s->c[i].key[2], s->c[j].key[2])) {
				rc = diff_fail(
					s, 0, "column %s appears twice (%s entries %zu and %zu)",
					dcol_key(&s->c[i]),
					s->format[0] == 'J' ? "fabrics" : "column", j + 1, i + 1);
				break;
			}
	return rc;
}
