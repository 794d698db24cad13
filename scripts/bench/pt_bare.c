/*
 * pt_bare.c - the limit for Intel PT decoding speed: libipt's block decoder
 * in a bare loop over one recording's AUX data, its image one ELF file
 * added through the image section cache. No sideband, no events, no
 * output: blocks and instructions counted. Used by scripts/bench/pt.sh.
 *
 *   pt_bare TRACE.bin ELF VADDR OFFSET SIZE
 * TRACE.bin: the raw AUX bytes of one queue; the ELF's code at file OFFSET
 * (SIZE bytes) is mapped at VADDR.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <intel-pt.h>

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: pt_bare TRACE.bin ELF VADDR OFFSET SIZE\n");
		return 1;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END))
		return perror(argv[1]), 1;
	long n = ftell(f);
	uint8_t *buf = malloc((size_t)n + 1);
	rewind(f);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return perror(argv[1]), 1;
	fclose(f);
	struct pt_config c;
	pt_config_init(&c);
	c.begin = buf;
	c.end = buf + n;
	c.flags.variant.block.end_on_call = 1;
	c.flags.variant.block.end_on_jump = 1;
	struct pt_block_decoder *d = pt_blk_alloc_decoder(&c);
	struct pt_image_section_cache *ic = pt_iscache_alloc("bare");
	int isid = pt_iscache_add_file(ic, argv[2], strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0),
				       strtoull(argv[3], NULL, 0));
	if (!d || !ic || isid < 0 || pt_image_add_cached(pt_blk_get_image(d), ic, isid, NULL) < 0)
		return fprintf(stderr, "pt_bare: cannot set up the decoder\n"), 1;
	uint64_t blocks = 0, insns = 0, errors = 0;
	for (;;) {
		int st = pt_blk_sync_forward(d);
		if (st < 0)
			break;
		for (;;) {
			while (st & pts_event_pending) {
				struct pt_event ev;
				st = pt_blk_event(d, &ev, sizeof(ev));
				if (st < 0)
					break;
			}
			if (st < 0)
				break;
			struct pt_block b;
			st = pt_blk_next(d, &b, sizeof(b));
			blocks++;
			insns += b.ninsn;
			if (st < 0)
				break;
		}
		if (st != -pte_eos)
			errors++;
	}
	printf("blocks %" PRIu64 " insns %" PRIu64 " errors %" PRIu64 "\n", blocks, insns, errors);
	pt_blk_free_decoder(d);
	pt_iscache_free(ic);
	free(buf);
	return 0;
}
