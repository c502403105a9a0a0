/* Writes every program's bash, zsh and fish completion from the option tables the program
 * itself parses (through the runner's own walk of them), so that a completion offers each
 * option the program has, no other, with the values it takes: --from the formats the
 * library reads, --status the states the filter knows, a table's choices, a file or a
 * directory where the argument names one.
 *
 * usage: generate OUTDIR
 * writes OUTDIR/NAME (bash), OUTDIR/_NAME (zsh) and OUTDIR/NAME.fish for every program. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "programs.h"
#include "common/run.h"

/* What an option's value is, as far as completing it goes. */
enum kind {
	FLAG,  /* no value */
	TEXT,  /* free text or a number: nothing to offer */
	PATH,  /* a file */
	DIR,   /* a directory */
	WORDS, /* one of words */
	LIST,  /* a comma-separated list of words */
};

struct copt {
	const char *name;
	char short_name;
	const char *arg;
	const char *help;
	bool repeatable;
	enum kind kind;
	char words[1280]; /* WORDS and LIST: space-separated */
	const struct tc_output *outputs; /* --format: the words' descriptions */
};

struct cprog {
	const struct tc_prog *p;
	struct copt opts[MAX_OPTS + 1];
	size_t n;
	char help_format[128];
};

static const struct tc_prog *const all_programs[] = { TC_PROGRAMS };

/* choices as words: A-B, a range of whole numbers, becomes each of them. */
static void choice_words(const char *choices, char *buf, size_t cap)
{
	unsigned lo, hi;
	int end = 0;
	if (sscanf(choices, "%u-%u%n", &lo, &hi, &end) == 2 && !choices[end] && lo <= hi) {
		buf[0] = 0;
		for (unsigned v = lo; v <= hi; v++) {
			size_t l = strlen(buf);
			snprintf(buf + l, cap - l, "%s%u", l ? " " : "", v);
		}
	} else {
		snprintf(buf, cap, "%s", choices);
	}
}

/* The runner takes --from and --status itself, by name: so does this. */
static void classify(struct copt *c, const struct tc_opt *o)
{
	*c = (struct copt){ o->name, o->short_name, o->arg, o->help, o->repeatable, TEXT, "", NULL };
	if (!o->arg) {
		c->kind = FLAG;
	} else if (!strcmp(o->name, "from")) {
		char formats[1024];
		tc_readable_formats(formats, sizeof(formats));
		snprintf(c->words, sizeof(c->words), "%s auto help", formats);
		c->kind = WORDS;
	} else if (!strcmp(o->name, "status")) {
		tc_status_words(c->words, sizeof(c->words));
		c->kind = LIST;
	} else if (o->choices) {
		choice_words(o->choices, c->words, sizeof(c->words));
		c->kind = WORDS;
	} else if (!strcmp(o->arg, "FILE")) {
		c->kind = PATH;
	} else if (!strcmp(o->arg, "DIR")) {
		c->kind = DIR;
	}
}

/* The program's options in --help order: --format first when there is a choice of outputs. */
static void describe(struct cprog *c, const struct tc_prog *p)
{
	c->p = p;
	c->n = 0;
	if (p->outputs[1].name) {
		struct copt *f = &c->opts[c->n++];
		snprintf(c->help_format, sizeof(c->help_format), "output format (default %s)",
			 p->outputs[0].name);
		*f = (struct copt){ "format", 'F', "FMT", c->help_format, false, WORDS, "",
				    p->outputs };
		for (const struct tc_output *o = p->outputs; o->name; o++) {
			size_t l = strlen(f->words);
			snprintf(f->words + l, sizeof(f->words) - l, "%s%s", l ? " " : "", o->name);
		}
	}
	const struct tc_opt *all[MAX_OPTS];
	const struct tc_output *owner[MAX_OPTS];
	size_t n = tc_gather_opts(p, all, owner, MAX_OPTS);
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < c->n; j++)
			seen |= !strcmp(c->opts[j].name, all[i]->name);
		if (!seen) /* getopt takes the first of two alike */
			classify(&c->opts[c->n++], all[i]);
	}
}

