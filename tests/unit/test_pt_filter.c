/*
 * test_pt_filter.c - Intel PT address filter strings (decoder/intel_pt/pt_filter.c):
 * the forms perf record writes into AUXTRACE_INFO (facts 4.1), the ones it
 * cannot (rejected with the entry named), placement by a file's mapping
 * (start + offset - pgoff, as the kernel places them), and libipt's
 * configuration (IA32_RTIT_CTL ADDRn_CFG: 1 filter, 2 stop; ranges inclusive).
 */
#include "config.h"
#include <string.h>
#include <intel-pt.h>
#include "decoder/intel_pt/pt_filter.h"
#include "tap.h"

static int rejects(const char *s, const char *word)
{
	struct rb_pt_filters fs;
	char why[512] = "";
	int rc = rb_pt_filters_parse(&fs, s, why, sizeof(why));
	if (rc == 0 || !strstr(why, word))
		diag("'%s': rc %d, why '%s'", s, rc, why);
	return rc < 0 && strstr(why, word);
}

int main(void)
{
	struct rb_pt_filters fs;
	char why[512];
	int rc = rb_pt_filters_parse(&fs, "filter 0x10f0/0x7d@/rbfix/loops", why, sizeof(why));
	ok(rc == 0 && fs.n == 1 && !fs.f[0].stop && fs.f[0].addr == 0x10f0 && fs.f[0].size == 0x7d &&
	   !strcmp(fs.f[0].file, "/rbfix/loops") && !fs.f[0].placed,
	   "an object's filter as perf record writes it: offset, size, file; not placed yet");
	rb_pt_filters_mmap(&fs, "/rbfix/other", 0x400000, 0x2000, 0);
	ok(!fs.f[0].placed, "a mapping of another file does not place it");
	rb_pt_filters_mmap(&fs, "/rbfix/loops", 0x401000, 0x1000, 0x2000);
	ok(!fs.f[0].placed, "a mapping of the file that does not cover the offset does not place it");
	rb_pt_filters_mmap(&fs, "/rbfix/loops", 0x55550000 + 0x1000, 0x1000, 0x1000);
	ok(fs.f[0].placed && fs.f[0].a == 0x555510f0 && fs.f[0].b == 0x555510f0 + 0x7c,
	   "the mapping that covers it places it at start + offset - pgoff (%#llx-%#llx)",
	   (unsigned long long)fs.f[0].a, (unsigned long long)fs.f[0].b);
	rb_pt_filters_mmap(&fs, "/rbfix/loops", 0x7f0000001000, 0x1000, 0x1000);
	ok(fs.f[0].a == 0x555510f0, "a later mapping does not move it");

	rc = rb_pt_filters_parse(&fs, " filter 0xffffffff81000000/0x100 , stop 0xffffffff81000080,"
				 "tracestop 0x20 / 0x10 @ /lib/libc.so.6", why, sizeof(why));
	ok(rc == 0 && fs.n == 3 && fs.f[0].placed && fs.f[0].a == 0xffffffff81000000ull &&
	   fs.f[0].b == 0xffffffff810000ffull && fs.f[1].stop && fs.f[1].placed &&
	   fs.f[1].a == 0xffffffff81000080ull && fs.f[1].b == fs.f[1].a && fs.f[2].stop &&
	   !strcmp(fs.f[2].file, "/lib/libc.so.6") && fs.f[2].size == 0x10,
	   "kernel ranges are placed as written; stop and tracestop; spaces and commas as perf allows");
	struct pt_conf_addr_filter c;
	memset(&c, 0, sizeof(c));
	int k = rb_pt_filters_config(&fs, &c);
	ok(k == 2 && c.config.ctl.addr0_cfg == 1 && c.config.ctl.addr1_cfg == 2 && c.config.ctl.addr2_cfg == 0 &&
	   c.addr0_a == 0xffffffff81000000ull && c.addr0_b == 0xffffffff810000ffull && c.addr1_a == c.addr1_b,
	   "libipt gets the placed ones: ADDR0 filter, ADDR1 stop, the unplaced file range left out");
	char buf[320];
	rb_pt_filter_str(&fs.f[2], buf, sizeof(buf));
	ok(!strcmp(buf, "stop 0x20/0x10@/lib/libc.so.6"), "a filter as text: %s", buf);

	ok(rejects("start 0x1000@/bin/ls", "only filter and stop"), "start filters: not Intel PT's");
	ok(rejects("filter main @ /bin/ls", "not an address"), "a symbol perf record did not resolve");
	ok(rejects("filter 0x10/@/bin/ls", "not a size"), "no size after '/'");
	ok(rejects("filter 0x10/0x20@", "no file name"), "no file after '@'");
	ok(rejects("filter 0x10 junk", "unexpected text"), "text after the address");
	ok(rejects("filter 1,filter 2,filter 3,filter 4,filter 5", "more than 4"), "five filters: the MSRs hold four");
	ok(rb_pt_filters_parse(&fs, "", why, sizeof(why)) == 0 && fs.n == 0, "an empty string: no filters");
	return done_testing();
}
