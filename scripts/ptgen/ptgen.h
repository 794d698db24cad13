/*
 * ptgen.h - the Intel PT fixture generator's shared types.
 *
 * Pipeline (one file per stage):
 *   trace.c  run a fixture program under ptrace single-step: the true
 *            instruction flow of each thread (needs ptrace, used only to make
 *            or check the committed flow files)
 *   flow.c   that flow as a small text file (runs of consecutive
 *            instructions), read back without ptrace
 *   image.c  the program's ELF: executable bytes, build-id, and each
 *            instruction's kind (capstone)
 *   ptenc.c  the packets Intel PT would write for a flow (libipt's
 *            encoder), the ground truth a decoder must recover, and the
 *            losses a variant injects
 *   wrap.c   a perf.data around those packets (project's perfdata writer)
 *   ptgen.c  the variants and the command line
 */
#ifndef PTGEN_H
#define PTGEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PTGEN_MAX_THREADS 2

/* One thread's executed user-space instruction addresses, in order. */
struct thread_flow {
	uint64_t *ip;
	size_t n, cap;
};

struct flow {
	struct thread_flow th[PTGEN_MAX_THREADS];   /* th[0] main thread, th[1] its clone */
	int nth;
};

void flow_push(struct thread_flow *t, uint64_t ip);
void flow_free(struct flow *f);

/* trace.c: run @path under PTRACE_SINGLESTEP. 0, or -1 with @err filled. */
int trace_program(const char *path, struct flow *f, char *err, size_t errlen);

/*
 * trace.c: the stand-in kernel's flow from @entry with system call number
 * @nr up to and including its sysretq or wrmsr (single-stepped in a user
 * copy). 0, or -1 with @err filled.
 */
struct image;
int trace_kernel(struct image *kim, uint64_t entry, uint64_t nr, struct thread_flow *out, char *err, size_t errlen);

/* Instruction kinds that matter to Intel PT. */
enum ikind {
	IK_OTHER,      /* no change of flow */
	IK_JCC,        /* conditional branch: a TNT bit */
	IK_JMP,        /* direct jump: no packet */
	IK_JMP_IND,    /* indirect jump: TIP */
	IK_CALL,       /* direct call: no packet, pushes the return address */
	IK_CALL_IND,   /* indirect call: TIP, pushes */
	IK_RET,        /* near return: TNT bit (compressed) or TIP */
	IK_SYSCALL,    /* far transfer to the kernel: TIP.PGD with user-only tracing, else TIP */
	IK_SYSRET,     /* far return to user mode (kernel tracing): TIP */
	IK_PTWRITE,    /* PTWRITE (register operand): a PTW packet */
};

struct insn {
	uint64_t ip;
	uint64_t target;     /* direct branches */
	uint8_t size;
	uint8_t kind;        /* enum ikind */
	uint8_t ptw_bytes;   /* IK_PTWRITE: operand size, 4 or 8 */
};

struct image {
	char path[512];
	uint8_t *file;                 /* the whole ELF */
	size_t file_size;
	uint64_t text_vaddr, text_size, text_offset;   /* the executable PT_LOAD */
	uint64_t entry;                /* e_entry */
	uint8_t build_id[20];
	unsigned build_id_size;
	struct insn *cache;            /* per byte of the text segment, kind 0xff = not decoded */
	void *cs;                      /* capstone handle (csh) */
	struct image *next;            /* another image (the kernel's) for addresses outside this text */
	int owns_next;                 /* next is this file's next executable segment, freed with it */
};

/* The file's first executable PT_LOAD; each further one (kernel modules) as an image chained by next. */
int image_open(struct image *im, const char *path, char *err, size_t errlen);
/* The instruction at @ip (in @im or the images chained by next); 0, or -1 if outside them or undecodable. */
int image_insn(struct image *im, uint64_t ip, struct insn *out);
/* Load @im's text (not the images chained to it) @delta bytes higher, as KASLR moves a kernel. */
void image_relocate(struct image *im, uint64_t delta);
void image_close(struct image *im);
/*
 * A copy of the ELF at @out that this CPU can run: each PTWRITE replaced by
 * a NOP of its length (same addresses, same flow otherwise). Returns the
 * number of PTWRITEs replaced (0: no copy written), or -1 with @err filled.
 */
int image_runnable_copy(struct image *im, const char *out, char *err, size_t errlen);

/* flow.c: the committed flow file; blocks are expanded through @im. */
int flow_write(const struct flow *f, struct image *im, const char *prog, FILE *out);
int flow_read(struct flow *f, struct image *im, const char *path, char *err, size_t errlen);


/* ---------------------------------------------------------------- ptenc.c */

