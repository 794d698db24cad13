/*
 * util.c - helpers for the recorder: errors as sentences, small file reads,
 * CPU lists. Library code: never prints.
 *
 * Workload: start-up and tear-down only (sysfs, procfs, tracefs reads).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util.h"

int rec_fail(struct rec_err *e, int err, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	e->err = err;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

char *read_all(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (len + 4097 > cap) {
			size_t ncap = cap ? 2 * cap : 65536;
			char *nb = realloc(buf, ncap);
			if (!nb)
				goto err_out;
			buf = nb;
			cap = ncap;
		}
		size_t k = fread(buf + len, 1, cap - len - 1, f);
		len += k;
		if (k == 0)
			break;
	}
	if (ferror(f))
		goto err_out;
	fclose(f);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
err_out:
	fclose(f);
	free(buf);
	return NULL;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int cpu_list_parse(const char *s, int **out)
{
	int *v = NULL, n = 0, cap = 0;

	*out = NULL;
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;
		if (end == s || a < 0 || a > 65535)
			goto err_out;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a || b > 65535)
				goto err_out;
			s = end;
		}
		for (long c = a; c <= b; c++) {
			int dup = 0;
			for (int i = 0; i < n; i++)
				dup |= v[i] == c;
			if (dup)
				continue;
			if (n == cap) {
				int *nv = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*v));
				if (!nv)
					goto err_out;
				v = nv;
			}
			v[n++] = (int)c;
		}
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			goto err_out;
		else if (*s == '\n')
			break;
	}
	if (!n)
		goto err_out;
	qsort(v, (size_t)n, sizeof(*v), cmp_int);
	*out = v;
	return n;
err_out:
	free(v);
	return -1;
}

int cpus_online(int **out)
{
	char buf[4096];

	if (read_text("/sys/devices/system/cpu/online", buf, sizeof(buf)) < 0)
		return -1;
	return cpu_list_parse(buf, out);
}

int cpus_avail(void)
{
	char buf[4096];
	int *v, n, max;

	if (read_text("/sys/devices/system/cpu/present", buf, sizeof(buf)) < 0)
		return (int)sysconf(_SC_NPROCESSORS_CONF);
	n = cpu_list_parse(buf, &v);
	if (n <= 0)
		return (int)sysconf(_SC_NPROCESSORS_CONF);
	max = v[n - 1] + 1;
	free(v);
	return max;
}

const char *tracefs_dir(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char p[256];
		snprintf(p, sizeof(p), "%s/events", dirs[i]);
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			return dirs[i];
	}
	return NULL;
}
