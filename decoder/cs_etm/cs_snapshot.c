/*
 * cs_snapshot.c - reader for CoreSight trace snapshot folders (see
 * cs_snapshot.h). Each ini file is first read into sections of key=value
 * lines that remember their line numbers, so that every later complaint can
 * name the file and line; the snapshot, trace and device meanings are then
 * taken from those sections. Syntax follows the snapshot format's own rules:
 * ';' and '#' start a comment anywhere on a line, keys and values are
 * trimmed, sections this reader does not know are ignored.
 *
 * Workload: a few dozen small files per snapshot, read once; nothing here
 * is on a hot path, so clarity wins over speed.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "cs_snapshot.h"

/* ---- generic ini files ---- */

struct ini_kv {
	char *key;
	char *value;
	int line;
};

struct ini_section {
	char *name;
	int line;                /* line of the "[name]" header */
	struct ini_kv *kv;
	size_t nr_kv;
};

struct ini {
	char *path;
	struct ini_section *sec;
	size_t nr_sec;
};

/* The single exit for every failure, so one breakpoint catches them all. */
static int fail(struct rb_cs_error *err, int code, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(struct rb_cs_error *err, int code, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return code;
	err->code = code;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

static int nomem(struct rb_cs_error *err, const char *file)
{
	return fail(err, RB_CS_ERR_NOMEM, file, 0, "out of memory");
}

/* Trim blanks (and, if @quotes, one layer of quote characters) in place. */
static char *trim(char *s, int quotes)
{
	char *e;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
		*--e = '\0';
	if (quotes) {
		while (*s == '"' || *s == '\'')
			s++;
		e = s + strlen(s);
		while (e > s && (e[-1] == '"' || e[-1] == '\''))
			*--e = '\0';
	}
	return s;
}

static void ini_free(struct ini *ini)
{
	if (!ini)
		return;
	for (size_t i = 0; i < ini->nr_sec; i++) {
		for (size_t j = 0; j < ini->sec[i].nr_kv; j++) {
			free(ini->sec[i].kv[j].key);
			free(ini->sec[i].kv[j].value);
		}
		free(ini->sec[i].kv);
		free(ini->sec[i].name);
	}
	free(ini->sec);
	free(ini->path);
	memset(ini, 0, sizeof(*ini));
}

static int ini_add_section(struct ini *ini, const char *name, int line)
{
	struct ini_section *s = realloc(ini->sec, (ini->nr_sec + 1) * sizeof(*s));
	if (!s)
		return -1;
	ini->sec = s;
	s = &ini->sec[ini->nr_sec];
	memset(s, 0, sizeof(*s));
	s->line = line;
	if (!(s->name = strdup(name)))
		return -1;
	ini->nr_sec++;
	return 0;
}

static int ini_add_kv(struct ini_section *s, const char *key, const char *value, int line)
{
	struct ini_kv *kv = realloc(s->kv, (s->nr_kv + 1) * sizeof(*kv));
	if (!kv)
		return -1;
	s->kv = kv;
	kv = &s->kv[s->nr_kv];
	kv->line = line;
	kv->key = strdup(key);
	kv->value = strdup(value);
	if (!kv->key || !kv->value) {
		free(kv->key);
		free(kv->value);
		return -1;
	}
	s->nr_kv++;
	return 0;
}

/* One line, comments already cut: a header, a definition, or an error. */
static int ini_line(struct ini *ini, char *text, int line, struct rb_cs_error *err)
{
	char *open = strchr(text, '['), *close = open ? strchr(open + 1, ']') : NULL;
	char *eq;
	if (close) {
		*close = '\0';
		if (ini_add_section(ini, trim(open + 1, 0), line))
			return nomem(err, ini->path);
		return 0;
	}
	if (!(eq = strchr(text, '=')))
		return fail(err, RB_CS_ERR_FORMAT, ini->path, line,
			    "expected \"[section]\" or \"key=value\", found \"%.80s\"", text);
	if (!ini->nr_sec)
		return fail(err, RB_CS_ERR_FORMAT, ini->path, line, "definition before any [section]");
	*eq = '\0';
	if (!*trim(text, 0))
		return fail(err, RB_CS_ERR_FORMAT, ini->path, line, "empty key");
	if (ini_add_kv(&ini->sec[ini->nr_sec - 1], trim(text, 0), trim(eq + 1, 0), line))
		return nomem(err, ini->path);
	return 0;
}

/* Read @path into @ini (which the caller frees with ini_free, also on failure). */
static int ini_read(const char *path, struct ini *ini, struct rb_cs_error *err)
{
	FILE *f;
	char *buf = NULL;
	size_t cap = 0;
	int line = 0, rc = 0;

	memset(ini, 0, sizeof(*ini));
	if (!(ini->path = strdup(path)))
		return nomem(err, path);
	if (!(f = fopen(path, "r")))
		return errno == ENOMEM ? nomem(err, path) : fail(err, RB_CS_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
	for (;;) {
		errno = 0;
		if (rc || getline(&buf, &cap, f) < 0)
			break;
		line++;
		buf[strcspn(buf, "\r;#\n")] = '\0';
		if (*trim(buf, 0))
			rc = ini_line(ini, buf, line, err);
	}
	if (!rc && errno == ENOMEM)   /* getline could not grow its line: not the end of the file */
		rc = nomem(err, path);
	if (!rc && ferror(f))
		rc = fail(err, RB_CS_ERR_IO, path, line, "read error: %s", strerror(errno));
	free(buf);
	fclose(f);
	return rc;
}

static const struct ini_section *ini_section(const struct ini *ini, const char *name)
{
	for (size_t i = 0; i < ini->nr_sec; i++)
		if (!strcmp(ini->sec[i].name, name))
			return &ini->sec[i];
	return NULL;
}

static const struct ini_kv *ini_key(const struct ini_section *s, const char *key)
{
	for (size_t i = 0; s && i < s->nr_kv; i++)
		if (!strcmp(s->kv[i].key, key))
			return &s->kv[i];
	return NULL;
}

/* ---- helpers for the snapshot meaning ---- */

/* @dir/@file, or @file itself if it is absolute. NULL when out of memory. */
static char *join(const char *dir, const char *file)
{
	size_t n, dl = strlen(dir);
	char *p;
	if (file[0] == '/')
		return strdup(file);
	n = dl + strlen(file) + 2;
	if (!(p = malloc(n)))
		return NULL;
	snprintf(p, n, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", file);
	return p;
}

static int parse_u64(const struct ini *ini, const struct ini_kv *kv, uint64_t *v, struct rb_cs_error *err)
{
	char *end;
	errno = 0;
	*v = strtoull(kv->value, &end, 0);
	if (errno || end == kv->value || *end || kv->value[0] == '-')
		return fail(err, RB_CS_ERR_FORMAT, ini->path, kv->line, "%s: \"%s\" is not a number",
			    kv->key, kv->value);
	return 0;
}

static char *strdup_unquoted(const char *s)
{
	char *tmp = strdup(s), *r;
	if (!tmp)
		return NULL;
	r = strdup(trim(tmp, 1));
	free(tmp);
	return r;
}

/* ---- device files ---- */

static int dump_check_size(const struct ini *ini, const struct ini_kv *file_kv, struct rb_cs_dump *d,
			   int has_length, struct rb_cs_error *err)
{
	struct stat st;
	errno = 0;
	if (stat(d->path, &st) && errno == ENOENT) {
		d->missing = 1;
		return 0;
	}
	if (errno || !S_ISREG(st.st_mode))
		return fail(err, RB_CS_ERR_IO, ini->path, file_kv->line, "memory dump %s: %s", d->path,
			    errno ? strerror(errno) : "not a regular file");
	if ((uint64_t)st.st_size < d->offset)
		return fail(err, RB_CS_ERR_FORMAT, ini->path, file_kv->line,
			    "memory dump %s holds %lld bytes, less than its offset 0x%llx", d->path,
			    (long long)st.st_size, (unsigned long long)d->offset);
	if (!has_length)
		d->length = (uint64_t)st.st_size - d->offset;
	else if ((uint64_t)st.st_size - d->offset < d->length)
		return fail(err, RB_CS_ERR_FORMAT, ini->path, file_kv->line,
			    "memory dump %s holds %llu bytes from offset 0x%llx, the region declares 0x%llx",
			    d->path, (unsigned long long)((uint64_t)st.st_size - d->offset),
			    (unsigned long long)d->offset, (unsigned long long)d->length);
	return 0;
}

static int read_dump(const struct rb_cs_snapshot *ss, const struct ini *ini, const struct ini_section *s,
		     struct rb_cs_dump *d, struct rb_cs_error *err)
{
	const struct ini_kv *file = ini_key(s, "file"), *addr = ini_key(s, "address");
	const struct ini_kv *len = ini_key(s, "length"), *off = ini_key(s, "offset");
	const struct ini_kv *space = ini_key(s, "space");
	char *name;

	d->line = s->line;
	if (!file || !addr)
		return fail(err, RB_CS_ERR_FORMAT, ini->path, s->line, "[%s] lacks the mandatory %s= key",
			    s->name, file ? "address" : "file");
	if (parse_u64(ini, addr, &d->address, err) || (len && parse_u64(ini, len, &d->length, err)) ||
	    (off && parse_u64(ini, off, &d->offset, err)))
		return err ? err->code : RB_CS_ERR_FORMAT;
	if (!(name = strdup_unquoted(file->value)))
		return nomem(err, ini->path);
	d->path = join(ss->dir, name);
	free(name);
	if (!d->path || (space && !(d->space = strdup_unquoted(space->value))))
		return nomem(err, ini->path);
	return dump_check_size(ini, file, d, len != NULL, err);
}

/* The key of a [regs] line without its "(...)" annotation. */
static char *reg_name(const char *key)
{
	size_t n = strcspn(key, "(");
	char *r = strndup(key, n);
	if (r)
		trim(r, 0);   /* the key is already trimmed on the left */
	return r;
}

static int read_regs(const struct ini *ini, const struct ini_section *s, struct rb_cs_device *dev,
		     struct rb_cs_error *err)
{
	/* an empty [regs] adds nothing; realloc(p, 0) would free p and return NULL, leaving
	   dev->regs dangling for a double free (found by fuzz_cs_snapshot: two empty [regs]) */
	if (!s->nr_kv)
		return 0;
	struct rb_cs_reg *r = realloc(dev->regs, (dev->nr_regs + s->nr_kv) * sizeof(*r));
	if (!r)
		return nomem(err, ini->path);
	dev->regs = r;
	for (size_t i = 0; i < s->nr_kv; i++) {
		r = &dev->regs[dev->nr_regs];
		r->name = reg_name(s->kv[i].key);
		r->value = strdup_unquoted(s->kv[i].value);
		dev->nr_regs++;
		if (!r->name || !r->value)
			return nomem(err, ini->path);
	}
	return 0;
}

static int read_device_header(const struct ini *ini, struct rb_cs_device *dev, struct rb_cs_error *err)
{
	const struct ini_section *s = ini_section(ini, "device");
	const struct ini_kv *name = ini_key(s, "name"), *cls = ini_key(s, "class"), *type = ini_key(s, "type");
	if (!s)
		return fail(err, RB_CS_ERR_FORMAT, ini->path, 0, "no [device] section");
	if (!name || !*name->value)
		return fail(err, RB_CS_ERR_FORMAT, ini->path, s->line, "[device] lacks name=");
	dev->name = strdup(name->value);
	dev->dclass = strdup(cls ? cls->value : "");
	dev->type = strdup(type ? type->value : "");
	if (!dev->name || !dev->dclass || !dev->type)
		return nomem(err, ini->path);
	return 0;
}

static int read_device(const struct rb_cs_snapshot *ss, const char *path, struct rb_cs_device *dev,
		       struct rb_cs_error *err)
{
	struct ini ini;
	int rc = ini_read(path, &ini, err);
	if (!rc && !(dev->ini = strdup(path)))
		rc = nomem(err, path);
	if (!rc)
		rc = read_device_header(&ini, dev, err);
	for (size_t i = 0; !rc && i < ini.nr_sec; i++) {
		const struct ini_section *s = &ini.sec[i];
		if (!strcmp(s->name, "regs")) {
			rc = read_regs(&ini, s, dev, err);
		} else if (!strncmp(s->name, "dump", 4)) {
			struct rb_cs_dump *d = realloc(dev->dumps, (dev->nr_dumps + 1) * sizeof(*d));
			if (!d) {
				rc = nomem(err, path);
				break;
			}
			dev->dumps = d;
			memset(&d[dev->nr_dumps], 0, sizeof(*d));
			rc = read_dump(ss, &ini, s, &d[dev->nr_dumps++], err);
		}
	}
	ini_free(&ini);
	return rc;
}

/* ---- snapshot.ini ---- */

static int read_devices(struct rb_cs_snapshot *ss, const struct ini *ini, struct rb_cs_error *err)
{
	const struct ini_section *s = ini_section(ini, "device_list");
	if (!s)
		return fail(err, RB_CS_ERR_FORMAT, ini->path, 0, "no [device_list] section");
	if (!(ss->devices = calloc(s->nr_kv ? s->nr_kv : 1, sizeof(*ss->devices))))
		return nomem(err, ini->path);
	for (size_t i = 0; i < s->nr_kv; i++) {
		char *name = strdup_unquoted(s->kv[i].value), *path = name ? join(ss->dir, name) : NULL;
		int rc = path ? 0 : nomem(err, ini->path);
		free(name);
		ss->nr_devices++;
		if (!rc)
			rc = read_device(ss, path, &ss->devices[i], err);
		free(path);
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(ss->devices[j].name, ss->devices[i].name))
				return fail(err, RB_CS_ERR_FORMAT, ini->path, s->kv[i].line,
					    "device name \"%s\" is used twice", ss->devices[i].name);
	}
	return 0;
}

/* ---- trace.ini ---- */

static int add_link(struct rb_cs_link **links, size_t *n, const char *from, const char *to)
{
	struct rb_cs_link *l;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*links)[i].from, from)) {   /* a later definition wins */
			char *t = strdup(to);
			if (!t)
				return -1;
			free((*links)[i].to);
			(*links)[i].to = t;
			return 0;
		}
	if (!(l = realloc(*links, (*n + 1) * sizeof(*l))))
		return -1;
	*links = l;
	l[*n].from = strdup(from);
	l[*n].to = strdup(to);
	(*n)++;
	return l[*n - 1].from && l[*n - 1].to ? 0 : -1;
}

