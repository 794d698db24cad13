/*
 * flow.c - the committed form of a true flow: a text file of runs of
 * consecutive instructions, expanded back through the program image, so the
 * fixtures can be regenerated where ptrace is not allowed.
 *
 *   # ptgen flow v1 PROG
 *   thread N                    (0 = main thread, 1 = its clone)
 *   ADDR COUNT                  (COUNT instructions laid out back to back from ADDR)
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ptgen.h"

int flow_write(const struct flow *f, struct image *im, const char *prog, FILE *out)
{
	fprintf(out, "# ptgen flow v1 %s\n", prog);
	for (int t = 0; t < f->nth; t++) {
		const struct thread_flow *th = &f->th[t];
		fprintf(out, "thread %d\n", t);
		size_t i = 0;
		while (i < th->n) {
			size_t j = i;
			struct insn in;
			while (j + 1 < th->n && image_insn(im, th->ip[j], &in) == 0 && th->ip[j] + in.size == th->ip[j + 1])
				j++;
			fprintf(out, "%" PRIx64 " %zu\n", th->ip[i], j - i + 1);
			i = j + 1;
		}
	}
	return ferror(out) ? -1 : 0;
}

int flow_read(struct flow *f, struct image *im, const char *path, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	FILE *in = fopen(path, "r");
	if (!in) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	char line[256];
	int lineno = 0, cur = -1;
	while (fgets(line, sizeof(line), in)) {
		lineno++;
		uint64_t addr;
		size_t count;
		int t;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "thread %d", &t) == 1) {
			if (t != f->nth || t >= PTGEN_MAX_THREADS)
				goto bad;
			cur = f->nth++;
			continue;
		}
		if (cur < 0 || sscanf(line, "%" SCNx64 " %zu", &addr, &count) != 2)
			goto bad;
		for (size_t k = 0; k < count; k++) {
			struct insn in_;
			flow_push(&f->th[cur], addr);
			if (k + 1 < count) {
				if (image_insn(im, addr, &in_) < 0)
					goto bad;
				addr += in_.size;
			}
		}
	}
	fclose(in);
	return 0;
bad:
	snprintf(err, errlen, "%s:%d: malformed flow line", path, lineno);
	fclose(in);
	flow_free(f);
	return -1;
}
