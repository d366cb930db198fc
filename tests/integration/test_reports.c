/*
 * CI reports (JUnit, SARIF, GitHub) and hostile program output escaped in
 * every one.
 */
#include "common.h"

TestSuite(reports, .init = setup, .fini = teardown, .timeout = 180);

/* Could a terminal act on any of s?  Fails naming the first byte that is
 * a control character (other than \n and \t), a C1 control or a bidi
 * override, or not valid UTF-8. */
static void assert_terminal_safe(const char *s, const char *what)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; p[i];) {
		unsigned c = p[i];
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2
				: c >= 0xe0 && c <= 0xef ? 3
				: c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		bool ok = n > 0;

		for (size_t k = 1; ok && k < n; k++)
			ok = (p[i + k] & 0xc0) == 0x80;
		if (ok && n == 1)
			ok = (c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t';
		if (ok && n == 2)
			ok = !(c == 0xc2 && p[i + 1] < 0xa0);
		if (ok && n == 3)
			ok = !(c == 0xe0 && p[i + 1] < 0xa0) &&
			     !(c == 0xed && p[i + 1] >= 0xa0) &&
			     !(c == 0xe2 && p[i + 1] == 0x80 &&
			       p[i + 2] >= 0xa8 && p[i + 2] <= 0xae) &&
			     !(c == 0xe2 && p[i + 1] == 0x81 &&
			       p[i + 2] >= 0xa6 && p[i + 2] <= 0xa9);
		cr_assert(ok, "%s: unsafe byte 0x%02x at offset %zu:\n%s",
			  what, c, i, s);
		i += n;
	}
	for (const char *l = s; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		cr_assert(strncmp(l, "ptloom: PASS", 12),
			  "%s: a fake PASS line:\n%s", what, s);
}

Test(reports, hostile_program_output_is_escaped_everywhere)
{
	const char *prog = target("hostile_output");
	struct res r = RUN(prog, "--seed", SEED);

	assert_exit(r, 1);
	assert_terminal_safe(r.out, "run's stdout");
	assert_terminal_safe(r.err, "run's stderr");
	assert_contains(r.out, "\\e[2J", "run's stdout");
	assert_json_loads(in_tmp("report.json"));
	char *j = report(), *sched = strdup(json_get(j, "minimized_file"));

	free(j);
	res_free(&r);

	/* the other reports */
	r = PTL("run", "--seed", SEED, "-o", in_tmp("out"), "--report",
		in_tmp("r.md"), "--report-format", "markdown", "--", prog);
	assert_exit(r, 1);
	char *md = slurp(in_tmp("r.md"));

	assert_terminal_safe(md, "markdown report");
	free(md);
	res_free(&r);
	r = PTL("run", "--seed", SEED, "-o", in_tmp("out"), "--report",
		in_tmp("r.xml"), "--report-format", "junit", "--", prog);
	assert_exit(r, 1);
	res_free(&r);
	if (access("/usr/bin/xmllint", X_OK) == 0) {
		char *argv[] = { "/usr/bin/xmllint", "--noout",
				 in_tmp("r.xml"), NULL };

		r = run_argv(argv, NULL, 60);
		cr_assert(r.code == 0, "xmllint refuses the junit report:\n"
				       "%s\n%s", r.err, slurp(in_tmp("r.xml")));
		res_free(&r);
	} else {
		skip_note("skipping the xmllint check: no /usr/bin/xmllint "
			  "(scripts/setup.sh installs libxml2-utils)");
	}

	/* replay, with its "recorded:" line, and its report */
	r = PTL("replay", "--report", in_tmp("replay.json"), sched, "--",
		prog);
	assert_exit(r, 1);
	assert_terminal_safe(r.out, "replay's stdout");
	assert_json_loads(in_tmp("replay.json"));
	res_free(&r);

	/* a file with hostile strings everywhere: show, replay */
	char *evil = in_tmp("hostile.pb");

	craft(sched, evil, "hostile", NULL);
	static const char *const fmts[] = { "text", "markdown", "script" };
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		r = PTL("show", "--format", fmts[i], evil);
		assert_exit(r, 0);
		assert_terminal_safe(r.out, fmts[i]);
		res_free(&r);
	}
	r = PTL("show", "--format", "json", evil);
	assert_exit(r, 0);
	spit(in_tmp("show.json"), r.out);
	assert_json_loads(in_tmp("show.json"));
	res_free(&r);
	r = PTL("replay", "--trust-env", evil, "--", prog);
	assert_terminal_safe(r.out, "replay of a hostile file");
	assert_terminal_safe(r.err, "replay of a hostile file");
	assert_contains(r.out, "recorded: ", "replay");
	res_free(&r);
	free(sched);
}