/* Is section @name one of the comma-separated names in @list? */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *b = p, *e = p + len;
		while (b < e && isspace((unsigned char)*b))
			b++;
		while (e > b && isspace((unsigned char)e[-1]))
			e--;
		if ((size_t)(e - b) == n && !strncmp(b, name, n))
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* Every name in the buffers= list must have its own section. */
static int check_buffer_list(const struct ini *ini, const struct ini_kv *list, struct rb_cs_error *err)
{
	const char *p = list->value;
	while (*p) {
		size_t len = strcspn(p, ",");
		char *name = strndup(p, len), *t;
		int found;
		if (!name)
			return nomem(err, ini->path);
		t = trim(name, 0);
		found = !*t || ini_section(ini, t) != NULL;
		if (!found)
			fail(err, RB_CS_ERR_FORMAT, ini->path, list->line,
			     "buffers= names [%s], which this file does not define", t);
		free(name);
		if (!found)
			return RB_CS_ERR_FORMAT;
		p += len + (p[len] == ',');
	}
	return 0;
}

static int read_buffer(struct rb_cs_snapshot *ss, const struct ini *ini, const struct ini_section *s,
		       struct rb_cs_error *err)
{
	const struct ini_kv *name = ini_key(s, "name"), *file = ini_key(s, "file"), *fmt = ini_key(s, "format");
	struct rb_cs_buffer *b;
	struct stat st;

