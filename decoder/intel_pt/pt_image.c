/*
 * pt_image.c - memory, the third part of the Intel PT decoder (intel_pt.c
 * has the overview): the code libipt decodes, which pt_decode.c's decoders
 * read through their process images, and what branch ends a block
 * (block_branch, direct_target), which libipt does not say.
 *
 * One libipt image per process and queue. Sections are added on first
 * miss: the image's read callback finds the mapping in the session's
 * machine (maps as of now in the decode), locates the object's file
 * (build-id cache, --symfs, recorded path) and adds it through libipt's
 * section cache, so that later reads of that object never come back
 * here. An exec, a new process with a reused pid, or a map over code an
 * image read, drops that image.
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pt_internal.h"

/* ------------------------------------------------------------ memory */

static int read_memory(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip, void *context);

/* Queue @q's image of process @pid (each queue has its own: decoding threads never share one). */
struct proc_image *proc_image(struct rb_pt *pt, struct ptq *q, int32_t pid)
{
	for (struct proc_image *p = q->images; p; p = p->next)
		if (p->pid == pid)
			return p;
	struct proc_image *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	char name[48];
	snprintf(name, sizeof(name), "pid %d queue %u", (int)pid, q->idx);
	p->img = pt_image_alloc(name);
	if (!p->img) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->pt = pt;
	p->q = q;
	pt_image_set_callback(p->img, read_memory, p);
	p->next = q->images;
	q->images = p;
	return p;
}

/* Whether @p is an image of @pid (-1: of any process) holding code in [@lo, @hi). */
static int holds(const struct proc_image *p, int32_t pid, uint64_t lo, uint64_t hi)
{
	if (pid != -1 && p->pid != pid)
		return 0;
	for (size_t i = 0; i < p->nr_secs; i++)
		if (p->secs[i].vaddr < hi && p->secs[i].vaddr + p->secs[i].size > lo)
			return 1;
	return 0;
}

int images_hold(const struct rb_pt *pt, int32_t pid, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < pt->nr_q; i++)
		for (const struct ptq *q = &pt->q[i]; q; q = q == &pt->q[i] ? pt->q[i].lanes : q->next)
			for (const struct proc_image *p = q->images; p; p = p->next)
				if (holds(p, pid, lo, hi))
					return 1;
	return 0;
}

/*
 * Code an image holds has changed: an exec or a new process with its pid
 * (the process's whole image, [0, UINT64_MAX)), or a map over code it read
 * (a library loaded where another was, JIT code; @pid -1: the kernel's,
 * in every image). Those
 * images are gone (no queue is decoding: the session calls between windows),
 * and a queue decoding with one goes on in a new, empty image of its
 * process, which reads the code from the maps as they are now: nothing
 * else would give the queue an image again before its next context switch.
 */
void drop_images(struct rb_pt *pt, int32_t pid, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < pt->nr_q; i++)
		for (struct ptq *q = &pt->q[i]; q; q = q == &pt->q[i] ? pt->q[i].lanes : q->next)
			for (struct proc_image **pp = &q->images; *pp;) {
				struct proc_image *p = *pp;
				if (!holds(p, pid, lo, hi)) {
					pp = &p->next;
					continue;
				}
				int current = q->img == p;
				int32_t owner = p->pid;
				*pp = p->next;
				pt_image_free(p->img);
				free(p->secs);
				free(p);
				if (current) {
					q->img = proc_image(pt, q, owner);
					if (!q->img)
						q->err = -ENOMEM;
					if (q->dec)
						dec_set_image(pt, q->dec, q->img ? q->img->img : NULL);
				}
			}
}

/*
 * libipt asks for memory no section covers: find the mapping, add the
 * object's file as a cached section, and read from it. The session's
 * machine is shared by the decoding threads (it does not change during a
 * window, but its lookups fill caches), so this holds its lock; libipt's
 * section cache has its own.
 */
