/*
 * fuzz_imc.c - libFuzzer target for the raw POWER trace-imc buffer decoder
 * (decoder/imc/imc.c). The first 32 bytes of the input choose the options (POWER9
 * or POWER10, time base frequency, anchor pair); the rest is the buffer.
 * Besides crashes it checks what the decoder promises: every record it hands
 * back lies inside the buffer at a record boundary and is valid (tb2 equals
 * tb1's low 42 bits), gaps lie inside the buffer, and records plus gaps
 * account for every byte exactly once.
 */
#include "config.h"
#include "decoder/imc/imc.h"
#include "fuzz.h"

struct check {
	size_t len;
	uint64_t covered;
};

static void fail(const char *what, uint64_t off)
{
	fprintf(stderr, "imc: %s (offset %llu)\n", what, (unsigned long long)off);
	abort();
}

static int on_record(void *ctx, const struct rb_imc_record *r)
{
	struct check *c = ctx;
	if (r->offset % RB_IMC_RECORD_SIZE || r->offset + RB_IMC_RECORD_SIZE > c->len)
		fail("record outside the buffer or off a record boundary", r->offset);
	if (r->tb2 != (r->tb1 & RB_IMC_TB_MASK))
		fail("record handed back as valid with tb2 != tb1's low 42 bits", r->offset);
	c->covered += RB_IMC_RECORD_SIZE;
	return 0;
}

static int on_gap(void *ctx, const struct rb_imc_gap *g)
{
	struct check *c = ctx;
	if (g->offset > c->len || g->bytes > c->len - g->offset)
		fail("gap outside the buffer", g->offset);
	if (!g->reason || !*g->reason)
		fail("gap without a reason", g->offset);
	c->covered += g->bytes;
	return 0;
}

static uint64_t u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 32)
		return 0;
	struct rb_imc_opts o = {
		.power10 = data[0] & 1,
		.timebase_hz = data[0] & 2 ? u64(data + 8) : (data[0] & 4 ? 512000000 : 0),
		.anchor_tb = u64(data + 16),
		.anchor_ns = u64(data + 24),
	};
	struct check c = { size - 32, 0 };
	struct rb_imc_sink s = { &c, on_record, on_gap };
	if (rb_imc_decode(data + 32, size - 32, &o, &s) != 0)
		fail("decode failed although the sink never did", 0);
	if (c.covered != c.len) {
		fprintf(stderr, "imc: records and gaps cover %llu bytes of %zu\n", (unsigned long long)c.covered, c.len);
		abort();
	}
	(void)rb_imc_tb_to_ns(&o, u64(data + 16) ^ u64(data + 8));
	return 0;
}