	if (!name || !file)
		return fail(err, RB_CS_ERR_FORMAT, ini->path, s->line, "trace buffer [%s] lacks %s=", s->name,
			    name ? "file" : "name");
	if (!(b = realloc(ss->buffers, (ss->nr_buffers + 1) * sizeof(*b))))
		return nomem(err, ini->path);
	ss->buffers = b;
	b = &b[ss->nr_buffers++];
	b->name = strdup(name->value);
	b->path = join(ss->dir, file->value);
	b->format = strdup(fmt ? fmt->value : "");
	if (!b->name || !b->path || !b->format)
		return nomem(err, ini->path);
	errno = 0;
	if (stat(b->path, &st) || !S_ISREG(st.st_mode))
		return fail(err, RB_CS_ERR_IO, ini->path, file->line, "trace buffer %s: %s", b->path,
			    errno ? strerror(errno) : "not a regular file");
	return 0;
}

static int read_links(struct rb_cs_link **links, size_t *n, const struct ini *ini, const char *section,
		      int reverse, struct rb_cs_error *err)
{
	const struct ini_section *s = ini_section(ini, section);
	for (size_t i = 0; s && i < s->nr_kv; i++) {
		const struct ini_kv *kv = &s->kv[i];
		if (add_link(links, n, reverse ? kv->value : kv->key, reverse ? kv->key : kv->value))
			return nomem(err, ini->path);
	}
	return 0;
}

