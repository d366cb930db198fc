/*
 * Escaping of untrusted bytes: everything a traced program or a schedule
 * file supplies (names, argv, environment, messages, locations, symbol and
 * thread names, program output) passes through here before it reaches a
 * terminal or a report.
 *
 *   - text (terminal, Markdown): control characters (C0, DEL, C1), the
 *     Unicode bidirectional controls and every byte that is not part of
 *     valid UTF-8 become visible escapes (\e, \x9b, \u202e), so a crafted
 *     string cannot move the cursor, clear the screen, set the title or
 *     fake a line.  ESC_LINES keeps newlines and tabs (an output tail);
 *     without it they are escaped too (one value, one line).
 *   - JSON: valid UTF-8 always; an invalid byte becomes U+FFFD.
 *   - XML: well-formed XML 1.0 always; characters XML forbids and invalid
 *     bytes become U+FFFD.
 *
 * Only complete, strictly valid UTF-8 sequences (no overlong forms, no
 * surrogates, nothing above U+10FFFF) pass unchanged.
 */
#ifndef PTLOOM_ESCAPE_H
#define PTLOOM_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
	ESC_LINES = 1,	/* keep \n and \t (multi-line text) */
};

/* Length (1..4) of the valid UTF-8 sequence at p (n bytes available) and
 * its code point in *cp; 0 if the byte at p does not start one. */
int utf8_next(const unsigned char *p, size_t n, uint32_t *cp);

/* Escapes n bytes of s into buf (always NUL-terminated when len > 0,
 * truncated at a character boundary).  Returns the length the whole
 * escaped text needs, like snprintf. */
size_t esc_text_n(char *buf, size_t len, const char *s, size_t n,
		  unsigned flags);
size_t esc_text(char *buf, size_t len, const char *s, unsigned flags);
/* The same, written to f (no length limit).  NULL prints nothing. */
void esc_fputs(FILE *f, const char *s, unsigned flags);
void esc_fwrite(FILE *f, const char *s, size_t n, unsigned flags);
/* The text escaped, in one of 8 rotating static buffers of 2 KiB (for
 * printf arguments; longer text is truncated: use esc_fputs for that).
 * NULL gives "". */
const char *esc(const char *s);

/* A JSON string literal with quotes ("null" for NULL). */
void esc_json(FILE *f, const char *s);
/* XML character data or attribute value (quotes and newlines escaped
 * too, so it fits either). */
void esc_xml(FILE *f, const char *s);
/* Is s valid UTF-8 without control characters other than \n and \t? */
int esc_is_clean(const char *s);

#endif
