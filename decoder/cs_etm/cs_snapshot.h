/*
 * cs_snapshot.h - CoreSight trace snapshot directories (the format of
 * OpenCSD's test snapshots, DS-5 and debug-probe captures): snapshot.ini
 * lists device .ini files, trace.ini names the trace buffers and which trace
 * source feeds which buffer and which core, device files hold the trace
 * source registers and the core's memory dumps.
 *
 * The reader parses all of it into plain structs and checks what later
 * stages would otherwise trip over (a trace buffer file that is missing, a
 * memory dump shorter than the region it declares). It knows nothing of
 * OpenCSD. Workload: a handful of small text files, read once.
 */
#ifndef RB_CS_SNAPSHOT_H
#define RB_CS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

/* Error codes shared by the CoreSight snapshot reader and decoder. */
enum rb_cs_err {
	RB_CS_OK = 0,
	RB_CS_ERR_NOMEM = -1,    /* out of memory */
	RB_CS_ERR_INVAL = -2,    /* a NULL or contradictory argument */
	RB_CS_ERR_IO = -3,       /* a file could not be opened or read */
	RB_CS_ERR_FORMAT = -4,   /* an ini file is malformed or inconsistent */
	RB_CS_ERR_DECODE = -5,   /* the decoder library refused the snapshot */
};

/* Where and why reading or decoding failed. */
struct rb_cs_error {
	int code;                /* one of enum rb_cs_err */
	char file[1024];         /* the file at fault, "" if none */
	int line;                /* 1-based line in @file, 0 if not about a line */
	char msg[512];
};

/* One register of a device's [regs] section. */
struct rb_cs_reg {
	char *name;              /* key without its "(...)" suffix: TRCIDR0(0x078) -> TRCIDR0 */
	char *value;             /* text, quotes stripped */
};

/* One [dump*] section: memory as the core saw it. */
struct rb_cs_dump {
	char *path;              /* absolute or relative to the working directory */
	uint64_t address;        /* first byte's address */
	uint64_t offset;         /* first byte's offset in the file */
	uint64_t length;         /* bytes; the rest of the file if the ini gave none */
	char *space;             /* memory space name (EL1N, S, ANY...), NULL if absent */
	int line;                /* line of the section header in the device ini */
	int missing;             /* the file does not exist: OpenCSD's own tools decode such
				    snapshots without that memory, so this is not an error here */
};

struct rb_cs_device {
	char *ini;               /* path of the device .ini */
	char *name;              /* [device] name=, unique in the snapshot */
	char *dclass;            /* class= (core, trace_source, ...), "" if absent */
	char *type;              /* type= (ETM4, ETE, Cortex-A53, ...), "" if absent */
	struct rb_cs_reg *regs;
	size_t nr_regs;
	struct rb_cs_dump *dumps;
	size_t nr_dumps;
};

struct rb_cs_buffer {
	char *name;              /* name= as [source_buffers] refers to it */
	char *path;              /* file=, joined to the snapshot folder; the file exists */
	char *format;            /* coresight | source_data | dstream_coresight | "" */
};

/* A name-to-name association from trace.ini. */
struct rb_cs_link {
	char *from;
	char *to;
};

struct rb_cs_snapshot {
	char *dir;
	struct rb_cs_device *devices;
	size_t nr_devices;
	struct rb_cs_buffer *buffers;    /* in the order trace.ini defines them */
	size_t nr_buffers;
	struct rb_cs_link *source_buffer;/* trace source name -> buffer name */
	size_t nr_source_buffer;
	struct rb_cs_link *source_core;  /* trace source name -> core device name */
	size_t nr_source_core;
};

/*
 * Read the snapshot in folder @dir. Returns 0 and sets *@out, or a negative
 * rb_cs_err with @err naming the file and line at fault: RB_CS_ERR_IO if a
 * file is missing or unreadable (snapshot.ini, a device ini, trace.ini, a
 * trace buffer; a memory dump that does not exist is only flagged
 * rb_cs_dump.missing), RB_CS_ERR_FORMAT if an ini line is not
 * "[section]" or "key=value", a required key is missing or a dump file is
 * shorter than its declared region, RB_CS_ERR_INVAL if an argument is NULL.
 */
int rb_cs_snapshot_read(const char *dir, struct rb_cs_snapshot **out, struct rb_cs_error *err);
/* Free a snapshot; accepts NULL and half-built snapshots. */
void rb_cs_snapshot_free(struct rb_cs_snapshot *ss);

/* The device called @name, or NULL. */
const struct rb_cs_device *rb_cs_snapshot_device(const struct rb_cs_snapshot *ss, const char *name);
/* The value of register @name (case-insensitive, "(...)" suffix ignored), or NULL. */
const char *rb_cs_device_reg(const struct rb_cs_device *dev, const char *name);
/* The core device name trace source @source is attached to, or NULL (STM, ITM). */
const char *rb_cs_snapshot_core_of(const struct rb_cs_snapshot *ss, const char *source);
/*
 * The trace sources that feed buffer @buffer, sorted by name (byte order, as
 * OpenCSD's own snapshot tools visit them). Returns the count and sets
 * *@names to an array the caller frees with free() (the strings belong to
 * @ss), or a negative rb_cs_err.
 */
int rb_cs_snapshot_sources_of(const struct rb_cs_snapshot *ss, const char *buffer, const char ***names);

#endif