static int read_memory(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip, void *context)
{
	struct proc_image *p = context;
	struct rb_pt *pt = p->pt;
	(void)asid;
	p->q->miss_pid = p->pid;
	p->q->miss_ip = ip;
	pthread_mutex_lock(&pt->mlock);
	struct rb_thread *t = rb_machine_thread(pt->env.m, p->pid, p->pid, 0);
	struct rb_code_piece piece;
	p->q->miss_why = NULL;
	int crc = rb_machine_code_at(pt->env.m, t, ip, &piece, &p->q->miss_why);   /* kernel code needs no thread */
	int ok = crc >= 0;
	p->q->miss_nofile = crc == -ENODATA;
	int isid = ok ? pt_iscache_add_file(p->q->iscache, piece.file, piece.offset, piece.size, piece.vaddr) : -1;
	pthread_mutex_unlock(&pt->mlock);
	if (isid < 0)
		return -pte_nomap;
	if (pt_image_add_cached(p->img, p->q->iscache, isid, NULL) < 0)
		return -pte_nomap;
	for (size_t i = 0; i < p->nr_secs; i++)
		if (p->secs[i].isid == isid && p->secs[i].vaddr == piece.vaddr)
			return pt_iscache_read(p->q->iscache, buffer, size, isid, ip);   /* noted already */
	void *v = realloc(p->secs, (p->nr_secs + 1) * sizeof(*p->secs));
	if (v) {
		p->secs = v;
		p->secs[p->nr_secs].vaddr = piece.vaddr;
		p->secs[p->nr_secs].size = piece.size;
		p->secs[p->nr_secs++].isid = isid;
	}
	return pt_iscache_read(p->q->iscache, buffer, size, isid, ip);
}

/* ------------------------------------------------------------ branches in the code */

/*
 * The kind of the branch instruction @raw (x86, any mode): perf's flags,
 * 0 when it is not a branch. Prefixes (operand and address size,
 * segment / branch hints, REX, BND) are skipped.
 */
static uint32_t branch_kind(const uint8_t *raw, unsigned size, unsigned *len, int *direct)
{
	unsigned i = 0;
	*len = 0;
	*direct = 0;
	while (i < size && (raw[i] == 0x66 || raw[i] == 0x67 || raw[i] == 0xf2 || raw[i] == 0xf3 ||
			    raw[i] == 0x2e || raw[i] == 0x3e || raw[i] == 0x26 || raw[i] == 0x36 ||
			    raw[i] == 0x64 || raw[i] == 0x65 || (raw[i] >= 0x40 && raw[i] <= 0x4f)))
		i++;
	if (i >= size)
		return 0;
	uint8_t op = raw[i];
	uint8_t modrm_reg = i + 1 < size ? (raw[i + 1] >> 3) & 7 : 0;
	if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3)) {
		*len = i + 2;           /* rel8 */
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CONDITIONAL;
	}
	switch (op) {
	case 0xe8:
		*direct = 1;            /* a direct call or jump needs no trace */
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL;
	case 0xe9: case 0xeb:
		*direct = 1;
		return RB_IP_FLAG_BRANCH;
	case 0x9a:
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL;
	case 0xea:
		return RB_IP_FLAG_BRANCH;
	case 0xc2: case 0xc3: case 0xca: case 0xcb:
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN;
	case 0xcf:      /* iret */
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN | RB_IP_FLAG_INTERRUPT;
	case 0xcc: case 0xcd: case 0xce: case 0xf1:
		return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_INTERRUPT;
	case 0xff:
		if (modrm_reg == 2 || modrm_reg == 3)
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL;
		if (modrm_reg == 4 || modrm_reg == 5)
			return RB_IP_FLAG_BRANCH;
		return 0;
	case 0x0f:
		if (i + 1 >= size)
			return 0;
		op = raw[i + 1];
		if (op >= 0x80 && op <= 0x8f) {
			*len = i + 6;   /* rel32 (rel16 needs a 16-bit mode, not decoded here) */
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CONDITIONAL;
		}
		if (op == 0x05 || op == 0x34)    /* syscall, sysenter */
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_CALL | RB_IP_FLAG_SYSCALLRET;
		if (op == 0x07 || op == 0x35)    /* sysret, sysexit */
			return RB_IP_FLAG_BRANCH | RB_IP_FLAG_RETURN | RB_IP_FLAG_SYSCALLRET;
		return 0;
	}
	return 0;
}