static int read_trace(struct rb_cs_snapshot *ss, const char *path, struct rb_cs_error *err)
{
	struct ini ini;
	const struct ini_kv *list;
	int rc = ini_read(path, &ini, err);

	if (!rc && !(list = ini_key(ini_section(&ini, "trace_buffers"), "buffers")))
		rc = fail(err, RB_CS_ERR_FORMAT, path, 0, "no buffers= key in a [trace_buffers] section");
	if (!rc)
		rc = check_buffer_list(&ini, list, err);
	for (size_t i = 0; !rc && i < ini.nr_sec; i++)
		if (in_list(list->value, ini.sec[i].name))
			rc = read_buffer(ss, &ini, &ini.sec[i], err);
	if (!rc && !ss->nr_buffers)
		rc = fail(err, RB_CS_ERR_FORMAT, path, list->line, "buffers= lists no trace buffer");
	if (!rc)
		rc = read_links(&ss->source_buffer, &ss->nr_source_buffer, &ini, "source_buffers", 0, err);
	/* [core_trace_sources] maps core -> source; we look it up by source. */
	if (!rc)
		rc = read_links(&ss->source_core, &ss->nr_source_core, &ini, "core_trace_sources", 1, err);
	ini_free(&ini);
	return rc;
}

static int read_snapshot_ini(struct rb_cs_snapshot *ss, struct rb_cs_error *err)
{
	struct ini ini;
	char *path = join(ss->dir, "snapshot.ini"), *trace = NULL;
	const struct ini_kv *meta;
	int rc = path ? ini_read(path, &ini, err) : nomem(err, ss->dir);

	if (!path)
		return rc;
	if (!rc)
		rc = read_devices(ss, &ini, err);
	if (!rc && !(meta = ini_key(ini_section(&ini, "trace"), "metadata")))
		rc = fail(err, RB_CS_ERR_FORMAT, path, 0, "no metadata= key in a [trace] section");
	if (!rc && !(trace = join(ss->dir, meta->value)))
		rc = nomem(err, path);
	if (!rc)
		rc = read_trace(ss, trace, err);
	free(trace);
	free(path);
	ini_free(&ini);
	return rc;
}