/* What the simulated processor is set up to emit, and how fast it runs. */
struct ptcfg {
	int mtc, cyc;              /* MTC / CYC packets on */
	int noretcomp;             /* return compression off: every return is a TIP */
	int ptw, fup_on_ptw, pwr_evt;   /* config bits ptw, fup_on_ptw, pwr_evt (PTWRITE and power packets) */
	unsigned mtc_period;       /* MTC every 2^mtc_period crystal ticks */
	unsigned ctc_ratio;        /* TSC ticks per crystal tick (CPUID.15H EBX/EAX) */
	unsigned nom_ratio;        /* max non-turbo ratio; CBR equals it: one TSC tick per core cycle */
	size_t psb_bytes;          /* PSB+ after at least this many bytes */
	uint64_t syscall_cycles;   /* time spent in the kernel per system call */
	uint64_t irq_cycles;       /* time spent in the kernel per interrupt */
	int kernel;                /* the kernel is traced too: system calls and returns are TIPs */
	uint64_t filt_a, filt_b;   /* IP filtering: only [filt_a, filt_b] is traced (0, 0: off) */
	int skl014;                /* erratum SKL014: a direct jump / call leaving the filter region
				      gives TIP.PGD without its target IP */
	const char *filter;        /* perf's filter string in AUXTRACE_INFO (NULL: none) */
	const char *cpuid;         /* the CPUID feature (NULL: ptgen's default CPU) */
};

struct psb_mark {
	size_t offset;             /* stream offset of the PSB */
	uint64_t tsc;              /* its TSC packet */
	int thread;                /* thread whose instruction follows (-1: tracing disabled) */
	size_t index;              /* that instruction (when disabled: the next one to execute) */
	int enabled;               /* PSB+ carried a FUP */
};

/* Per-instruction facts of the ground truth (struct truth.flags). */
enum {
	TF_VISIBLE = 1,      /* a decoder can recover this instruction */
	TF_BEGIN = 2,        /* trace (re)starts at it: a trace-begin branch 0 -> ip */
	TF_ASYNC_AFTER = 4,  /* an interrupt is taken right after it (FUP next ip, TIP.PGD) */
	TF_LOSS = 8,         /* trace was lost just before it */
	TF_LEAVE = 16,       /* a branch out of the filter region: tracing stops (TIP.PGD) */
};

struct gap {
	int thread;
	size_t first, count;      /* lost instructions [first, first + count) of the thread */
	const char *reason;       /* "overflow", "aux-truncated", "snapshot-hole" ... */
};

/* A PTWRITE or power event the stream carries (expected.txt "event" lines). */
struct ptevent {
	const char *kind;         /* perf's event name: ptwrite cbr mwait pwre exstop pwrx */
	int thread;
	uint64_t ip;              /* the instruction it binds to (FUP), else the next to execute */
	uint64_t tsc;
	uint64_t v[3];            /* ptwrite: payload, exact_ip; cbr: ratio; mwait: hints, extensions;
				     pwre: cstate, subcstate, hw; exstop: exact_ip; pwrx: deepest, last, wake */
};

struct truth {
	struct ptevent ev[32];
	int nev;
	uint8_t *flags[PTGEN_MAX_THREADS];
	uint64_t *tsc[PTGEN_MAX_THREADS];   /* when each instruction executed */
	struct gap gaps[16];
	int ngaps;
	uint64_t lost_records;    /* PERF_RECORD_LOST total */
	unsigned queue_threads[4];/* per AUX queue (= CPU): bit t set if thread t ran there */
	int nqueues;
	int per_thread;           /* queues are per thread (cpu -1) */
};

/* One AUX area's packet stream. */
struct ptstream {
	const struct ptcfg *cfg;
	void *enc;                 /* struct pt_encoder */
	uint8_t tmp[64];
	uint8_t *buf;
	size_t len, cap;
	uint64_t tsc;              /* now */
	uint64_t last_ip;          /* IP compression reference */
	uint64_t nip;              /* IP packets so far (compression rotation) */
	uint64_t tnt;              /* pending TNT bits, oldest highest */
	unsigned ntnt;
	uint64_t cyc_ref;          /* time of the last CYC (or other timing reset) */
	uint64_t next_mtc;         /* TSC of the next MTC */
	size_t next_psb;
	int enabled;               /* PacketEn */
	int dropping;              /* packets are being lost (overflow) */
	uint64_t rs[64];           /* return-compression stack (circular) */
	unsigned rs_top, rs_n;
	struct psb_mark *psb;
	size_t npsb, psbcap;
	uint64_t cur_ip;           /* next instruction to execute */
	size_t cut_every;          /* record a packet boundary after every this many bytes (0: off) */
	size_t next_cut;
	struct { size_t offset; uint64_t tsc; } cuts[256];   /* AUX chunk ends, at packet boundaries */
	int ncuts;
	size_t *timing;            /* offsets of TSC and TMA packets, when track_timing */
	size_t ntiming, timingcap;
	int track_timing;
	int thread;                /* thread whose instructions are being encoded */
	size_t index;              /* its next instruction */
	unsigned cbr;              /* core:bus ratio of the last CBR packet (0: cfg->nom_ratio) */
};

