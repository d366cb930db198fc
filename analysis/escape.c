/*
 * Escaping of untrusted bytes for terminals and reports: see escape.h.
 */
#include <string.h>
#include "escape.h"

int utf8_next(const unsigned char *p, size_t n, uint32_t *cp)
{
	uint32_t c;
	int len;

	if (!n)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		c = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		c = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		c = p[0] & 0x07;
	} else {
		return 0; /* continuation byte, 0xc0/0xc1 or 0xf5.. */
	}
	if (n < (size_t)len)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0; /* overlong, beyond Unicode, or a surrogate */
	*cp = c;
	return len;
}

/* Code points that change how a terminal shows what follows. */
static int is_bidi_or_sep(uint32_t c)
{
	return c == 0x061c || c == 0x200e || c == 0x200f ||
	       (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/* An output sink: a buffer (with room accounting) or a FILE. */
struct sink {
	FILE *f;
	char *buf;
	size_t len, off, need;
	int full;
};

static void put(struct sink *k, const char *s, size_t n)
{
	k->need += n;
	if (k->f) {
		fwrite(s, 1, n, k->f);
		return;
	}
	if (k->full || k->off + n + 1 > k->len) {
		k->full = 1; /* never split a character or an escape */
		return;
	}
	memcpy(k->buf + k->off, s, n);
	k->off += n;
}

static void escape(struct sink *k, const char *str, size_t n, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)str;
	const unsigned char *end = p + n;
	char e[16];

	while (p < end) {
		uint32_t c;
		int m = utf8_next(p, (size_t)(end - p), &c);

		if (!m) {
			snprintf(e, sizeof(e), "\\x%02x", *p);
			put(k, e, 4);
			p++;
			continue;
		}
		if (c >= 0x20 && c != 0x7f && !(c >= 0x80 && c < 0xa0) &&
		    !is_bidi_or_sep(c)) {
			put(k, (const char *)p, (size_t)m);
		} else if ((c == '\n' || c == '\t') && (flags & ESC_LINES)) {
			put(k, (const char *)p, 1);
		} else if (c == '\n') {
			put(k, "\\n", 2);
		} else if (c == '\t') {
			put(k, "\\t", 2);
		} else if (c == '\r') {
			put(k, "\\r", 2);
		} else if (c == 0x1b) {
			put(k, "\\e", 2);
		} else if (c < 0x80) {
			snprintf(e, sizeof(e), "\\x%02x", (unsigned)c);
			put(k, e, 4);
		} else {
			snprintf(e, sizeof(e), "\\u%04x", (unsigned)c);
			put(k, e, strlen(e));
		}
		p += m;
	}
}

size_t esc_text_n(char *buf, size_t len, const char *s, size_t n,
		  unsigned flags)
{
	struct sink k = { .buf = buf, .len = len };

	if (s)
		escape(&k, s, n, flags);
	if (len)
		buf[k.off] = 0;
	return k.need;
}

size_t esc_text(char *buf, size_t len, const char *s, unsigned flags)
{
	return esc_text_n(buf, len, s, s ? strlen(s) : 0, flags);
}

void esc_fwrite(FILE *f, const char *s, size_t n, unsigned flags)
{
	struct sink k = { .f = f };

	if (s)
		escape(&k, s, n, flags);
}

void esc_fputs(FILE *f, const char *s, unsigned flags)
{
	if (s)
		esc_fwrite(f, s, strlen(s), flags);
}

const char *esc(const char *s)
{
	static char bufs[8][2048];
	static unsigned k;
	char *b = bufs[k++ % 8];

	esc_text(b, sizeof(bufs[0]), s ? s : "", 0);
	return b;
}

void esc_json(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	while (n) {
		uint32_t c;
		int m = utf8_next(p, n, &c);

		if (!m) {
			fputs("\\ufffd", f); /* not UTF-8: JSON cannot say it */
			p++;
			n--;
			continue;
		}
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) ||
			    is_bidi_or_sep(c))
				fprintf(f, "\\u%04x", (unsigned)c);
			else
				fwrite(p, 1, (size_t)m, f);
		}
		p += m;
		n -= (size_t)m;
	}
	fputc('"', f);
}

void esc_xml(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0;

	while (n) {
		uint32_t c;
		int m = utf8_next(p, n, &c);

		if (!m) {
			fputs("\xef\xbf\xbd", f); /* U+FFFD */
			p++;
			n--;
			continue;
		}
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\t': fputs("&#9;", f); break;
		case '\r': fputs("&#13;", f); break;
		default:
			/* XML 1.0 Char: no other C0, no U+FFFE/FFFF */
			if (c < 0x20 || c == 0xfffe || c == 0xffff)
				fputs("\xef\xbf\xbd", f);
			else if (c == 0x7f || (c >= 0x80 && c < 0xa0))
				fprintf(f, "&#%u;", (unsigned)c);
			else
				fwrite(p, 1, (size_t)m, f);
		}
		p += m;
		n -= (size_t)m;
	}
}

int esc_is_clean(const char *s)
{
	char tmp[1];
	size_t n = strlen(s);

	return esc_text_n(tmp, 0, s, n, ESC_LINES) == n;
}