/* s inside '...' for fish, where \ and ' are escaped. */
static void put_fish(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* An option's description inside _arguments' [...], itself inside '...'. */
static void put_zsh_help(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (strchr("[]:\\", *s))
			fputc('\\', f);
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
}

static void bash_label(FILE *f, const struct copt *o)
{
	if (o->short_name)
		fprintf(f, "\t-%c | --%s)\n", o->short_name, o->name);
	else
		fprintf(f, "\t--%s)\n", o->name);
}

/* The case of an option that takes a value: what to offer after it. */
static void bash_value(FILE *f, const struct copt *o)
{
	bash_label(f, o);
	switch (o->kind) {
	case PATH:
	case DIR:
		fprintf(f, "\t\tcompopt -o filenames 2>/dev/null\n"
			   "\t\tmapfile -t COMPREPLY < <(compgen -%c -- \"$cur\")\n",
			o->kind == PATH ? 'f' : 'd');
		break;
	case WORDS:
		fprintf(f, "\t\tmapfile -t COMPREPLY < <(compgen -W '%s' -- \"$cur\")\n", o->words);
		break;
	case LIST:
		fprintf(f, "\t\t# a comma-separated list: complete its last word\n"
			   "\t\tlocal head=\n"
			   "\t\t[[ $cur == *,* ]] && head=${cur%%,*},\n"
			   "\t\tcompopt -o nospace 2>/dev/null\n"
			   "\t\tmapfile -t COMPREPLY < <(compgen -P \"$head\" -W '%s' -- \"${cur##*,}\")\n",
			o->words);
		break;
	default:
		break;
	}
	fprintf(f, "\t\treturn\n\t\t;;\n");
}

/* One case for every option whose value is its own (a number, a name): nothing to offer. */
static void bash_texts(FILE *f, const struct cprog *c)
{
	bool any = false;
	for (size_t i = 0; i < c->n; i++) {
		const struct copt *o = &c->opts[i];
		if (o->kind != TEXT)
			continue;
		fputs(any ? " | " : "\t", f);
		if (o->short_name)
			fprintf(f, "-%c | ", o->short_name);
		fprintf(f, "--%s", o->name);
		any = true;
	}
	if (any)
		fputs(")\n\t\treturn\n\t\t;;\n", f);
}

static void write_bash(FILE *f, const struct cprog *c)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "_%s", c->p->name);
	for (char *s = fn; *s; s++)
		if (!isalnum((unsigned char)*s))
			*s = '_';
	fprintf(f, "# bash completion for %s(1), generated from its option table by "
		   "completions/generate.c\n", c->p->name);
	fprintf(f, "%s() {\n"
		   "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
		   "\t# --option=value: bash splits the word at '=' (COMP_WORDBREAKS)\n"
		   "\tif [[ $cur == = ]]; then\n"
		   "\t\tcur=\n"
		   "\telif [[ $prev == = ]] && ((COMP_CWORD > 1)); then\n"
		   "\t\tprev=${COMP_WORDS[COMP_CWORD-2]}\n"
		   "\tfi\n"
		   "\tcase $prev in\n", fn);
	for (size_t i = 0; i < c->n; i++)
		if (c->opts[i].kind != FLAG && c->opts[i].kind != TEXT)
			bash_value(f, &c->opts[i]);
	bash_texts(f, c);
	fprintf(f, "\tesac\n\tif [[ $cur == -* ]]; then\n"
		   "\t\tmapfile -t COMPREPLY < <(compgen -W '");
	for (size_t i = 0; i < c->n; i++)
		fprintf(f, "%s--%s", i ? " " : "", c->opts[i].name);
	fprintf(f, "' -- \"$cur\")\n\t\treturn\n\tfi\n"
		   "\tcompopt -o filenames 2>/dev/null\n"
		   "\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
		   "}\n"
		   "complete -F %s %s\n", fn, c->p->name);
}

/* The option's names: -x and --xx for _arguments (a value follows -x+ or --xx= in the same
 * word or the next); help and version exclude everything else. */
static void zsh_names(FILE *f, const struct copt *o)
{
	bool value = o->kind != FLAG;
	bool alone = !strcmp(o->name, "help") || !strcmp(o->name, "version");
	const char *prefix = alone ? "(- *)" : o->repeatable ? "*" : "";
	if (!o->short_name) {
		fprintf(f, "'%s--%s%s", prefix, o->name, value ? "=" : "");
		return;
	}
	if (*prefix)
		fprintf(f, "'%s'", prefix);
	else
		fprintf(f, "'(-%c --%s)'", o->short_name, o->name);
	fprintf(f, "{-%c%s,--%s%s}'", o->short_name, value ? "+" : "", o->name, value ? "=" : "");
}

/* Each output's name with its description: ((NAME\:"HELP" ...)). */
static void zsh_described(FILE *f, const struct tc_output *outs)
{
	fputs(":((", f);
	for (const struct tc_output *o = outs; o->name; o++) {
		fprintf(f, "%s%s\\:\"", o == outs ? "" : " ", o->name);
		for (const char *s = o->help; *s; s++) {
			if (strchr(":\"\\$`", *s))
				fputc('\\', f);
			if (*s == '\'')
				fputs("'\\''", f);
			else
				fputc(*s, f);
		}
		fputc('"', f);
	}
	fputs("))", f);
}

static void zsh_action(FILE *f, const struct copt *o)
{
	fputc(':', f);
	for (const char *s = o->arg; *s; s++)
		fputc(tolower((unsigned char)*s), f);
	switch (o->kind) {
	case PATH:
		fputs(":_files", f);
		break;
	case DIR:
		fputs(":_directories", f);
		break;
	case WORDS:
		if (o->outputs)
			zsh_described(f, o->outputs);
		else
			fprintf(f, ":(%s)", o->words);
		break;
	case LIST:
		fprintf(f, ":_sequence compadd - %s", o->words);
		break;
	default:
		fputc(':', f); /* a value of its own: nothing to offer */
		break;
	}
}