/* ---- public ---- */

int rb_cs_snapshot_read(const char *dir, struct rb_cs_snapshot **out, struct rb_cs_error *err)
{
	struct rb_cs_snapshot *ss;
	int rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!dir || !out)
		return fail(err, RB_CS_ERR_INVAL, NULL, 0, "NULL argument");
	*out = NULL;
	if (!(ss = calloc(1, sizeof(*ss))) || !(ss->dir = strdup(dir))) {
		free(ss);
		return nomem(err, dir);
	}
	rc = read_snapshot_ini(ss, err);
	if (rc) {
		rb_cs_snapshot_free(ss);
		return rc;
	}
	*out = ss;
	return 0;
}

static void free_device(struct rb_cs_device *d)
{
	for (size_t i = 0; i < d->nr_regs; i++) {
		free(d->regs[i].name);
		free(d->regs[i].value);
	}
	for (size_t i = 0; i < d->nr_dumps; i++) {
		free(d->dumps[i].path);
		free(d->dumps[i].space);
	}
	free(d->regs);
	free(d->dumps);
	free(d->ini);
	free(d->name);
	free(d->dclass);
	free(d->type);
}

static void free_links(struct rb_cs_link *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].from);
		free(l[i].to);
	}
	free(l);
}

void rb_cs_snapshot_free(struct rb_cs_snapshot *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->nr_devices; i++)
		free_device(&ss->devices[i]);
	for (size_t i = 0; i < ss->nr_buffers; i++) {
		free(ss->buffers[i].name);
		free(ss->buffers[i].path);
		free(ss->buffers[i].format);
	}
	free(ss->devices);
	free(ss->buffers);
	free_links(ss->source_buffer, ss->nr_source_buffer);
	free_links(ss->source_core, ss->nr_source_core);
	free(ss->dir);
	free(ss);
}

