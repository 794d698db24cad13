/*
 * ftpage.h - the ftrace ring buffer's pages, parsed without any library:
 * the page header (timestamp of the first event, commit = bytes of events,
 * whose high bits flag missed events) and the compressed event headers
 * (5-bit type_len, 27-bit time delta): data events of 1..28 words or with
 * an explicit length (type_len 0), padding (29), time extends (30) and
 * absolute timestamps (31). tracedat.h reads the files that hold the pages.
 */
#ifndef RB_FTPAGE_H
#define RB_FTPAGE_H

#include <stddef.h>
#include <stdint.h>

#define RB_FTPAGE_MISSED_EVENTS (1ULL << 31)   /* commit: events were lost before this page */
#define RB_FTPAGE_MISSED_STORED (1ULL << 30)   /* ...and their count follows the events (a long) */
#define RB_FTPAGE_COMMIT_MASK ((1ULL << 27) - 1)

enum { RB_FT_PADDING = 29, RB_FT_TIME_EXTEND = 30, RB_FT_TIME_STAMP = 31 };

/* An @n-byte (1, 2, 4 or 8) unsigned integer at @p, big-endian if @be, else little-endian. */
static inline uint64_t rb_ft_load(const uint8_t *p, unsigned n, int be)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << 8 * (be ? n - 1 - i : i);
	return v;
}

/* How the pages are laid out: from the header_page format and the file header. */
struct rb_ftpage_layout {
	uint32_t page_size;       /* bytes per page (sub-buffer) */
	uint32_t commit_size;     /* size of the commit field: the kernel's long, 4 or 8 */
	uint32_t data_offset;     /* where events start: 8 + commit_size */
	int big_endian;           /* the recording host's byte order */
};

struct rb_ftpage_info {
	uint64_t timestamp;       /* page header */
	uint32_t size;            /* bytes of events after data_offset */
	int missed;               /* events were lost before this page */
	int64_t missed_count;     /* how many, -1 if the kernel could not store it */
	uint32_t events;          /* data events delivered */
	int damaged;              /* an event ran past the commit size (rest of page dropped), or: */
	int commit_overflow;      /* the commit size ran past the page (read to the page's end) */
	uint32_t damaged_at;      /* its offset in the page */
};

/* One data event: its time, payload, and offset in the page. */
typedef int (*rb_ftpage_event_fn)(void *ctx, uint64_t ts, const uint8_t *data, uint32_t len, uint32_t offset);

/*
 * Fill @layout from the header_page format text (field offsets and sizes);
 * @page_size and @big_endian come from the file header. 0, or -1 if the
 * text has no commit or data field.
 */
int rb_ftpage_layout_parse(struct rb_ftpage_layout *layout, const char *header_page, size_t len,
			   uint32_t page_size, int big_endian);

/*
 * Walk one page of @len bytes (at most layout->page_size), calling @fn for
 * each data event in order. Bad input never reads outside the page: a
 * commit size beyond the page is cut to it and the page marked damaged; an
 * event that does not fit stops the walk (damaged). Returns 0, or the first
 * non-zero value of @fn.
 */
int rb_ftpage_parse(const struct rb_ftpage_layout *layout, const uint8_t *page, size_t len,
		    struct rb_ftpage_info *info, rb_ftpage_event_fn fn, void *ctx);

#endif