int ps_init(struct ptstream *s, const struct ptcfg *cfg, uint64_t tsc);
void ps_free(struct ptstream *s);
/* PSB+ now; with FUP @ip when tracing is enabled. */
void ps_psb(struct ptstream *s);
/* Tracing enabled at @ip (return to user mode): TSC, TMA, MODE.Exec, TIP.PGE. */
void ps_enable(struct ptstream *s, uint64_t ip);
/* Interrupt before @ip: FUP(ip), TIP.PGD (IP suppressed). */
void ps_interrupt(struct ptstream *s, uint64_t ip);
/* Time passes with tracing disabled. */
void ps_idle(struct ptstream *s, uint64_t cycles);
/* Execute one instruction @in whose successor is @next (0: none). */
void ps_insn(struct ptstream *s, const struct insn *in, uint64_t next);
/* Pending TNT bits out now. */
void ps_flush(struct ptstream *s);
/* Overflow: packets from now on are lost until ps_overflow_end. */
void ps_overflow_begin(struct ptstream *s);
/* Overflow resolves before @ip: OVF, FUP(ip). */
void ps_overflow_end(struct ptstream *s, uint64_t ip);
/* Packets lost from now on (AUX area full: no OVF) until ps_restart. */
void ps_stop(struct ptstream *s);
/* Tracing restarts in the kernel: PSB+ without FUP; the caller then enables. */
void ps_restart(struct ptstream *s);
/* PTWRITE of @payload (@bytes 4 or 8) at @ip: PTW, and FUP(@ip) when @fup (config fup_on_ptw). */
void ps_ptw(struct ptstream *s, uint64_t payload, int bytes, uint64_t ip, int fup);
/* The core:bus ratio changes to @ratio: CBR (config pwr_evt). */
void ps_cbr(struct ptstream *s, unsigned ratio);
/* A C-state at @ip (config pwr_evt): MWAIT, PWRE, EXSTOP(IP), FUP(ip); asleep @ticks; TSC, TMA, PWRX. */
struct ptsleep {
	uint32_t hints, ext;       /* MWAIT's EAX and ECX */
	uint8_t state, sub_state;  /* PWRE: resolved thread C-state (hw 0: libipt and perf disagree on its bit) */
	uint8_t last, deepest;     /* PWRX: last and deepest core C-state */
	uint8_t wake;              /* PWRX wake reason: 1 interrupt, 4 monitored store, 8 hardware */
	uint64_t ticks;
};
void ps_sleep(struct ptstream *s, uint64_t ip, const struct ptsleep *z);
/* Record a packet boundary (AUX chunk end) now. */
void ps_cut(struct ptstream *s);
/* Trailing PAD bytes to a multiple of 8. */
void ps_pad(struct ptstream *s);

/* ----------------------------------------------------------------- wrap.c */

struct wrap_cfg {
	const struct ptcfg *pt;
	int ncpus;                 /* CPUs with an AUX area (per-CPU mmaps) */
	int snapshot;              /* snapshot mode (AUX records carry OVERWRITE) */
	int per_thread;            /* per-thread AUX areas (perf record --per-thread): AUXTRACE cpu -1 */
	int pipe;                  /* pipe mode (perf record -o -): no index, no BUILD_ID feature */
	int have_sched_switch;     /* 2: PERF_RECORD_SWITCH, 3: SWITCH_CPU_WIDE */
	const struct image *img[PTGEN_MAX_THREADS + 1];   /* binaries for BUILD_ID (NULL-terminated) */
	const char *img_name[PTGEN_MAX_THREADS + 1];      /* their recorded file names */
	const struct image *kimg;  /* the kernel's image (BUILD_ID of [kernel.kallsyms]), or NULL */
};

struct wrap;
/* Perf time of TSC value @tsc (the TIME_CONV written into every fixture). */
uint64_t wrap_perf_time(uint64_t tsc);
int wrap_open(struct wrap **out, const char *path, const struct wrap_cfg *cfg);
int wrap_close(struct wrap *w);
/* Kernel records; @tsc is converted to perf time for the sample_id trailer. */
void wrap_comm(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, const char *comm, int exec);
void wrap_mmap2(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, const struct image *im,
		const char *filename);
void wrap_kernel_mmap(struct wrap *w, uint64_t tsc, const struct image *kim, const char *filename);
void wrap_fork(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, uint32_t ptid, int exit);
void wrap_itrace_start(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid);
void wrap_switch(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, int out);
void wrap_switch_cpu_wide(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, int out,
			  uint32_t np_pid, uint32_t np_tid);
void wrap_aux(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, uint64_t aux_offset,
	      uint64_t aux_size, uint64_t flags);
void wrap_lost(struct wrap *w, int cpu, uint64_t tsc, uint32_t pid, uint32_t tid, uint64_t lost);
/* AUXTRACE record + @size bytes of trace (padded to 8 with zeros). */
void wrap_auxtrace(struct wrap *w, int cpu, uint64_t tsc, uint32_t tid, uint64_t offset, const uint8_t *data,
		   uint64_t size);
void wrap_round(struct wrap *w);

/* iptcheck.c: libipt's instruction decoder over AUX queue @queue of @perfdata; addresses to @out. */
int ipt_decode(const char *perfdata, struct image *im, int queue, FILE *out);

#endif