/* The section read_memory added to @q's image for @ip (the newest: libipt lets it override), or 0. */
static int added_section(const struct ptq *q, uint64_t ip)
{
	if (q->img)
		for (size_t i = q->img->nr_secs; i-- > 0;)
			if (ip - q->img->secs[i].vaddr < q->img->secs[i].size)
				return q->img->secs[i].isid;
	return 0;
}

/*
 * Code bytes at @ip in @q's image, for a block or event libipt names no
 * section for: from the section read_memory added for it if there is one,
 * rather than read_memory again (the machine's lock, a search, and the
 * section added to the image once more, each time).
 */
static int read_code(struct ptq *q, uint64_t ip, uint8_t *raw, size_t size)
{
	int isid = added_section(q, ip);
	if (isid > 0)
		return pt_iscache_read(q->iscache, raw, size, isid, ip);
	return q->img ? read_memory(raw, size, NULL, ip, q->img) : -1;
}

/*
 * The target of the direct jump or call at @ip (0: not one, or its bytes
 * cannot be read): where tracing stopped when a filter region is left by it
 * and the TIP.PGD has no IP (erratum SKL014). perf shows that target too.
 */
uint64_t direct_target(struct rb_pt *pt, struct ptq *q, uint64_t ip)
{
	uint8_t raw[pt_max_insn_size];
	int n = read_code(q, ip, raw, sizeof(raw));
	unsigned len;
	int direct;
	if (n <= 0 || !branch_kind(raw, (unsigned)n, &len, &direct) || !direct)
		return 0;
	unsigned i = 0;
	while (i < (unsigned)n && raw[i] != 0xe8 && raw[i] != 0xe9 && raw[i] != 0xeb)
		i++;           /* the prefixes branch_kind skipped */
	if (raw[i] == 0xeb && i + 2 <= (unsigned)n)
		return ip + i + 2 + (uint64_t)(int64_t)(int8_t)raw[i + 1];
	if (i + 5 > (unsigned)n)
		return 0;
	int32_t d;
	memcpy(&d, raw + i + 1, 4);
	return ip + i + 5 + (uint64_t)(int64_t)d;
}

/*
 * The branch that ends block @b, if any: libipt gives the last
 * instruction's bytes only when it straddles sections, so they are read
 * from the image (the section cache, or the process image's callback).
 */
uint32_t block_branch(struct rb_pt *pt, struct ptq *q, const struct pt_block *b, unsigned *len, int *direct)
{
	uint8_t raw[pt_max_insn_size];
	int n;
	*len = 0;
	*direct = 0;
	if (b->iclass == ptic_other || b->iclass == ptic_ptwrite)
		return 0;
	struct kind_slot *k = NULL;
	int isid = b->isid > 0 || b->truncated ? b->isid : added_section(q, b->end_ip);   /* see read_code */
	if (b->truncated) {
		memcpy(raw, b->raw, b->size);
		n = b->size;
	} else if (isid > 0) {
		/* a section's bytes do not change: its branches are classified once */
		if (!q->kinds && !(q->kinds = calloc(KIND_SLOTS, sizeof(*q->kinds)))) {
			q->err = -ENOMEM;
			return 0;
		}
		k = &q->kinds[(b->end_ip ^ ((uint64_t)isid << 20)) & (KIND_SLOTS - 1)];
		if (k->ip == b->end_ip && k->isid == isid) {
			*len = k->len;
			*direct = k->direct;
			return k->kind;
		}
		n = pt_iscache_read(q->iscache, raw, sizeof(raw), isid, b->end_ip);
	} else {
		n = q->img ? read_memory(raw, sizeof(raw), NULL, b->end_ip, q->img) : -1;
	}
	uint32_t kind = n > 0 ? branch_kind(raw, (unsigned)n, len, direct) : 0;
	if (k && n > 0)
		*k = (struct kind_slot){ .ip = b->end_ip, .isid = isid, .kind = kind, .len = (uint8_t)*len,
					 .direct = (uint8_t)*direct };
	return kind;
}