/* JUnit for strict consumers: validated against tests/corpus/junit.xsd. */
static void junit_validates(const char *xml, const char *want_child)
{
	char cmd[3 * PATH_MAX];
	char *text = slurp(xml);

	assert_contains(text, "timestamp=\"", "the JUnit report");
	assert_contains(text, "hostname=\"", "the JUnit report");
	if (want_child)
		assert_contains(text, want_child, "the JUnit report");
	snprintf(cmd, sizeof(cmd), "xmllint --noout --schema '%s/junit.xsd' "
		 "'%s'", env_or("PTLOOM_CORPUS", "tests/corpus"), xml);
	struct res r = sh(cmd);

	assert_exit(r, 0);
	res_free(&r);
	free(text);
}

Test(reports, junit_report_validates)
{
	if (system("command -v xmllint >/dev/null 2>&1")) {
		skip_note("xmllint missing (scripts/setup.sh installs it): "
			  "JUnit schema check skipped");
		cr_skip_test("xmllint is not installed");
	}
	const char *xml = in_tmp("junit.xml");
	struct res r = PTL("run", "-o", in_tmp("out"), "--seed", SEED,
			   "--report", xml, "--report-format", "junit", "--",
			   example("bank"));

	assert_exit(r, 1);
	junit_validates(xml, "<failure type=\"crash\"");
	res_free(&r);
	r = PTL("run", "-o", in_tmp("out"), "-n", "3", "--seed", SEED,
		"--report", xml, "--report-format", "junit", "--",
		example("bank_fixed"));
	assert_exit(r, 3);
	junit_validates(xml, "<skipped message=\"INCOMPLETE");
	res_free(&r);
	r = PTL("run", "-o", in_tmp("out"), "-p", "1", "--seed", SEED,
		"--report", xml, "--report-format", "junit", "--",
		example("bank_fixed"));
	assert_exit(r, 0);
	junit_validates(xml, "failures=\"0\" errors=\"0\" skipped=\"0\"");
	res_free(&r);
}

/* python3 checks a SARIF file's shape: version 2.1.0, one run of the
 * tool "ptloom", `results` results of `level`, the first at file:line. */
static void sarif_shape(const char *path, int results, const char *level,
			const char *file, int line)
{
	char cmd[4 * PATH_MAX];

	snprintf(cmd, sizeof(cmd),
		 "python3 - '%s' %d '%s' '%s' %d <<'EOF'\n"
		 "import json, sys\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "n, level, file, line = int(sys.argv[2]), sys.argv[3], "
		 "sys.argv[4], int(sys.argv[5])\n"
		 "assert d['version'] == '2.1.0', d['version']\n"
		 "assert 'sarif-2.1.0' in d['$schema']\n"
		 "assert len(d['runs']) == 1\n"
		 "run = d['runs'][0]\n"
		 "assert run['tool']['driver']['name'] == 'ptloom'\n"
		 "ids = [r['id'] for r in run['tool']['driver']['rules']]\n"
		 "res = run['results']\n"
		 "assert len(res) == n, res\n"
		 "for r in res:\n"
		 "    assert r['level'] == level, r\n"
		 "    assert r['ruleId'] in ids, (r['ruleId'], ids)\n"
		 "    assert r['message']['text'].startswith('ptloom: ')\n"
		 "if file:\n"
		 "    loc = res[0]['locations'][0]['physicalLocation']\n"
		 "    assert loc['artifactLocation']['uri'] == file, loc\n"
		 "    assert loc['region']['startLine'] == line, loc\n"
		 "EOF",
		 path, results, level, file, line);
	struct res r = sh(cmd);

	cr_assert(r.code == 0, "SARIF shape of %s:\n%s%s\n%s", path, r.out,
		  r.err, slurp(path));
	res_free(&r);
}

/* --report-format sarif: one result per failure at its source line, a
 * note for INCOMPLETE, no result for a pass. */
