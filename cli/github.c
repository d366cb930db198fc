/*
 * GitHub Actions: when GITHUB_ACTIONS=true, the outcome of a command is
 * also told the way a workflow shows it (docs/ci.md):
 *
 *   - a Markdown job summary appended to $GITHUB_STEP_SUMMARY: the verdict,
 *     the minimised trace as a Mermaid sequence diagram, the replay command
 *     and where the schedule files are;
 *   - a workflow command on stdout, `::error file=PATH,line=N,title=ptloom::`
 *     at the failing thread's source line (PATH relative to
 *     $GITHUB_WORKSPACE when it is below it), `::warning` for INCOMPLETE.
 *
 * See tests/integration (issue9, github_actions_summary_and_annotation).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../analysis/report.h"
#include "cli.h"

bool github_enabled(void)
{
	const char *v = getenv("GITHUB_ACTIONS");

	return v && !strcmp(v, "true");
}

/* A workflow command's data: %, CR and LF escaped; in properties also
 * ':' and ','. */
static void gh_escape(FILE *f, const char *s, bool property)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '%')
			fputs("%25", f);
		else if (c == '\r')
			fputs("%0D", f);
		else if (c == '\n')
			fputs("%0A", f);
		else if (property && c == ':')
			fputs("%3A", f);
		else if (property && c == ',')
			fputs("%2C", f);
		else if (c < 0x20 || c == 0x7f)
			fputc('?', f);
		else
			fputc(c, f);
	}
}

/* Find a file named base below dir (depth-first, a few levels, no hidden
 * or ptloom directories); its path into out. */
static bool find_below(const char *dir, const char *base, int depth,
		       char *out, size_t len)
{
	DIR *d;
	struct dirent *e;
	bool found = false;

	if (depth > 6 || !(d = opendir(dir)))
		return false;
	while (!found && (e = readdir(d))) {
		char path[PATH_MAX];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &sb))
			continue;
		if (S_ISREG(sb.st_mode) && !strcmp(e->d_name, base)) {
			snprintf(out, len, "%s", path);
			found = true;
		} else if (S_ISDIR(sb.st_mode)) {
			found = find_below(path, base, depth + 1, out, len);
		}
	}
	closedir(d);
	return found;
}

/* The file of a location as the workflow names it. */
static bool annotation_path(const char *file, char *out, size_t len)
{
	const char *ws = getenv("GITHUB_WORKSPACE");
	char root[PATH_MAX], found[PATH_MAX], real[PATH_MAX];
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;

	if (!realpath(ws && *ws ? ws : ".", root))
		return false;
	if (access(file, R_OK) == 0 && realpath(file, real))
		snprintf(found, sizeof(found), "%s", real);
	else if (!find_below(root, base, 0, found, sizeof(found)))
		return false;
	size_t n = strlen(root);

	if (!strncmp(found, root, n) && found[n] == '/')
		snprintf(out, len, "%s", found + n + 1);
	else
		snprintf(out, len, "%s", found);
	return true;
}

static void annotate(const struct report *r)
{
	const char *sum = r->summary ? r->summary : "";
	char file[PATH_MAX], path[PATH_MAX];
	int line = 0;

	if (!strncmp(sum, "ptloom: ", 8))
		sum += 8;
	if (!strcmp(r->verdict, "fail") || !strcmp(r->verdict, "diverged")) {
		fputs("::error ", stdout);
		if (r->location && report_source_line(r->location, file,
						      sizeof(file), &line) &&
		    annotation_path(file, path, sizeof(path))) {
			fputs("file=", stdout);
			gh_escape(stdout, path, true);
			printf(",line=%d,", line);
		}
		fputs("title=ptloom::", stdout);
		gh_escape(stdout, sum, false);
		if (r->replay_command) {
			fputs("%0Areplay: ", stdout);
			gh_escape(stdout, r->replay_command, false);
		}
		fputc('\n', stdout);
	} else if (!strcmp(r->verdict, "incomplete")) {
		fputs("::warning title=ptloom::", stdout);
		gh_escape(stdout, sum, false);
		fputc('\n', stdout);
	}
	for (size_t i = 0; i < r->nwarnings; i++) {
		const struct report_warning *w = &r->warnings[i];

		fputs("::warning ", stdout);
		if (w->location && report_source_line(w->location, file,
						      sizeof(file), &line) &&
		    annotation_path(file, path, sizeof(path))) {
			fputs("file=", stdout);
			gh_escape(stdout, path, true);
			printf(",line=%d,", line);
		}
		fputs("title=ptloom::", stdout);
		gh_escape(stdout, w->message, false);
		if (w->replay_command) {
			fputs("%0Areplay: ", stdout);
			gh_escape(stdout, w->replay_command, false);
		}
		fputc('\n', stdout);
	}
	fflush(stdout);
}

static void md_code(FILE *f, const char *s)
{
	fputs("```\n", f);
	for (; s && *s; s++)
		fputc(*s == '`' ? '\'' : *s, f);
	fputs("\n```\n", f);
}

static void summary(const struct report *r)
{
	const char *path = getenv("GITHUB_STEP_SUMMARY");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "## ptloom %s: %s\n\n", r->command ? r->command : "run",
		r->verdict);
	md_code(f, r->summary);
	if (r->ntests) {
		fputs("\n| test | verdict |\n|---|---|\n", f);
		for (int i = 0; i < r->ntests; i++) {
			fputs("| ", f);
			gh_escape(f, r->tests[i].name, false);
			fprintf(f, " | %s |\n", r->tests[i].verdict);
		}
		for (int i = 0; i < r->ntests; i++)
			if (r->tests[i].replay_command) {
				fputs("\nReplay ", f);
				gh_escape(f, r->tests[i].name, false);
				fputs(" locally:\n\n", f);
				md_code(f, r->tests[i].replay_command);
			}
	}
	for (size_t i = 0; i < r->nwarnings; i++) {
		fprintf(f, "\n**Warning:** ");
		md_code(f, r->warnings[i].message);
		if (r->warnings[i].replay_command)
			md_code(f, r->warnings[i].replay_command);
	}
	if (r->message && r->message[0] && r->has_failure) {
		fputs("\n", f);
		md_code(f, r->message);
	}
	if (r->replay_command) {
		fputs("\nReplay it locally (after downloading the schedule "
		      "files):\n\n", f);
		md_code(f, r->replay_command);
	}
	if (r->schedule_file || r->minimized_file) {
		fputs("\nSchedule files:", f);
		if (r->schedule_file)
			fprintf(f, " `%s`", r->schedule_file);
		if (r->minimized_file)
			fprintf(f, " `%s`", r->minimized_file);
		fputs("\n\n", f);
	}
	const char *trace = r->minimized_file ? r->minimized_file
					      : r->schedule_file;

	if (trace) {
		fputs("<details open><summary>The failing schedule</summary>"
		      "\n\n", f);
		show_markdown_path(f, trace);
		fputs("\n</details>\n", f);
	}
	fputs("\n", f);
	fclose(f);
}

void github_report(const struct report *r)
{
	if (!github_enabled() || !r || !r->verdict)
		return;
	summary(r);
	annotate(r);
}
