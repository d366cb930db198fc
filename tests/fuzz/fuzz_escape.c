/*
 * libFuzzer harness for the escaping of untrusted strings (analysis/
 * escape.c), which everything ptloom prints from a program or a schedule
 * file goes through (show, replay's "recorded:" line, failure reports), and
 * for the script writer on whatever schedule the input decodes to.
 * tests/fuzz/run.sh builds it with ASan and UBSan.
 *
 * Contracts checked, for any bytes:
 *   - text escaping leaves nothing a terminal acts on: strictly valid
 *     UTF-8, no C0 control but \n and \t (and those only with ESC_LINES),
 *     no DEL, no C1, no bidi override;
 *   - into any buffer size it never overflows, always terminates, returns
 *     the full length and keeps a prefix of the full text;
 *   - clean input passes unchanged, and esc_is_clean says so;
 *   - JSON strings are valid UTF-8 without raw controls, XML text has no
 *     raw markup and no character XML 1.0 forbids;
 *   - a decoded schedule's script has no unsafe byte.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/escape.h"
#include "../../replayer/schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Strictly valid UTF-8 with no code point bad() refuses. */
static void check_utf8(const char *s, size_t n, int (*bad)(uint32_t))
{
	const unsigned char *p = (const unsigned char *)s;

	while (n) {
		uint32_t c;
		int m = utf8_next(p, n, &c);

		if (!m || bad(c))
			abort();
		p += m;
		n -= (size_t)m;
	}
}

static int term_bad(uint32_t c)
{
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ||
	       (c >= 0x80 && c < 0xa0) || c == 0x061c || c == 0x200e ||
	       c == 0x200f || (c >= 0x2028 && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

static int term_bad_line(uint32_t c)
{
	return c == '\n' || c == '\t' || term_bad(c);
}

static int json_bad(uint32_t c)
{
	return c < 0x20;
}

static int xml_bad(uint32_t c)
{
	return (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == '<' ||
	       c == '>' || c == 0xfffe || c == 0xffff;
}

static char *to_mem(void (*f)(FILE *, const char *), const char *s,
		    size_t *n)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, n);

	if (!m)
		abort();
	f(m, s);
	fclose(m);
	return buf;
}

static void check_text(const char *s, size_t n, unsigned flags)
{
	size_t need = esc_text_n(NULL, 0, s, n, flags);
	char *full = malloc(need + 1);

	if (!full || esc_text_n(full, need + 1, s, n, flags) != need ||
	    strlen(full) != need)
		abort();
	check_utf8(full, need, flags & ESC_LINES ? term_bad : term_bad_line);
	/* every smaller buffer: terminated, a prefix, never beyond */
	for (size_t len = 1; len <= need && len < 64;
	     len += len < 8 ? 1 : 13) {
		char small[64 + 8];

		memset(small, 0x55, sizeof(small));
		if (esc_text_n(small, len, s, n, flags) != need)
			abort();
		size_t k = strlen(small);

		if (k >= len || memcmp(small, full, k) ||
		    (unsigned char)small[len] != 0x55)
			abort();
	}
	free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	size_t n = strlen(s); /* strings in ptloom end at a NUL */

	check_text(s, n, 0);
	check_text(s, n, ESC_LINES);
	char out[4096];

	if (n < sizeof(out)) {
		size_t k = esc_text(out, sizeof(out), s, ESC_LINES);
		int same = k == n && !memcmp(out, s, n);

		if (!!esc_is_clean(s) != same)
			abort();
	}

	size_t jn, xn;
	char *j = to_mem(esc_json, s, &jn);

	if (jn < 2 || j[0] != '"' || j[jn - 1] != '"')
		abort();
	check_utf8(j, jn, json_bad);
	free(j);
	char *x = to_mem(esc_xml, s, &xn);

	check_utf8(x, xn, xml_bad);
	free(x);

	/* show's script form of whatever schedule this is */
	struct schedule sch;
	char err[256];

	if (!schedule_decode(data, size, &sch, err, sizeof(err))) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		if (m) {
			schedule_write_script(m, &sch);
			fclose(m);
			check_utf8(buf, len, term_bad);
			free(buf);
		}
	}
	schedule_free(&sch);
	free(s);
	return 0;
}