Test(reports, sarif_report_shape)
{
	if (system("command -v python3 >/dev/null 2>&1")) {
		skip_note("python3 missing: SARIF shape check skipped");
		cr_skip_test("python3 is not installed");
	}
	const char *out = in_tmp("report.sarif");
	struct res r = PTL("run", "-o", in_tmp("out"), "--seed", SEED,
			   "--report", out, "--report-format", "sarif", "--",
			   "sh", "-c", target("fork_race"));

	assert_exit(r, 1);
	sarif_shape(out, 1, "error", "fork_race.c", 49);
	res_free(&r);
	r = PTL("run", "-o", in_tmp("out"), "-n", "3", "--seed", SEED,
		"--report", out, "--report-format", "sarif", "--",
		example("bank_fixed"));
	assert_exit(r, 3);
	sarif_shape(out, 1, "note", "", 0);
	res_free(&r);
	r = PTL("run", "-o", in_tmp("out"), "-p", "1", "--seed", SEED,
		"--report", out, "--report-format", "sarif", "--",
		example("bank_fixed"));
	assert_exit(r, 0);
	sarif_shape(out, 0, "error", "", 0);
	res_free(&r);
}

Test(reports, github_actions_summary_and_annotation)
{
	char cmd[4 * PATH_MAX];
	const char *root = env_or("PTLOOM_SOURCE_ROOT", ".");

	snprintf(cmd, sizeof(cmd), "GITHUB_ACTIONS=true "
		 "GITHUB_STEP_SUMMARY='%s' GITHUB_WORKSPACE='%s' ptloom run "
		 "-o '%s' --seed " SEED " -- '%s'", in_tmp("summary.md"), root,
		 in_tmp("out"), example("bank"));
	struct res r = sh(cmd);

	assert_exit(r, 1);
	assert_contains(r.out, "::error file=examples/bank.c,line=46,"
			       "title=ptloom::FAIL crash SIGABRT",
			"the annotation");
	char *md = slurp(in_tmp("summary.md"));

	assert_contains(md, "## ptloom run: fail", "the job summary");
	assert_contains(md, "```mermaid\nsequenceDiagram", "the job summary");
	assert_contains(md, "ptloom replay ", "the job summary");
	assert_contains(md, "-minimized.pb", "the job summary");
	free(md);
	/* the printed replay command, in CI: the same annotation and a
	 * summary of its own */
	char *line = line_with(r.out, "replay: ");

	cr_assert_not_null(line, "no replay: line:\n%s", r.out);
	snprintf(cmd, sizeof(cmd), "GITHUB_ACTIONS=true "
		 "GITHUB_STEP_SUMMARY='%s' GITHUB_WORKSPACE='%s' %s",
		 in_tmp("replay.md"), root, line + strlen("replay: "));
	free(line);
	res_free(&r);
	r = sh(cmd);
	assert_exit(r, 1);
	assert_contains(r.out, "::error file=examples/bank.c,line=46,"
			       "title=ptloom::FAIL crash SIGABRT",
			"the replay's annotation");
	md = slurp(in_tmp("replay.md"));
	assert_contains(md, "## ptloom replay: fail", "the replay's summary");
	assert_contains(md, "```mermaid\nsequenceDiagram",
			"the replay's summary");
	free(md);
	res_free(&r);
	/* INCOMPLETE is a warning, appended to the same summary */
	snprintf(cmd, sizeof(cmd), "GITHUB_ACTIONS=true "
		 "GITHUB_STEP_SUMMARY='%s' ptloom run -o '%s' -n 3 --seed "
		 SEED " -- '%s'", in_tmp("summary.md"), in_tmp("out"),
		 example("bank_fixed"));
	r = sh(cmd);
	assert_exit(r, 3);
	assert_contains(r.out, "::warning title=ptloom::INCOMPLETE",
			"the annotation");
	md = slurp(in_tmp("summary.md"));
	assert_contains(md, "## ptloom run: incomplete", "the job summary");
	assert_contains(md, "## ptloom run: fail", "the earlier summary");
	free(md);
	res_free(&r);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every code description in a report's strings ("fn at file.c:12"), one
 * per line, sorted. */
static char *descriptions(const char *json)
{
	size_t n = 0, cap = 0;
	char *out = NULL, **v = NULL;
	size_t nv = 0, capv = 0;

	for (const char *p = strchr(json, '"'); p; p = strchr(p, '"')) {
		const char *q = ++p;

		while (*q && *q != '"')
			q += *q == '\\' && q[1] ? 2 : 1;
		if (!*q)
			break;
		if (memmem(p, (size_t)(q - p), " at ", 4)) {
			if (nv == capv) {
				capv = capv ? 2 * capv : 64;
				v = realloc(v, capv * sizeof(*v));
				cr_assert_not_null(v);
			}
			v[nv++] = strndup(p, (size_t)(q - p));
		}
		p = q + 1;
	}
	qsort(v, nv, sizeof(*v), cmp_str);
	append(&out, &n, &cap, "", 0);
	for (size_t i = 0; i < nv; i++) {
		append(&out, &n, &cap, v[i], strlen(v[i]));
		append(&out, &n, &cap, "\n", 1);
		free(v[i]);
	}
	free(v);
	return out;
}

/* A pc's function, found through the per-CU index (analysis/symbols.c),
 * is the one libdw's walk from the CU names: the same descriptions in
 * the reports of programs at -O2 (inlined code) and of C++. */
Test(reports, code_is_named_alike_with_and_without_the_cu_index)
{
	static const char *const names[] = { "bank_nolock_O2", "wsq_O2",
					     "plain_inc_O2", "cpp_mutex" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char *d[2];

		for (int k = 0; k < 2; k++) {
			char *argv[] = { (char *)ptloom(), "run", "-s",
					 "random", "-n", "4", "--seed", "2",
					 "--no-minimize", "--report",
					 in_tmp("names.json"), "--",
					 (char *)target(names[i]), NULL };
			struct res r = run_argv(argv,
						k ? "PTLOOM_NO_CU_INDEX=1"
						  : NULL,
						CMD_TIMEOUT);
			char *j = slurp(in_tmp("names.json"));

			d[k] = descriptions(j);
			free(j);
			res_free(&r);
		}
		cr_expect(d[0][0] != '\0', "%s: no description in its report",
			  names[i]);
		cr_expect_str_eq(d[0], d[1], "%s: other names with the index",
				 names[i]);
		free(d[0]);
		free(d[1]);
	}
}

/* Where no debug information names the code, a C++ symbol is shown as gdb
 * shows it (libstdc++'s demangler), not mangled. */
Test(reports, cpp_symbols_are_named_as_gdb_names_them)
{
	char *argv[] = { (char *)ptloom(), "run", "-s", "random", "-n", "3",
			 "--seed", "1", "--no-minimize", "--report",
			 in_tmp("cpp.json"), "--",
			 (char *)target("cpp_mutex_nodebug"), NULL };
	struct res r = run_argv(argv, NULL, CMD_TIMEOUT);
	char *j = slurp(in_tmp("cpp.json"));

	cr_expect(strstr(j, "main::{lambda()#1}") != NULL,
		  "no demangled lambda in the report:\n%s", j);
	cr_expect(strstr(j, "_ZNSt6thread") == NULL,
		  "a mangled name in the report:\n%s", j);
	free(j);
	res_free(&r);
}

/*
 * A shell's subshell runs the shell's code until it execs a command; at
 * the exec that image is gone.  Its accesses are named from the shell,
 * which still holds the image it was copied from, and an address never
 * carries ptloom's image tag (bits 48 and up) into a report.
 */
Test(reports, code_of_a_fork_before_its_exec_is_named)
{
	char *argv[] = { (char *)ptloom(), "run", "-s", "random", "-n", "3",
			 "--seed", "1", "--report", in_tmp("sh.json"), "--",
			 "/bin/bash", "-c",
			 "diff <(seq 1 100) <(seq 1 100); true", NULL };
	struct res r = run_argv(argv, NULL, CMD_TIMEOUT);

	assert_exit(r, 0);
	char *j = slurp(in_tmp("sh.json"));
	int named = 0;

	for (const char *p = j; (p = strstr(p, "\"a\": \"")); p += 6) {
		const char *v = p + 6;
		size_t hex = 0;

		if (!strncmp(v, "0x", 2))
			hex = strspn(v + 2, "0123456789abcdef");
		cr_expect(hex <= 12, "a tagged address in the report:\n%s", j);
		named += strstr(v, "(libc.so.6") && strstr(v, "(libc.so.6") <
							   strchr(v, '"');
	}
	cr_expect(named >= 3, "pairs not named in libc:\n%s", j);
	free(j);
	res_free(&r);
}