const struct rb_cs_device *rb_cs_snapshot_device(const struct rb_cs_snapshot *ss, const char *name)
{
	for (size_t i = 0; ss && name && i < ss->nr_devices; i++)
		if (!strcmp(ss->devices[i].name, name))
			return &ss->devices[i];
	return NULL;
}

const char *rb_cs_device_reg(const struct rb_cs_device *dev, const char *name)
{
	for (size_t i = 0; dev && name && i < dev->nr_regs; i++)
		if (!strcasecmp(dev->regs[i].name, name))
			return dev->regs[i].value;
	return NULL;
}

const char *rb_cs_snapshot_core_of(const struct rb_cs_snapshot *ss, const char *source)
{
	for (size_t i = 0; ss && source && i < ss->nr_source_core; i++)
		if (!strcmp(ss->source_core[i].from, source))
			return ss->source_core[i].to;
	return NULL;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int rb_cs_snapshot_sources_of(const struct rb_cs_snapshot *ss, const char *buffer, const char ***names)
{
	const char **v;
	size_t n = 0;
	if (!ss || !buffer || !names)
		return RB_CS_ERR_INVAL;
	if (!(v = calloc(ss->nr_source_buffer + 1, sizeof(*v))))
		return RB_CS_ERR_NOMEM;
	for (size_t i = 0; i < ss->nr_source_buffer; i++)
		if (!strcmp(ss->source_buffer[i].to, buffer))
			v[n++] = ss->source_buffer[i].from;
	qsort(v, n, sizeof(*v), cmp_names);
	*names = v;
	return (int)n;
}