/* The operands: one input, or the program's own (FILE... or BASE NEW). */
static void zsh_operands(FILE *f, const struct cprog *c)
{
	if (!c->p->many) {
		fputs("\t'1:file:_files'\n", f);
		return;
	}
	char args[64];
	snprintf(args, sizeof(args), "%s", c->p->many->args);
	int pos = 1;
	for (char *save, *t = strtok_r(args, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		size_t l = strlen(t);
		bool more = l > 3 && !strcmp(t + l - 3, "...");
		if (more)
			t[l - 3] = 0;
		for (char *s = t; *s; s++)
			*s = (char)tolower((unsigned char)*s);
		fprintf(f, "%s", pos > 1 ? " \\\n" : "");
		if (more)
			fprintf(f, "\t'*:%s:_files'", t);
		else
			fprintf(f, "\t'%d:%s:_files'", pos, t);
		pos++;
	}
	fputc('\n', f);
}

static void write_zsh(FILE *f, const struct cprog *c)
{
	fprintf(f, "#compdef %s\n# zsh completion for %s(1), generated from its option table "
		   "by completions/generate.c\n_arguments -s -S \\\n", c->p->name, c->p->name);
	for (size_t i = 0; i < c->n; i++) {
		const struct copt *o = &c->opts[i];
		fputc('\t', f);
		zsh_names(f, o);
		fputc('[', f);
		put_zsh_help(f, o->help);
		fputc(']', f);
		if (o->kind != FLAG)
			zsh_action(f, o);
		fputs("' \\\n", f);
	}
	zsh_operands(f, c);
}

/* A LIST's words come from a function, for __fish_complete_list. */
static void fish_list_fn(FILE *f, const struct copt *o)
{
	fprintf(f, "function __tachfmt_%s_words\n\tprintf '%%s\\n' %s\nend\n\n", o->name,
		o->words);
}

/* Each output's name with its description after a tab: NAME\t"HELP". */
static void fish_described(FILE *f, const struct tc_output *outs)
{
	fputs(" -x -a '", f);
	for (const struct tc_output *o = outs; o->name; o++) {
		fprintf(f, "%s%s\\t\"", o == outs ? "" : " ", o->name);
		for (const char *s = o->help; *s; s++) {
			if (strchr("\"$\\", *s))
				fputs("\\\\", f);
			else if (*s == '\'')
				fputc('\\', f);
			fputc(*s, f);
		}
		fputc('"', f);
	}
	fputc('\'', f);
}

static void fish_opt(FILE *f, const char *prog, const struct copt *o)
{
	fprintf(f, "complete -c %s", prog);
	if (o->short_name)
		fprintf(f, " -s %c", o->short_name);
	fprintf(f, " -l %s", o->name);
	switch (o->kind) {
	case FLAG:
		break;
	case PATH:
		fputs(" -r -F", f);
		break;
	case DIR:
		fputs(" -x -a '(__fish_complete_directories)'", f);
		break;
	case WORDS:
		if (o->outputs)
			fish_described(f, o->outputs);
		else
			fprintf(f, " -x -a '%s'", o->words);
		break;
	case LIST:
		fprintf(f, " -x -a '(__fish_complete_list , __tachfmt_%s_words)'", o->name);
		break;
	default:
		fputs(" -x", f); /* a value of its own: nothing to offer */
		break;
	}
	fputs(" -d '", f);
	put_fish(f, o->help);
	fputs("'\n", f);
}

static void write_fish(FILE *f, const struct cprog *c)
{
	fprintf(f, "# fish completion for %s(1), generated from its option table by "
		   "completions/generate.c\n\n", c->p->name);
	for (size_t i = 0; i < c->n; i++)
		if (c->opts[i].kind == LIST)
			fish_list_fn(f, &c->opts[i]);
	for (size_t i = 0; i < c->n; i++)
		fish_opt(f, c->p->name, &c->opts[i]);
}

static int write_file(const char *dir, const char *prefix, const struct cprog *c,
		      const char *suffix, void (*write)(FILE *, const struct cprog *))
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s%s%s", dir, prefix, c->p->name, suffix);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "generate: %s: %s\n", path, strerror(errno));
		return 1;
	}
	write(f, c);
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "generate: %s: write error\n", path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: generate OUTDIR\n");
		return 2;
	}
	static struct cprog c;
	for (size_t i = 0; i < sizeof(all_programs) / sizeof(all_programs[0]); i++) {
		describe(&c, all_programs[i]);
		for (size_t j = 0; j < c.n; j++)
			if (strlen(c.opts[j].words) + 1 >= sizeof(c.opts[j].words)) {
				fprintf(stderr, "generate: %s --%s: too many values\n",
					c.p->name, c.opts[j].name);
				return 1;
			}
		if (write_file(argv[1], "", &c, "", write_bash) ||
		    write_file(argv[1], "_", &c, "", write_zsh) ||
		    write_file(argv[1], "", &c, ".fish", write_fish))
			return 1;
	}
	return 0;
}
