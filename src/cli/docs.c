/*
 * docs.c — the man page (hdpsgd --man) and the bash completion
 * (hdpsgd --completion bash), generated from the same command table and model
 * schema that print `hdpsgd help` and `hdpsgd keys`, so they cannot drift.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* roff-escape: backslashes and leading dots/quotes. An indented line (a CSV header, an item
 * of a list) starts an output line of its own (troff breaks before a leading space), and the
 * first unindented line after it starts a new one too (.br), so no text runs into it; a
 * blank line is a paragraph break. */
static void roff(FILE *f, const char *s)
{
    int bol = 1, indented = 0;
    for (; *s; s++) {
        if (bol) {
            if (*s == '\n') { /* a blank line */
                fputs(".sp\n", f);
                indented = 0;
                continue;
            }
            if (*s != ' ' && indented) fputs(".br\n", f);
            indented = *s == ' ';
            if (*s == '.' || *s == '\'') fputs("\\&", f);
        }
        if (*s == '\\') fputs("\\e", f);
        else if (*s == '-') fputs("\\-", f);
        else if ((*s == ',' || *s == '|' || *s == '/') && s[1] && s[1] != ' ' && s[1] != '\n')
            fprintf(f, "%c\\:", *s); /* a break point inside column lists, a|b, paths */
        else fputc(*s, f);
        bol = *s == '\n';
    }
}

/* a line of a command's JSON keys (cli_json_keys): each table's keys start a line of their
 * own, filled to the page's width (its continuation lines not indented) */
static void roff_json_line(void *f, const char *text)
{
    size_t lead = strspn(text, " ");
    if (lead == 2)
        fputs(".br\n", f);
    roff(f, text + lead);
    fputc('\n', f);
}

static void option_line(FILE *f, const cli_opt *o)
{
    fputs(".TP\n.B ", f);
    if (o->short_name) fprintf(f, "\\-%c, ", o->short_name);
    fprintf(f, "\\-\\-");
    roff(f, o->name);
    if (o->metavar) {
        fputs(" \\fI", f);
        roff(f, o->metavar);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    char help[1024];
    cli_opt_help(o, help, sizeof help);
    roff(f, help);
    fputc('\n', f);
}

/* the man page's COMMANDS: each command's usage, description, arguments and options */
static void man_commands(FILE *f)
{
    fputs(".SH COMMANDS\n", f);
    for (const cli_command *c = hdp_commands; c->name; c++) {
        char usage[2048];
        cli_usage(c, usage, sizeof usage);
        fputs(".SS ", f);
        roff(f, c->name);
        fputs("\n.B hdpsgd\n", f);
        roff(f, usage);
        fputs("\n.PP\n", f);
        roff(f, c->description);
        fputc('\n', f);
        if (c->json) { /* its JSON keys, generated from its result tables (help_results.c) */
            fputs(".PP\n", f);
            cli_json_keys(c, roff_json_line, f);
        }
        for (const cli_arg *a = c->args; a && a->name; a++) {
            fputs(".TP\n.I ", f);
            roff(f, a->name);
            fputc('\n', f);
            roff(f, a->help);
            fputc('\n', f);
        }
        if (c->sets)
            fputs(".TP\n.BI \"\\-\\-set \" SECTION.KEY=VALUE\n"
                  "override one model key (repeatable); see MODEL KEYS\n", f);
        for (const cli_opt *o = c->opts; o && o->name; o++)
            option_line(f, o);
        for (const cli_opt *o = cli_figure_opts_for(c); o && o->name; o++)
            option_line(f, o);
    }
}

/* the man page's MODEL KEYS: every key of the schema with its default and help */
static void man_keys(FILE *f)
{
    fputs(".SH MODEL KEYS\n", f);
    const char *section, *key, *def, *help;
    for (int i = 0; hdp_model_schema_entry(i, &section, &key, &def, &help); i++) {
        fprintf(f, ".TP\n.B %s.%s\n", section, key);
        fputs("default ", f);
        roff(f, def[0] ? def : "(none)");
        fputs(": ", f);
        roff(f, help);
        fputc('\n', f);
    }
}

/* the man page's prose after the keys: ENVIRONMENT, FILES, EXAMPLES, SEE ALSO */
static void man_appendix(FILE *f)
{
    fputs(".SH ENVIRONMENT\n"
          ".TP\n.B HDPSGD_GNUPLOT\n"
          "the gnuplot program that draws the figures (default: gnuplot on PATH). Without "
          "gnuplot a command given a figure exits 3 before running and says how to install "
          "it; without the figure option it writes its other files.\n"
          ".TP\n.B TMPDIR\n"
          "where a figure's private folder (hdpsgd-plot-XXXXXX: gnuplot's script and copies of "
          "the data) is made while it is drawn, when an absolute path of letters, digits and "
          "/ . _ - of at most 150 bytes (default /tmp).\n"
          ".TP\n.B HDPSGD_SIMD\n"
          "generic, avx2 or avx512: the kernel of the Monte Carlo's Gaussian block sampler "
          "(default: the widest the CPU has; another value, or one the CPU lacks, is ignored "
          "with a warning). Every kernel gives the same numbers.\n"
          ".TP\n.B OMP_NUM_THREADS\n"
          "the number of threads of the Monte Carlo commands when \\fB\\-\\-threads\\fR is 0 or "
          "not given (OpenMP's default: one per core); at most 4096, like \\fB\\-\\-threads\\fR "
          "(above: exit 2). OMP_THREAD_LIMIT, OMP_DYNAMIC and limits on processes or memory "
          "may give fewer threads: the numbers do not change.\n"
          ".TP\n.BR OMP_STACKSIZE \", \" GOMP_STACKSIZE\n"
          "the stack of each OpenMP thread; before a parallel region the library creates its "
          "extra threads with this stack once, and asks OpenMP only for as many as could be "
          "created (libgomp would otherwise end the process with status 1).\n"
          ".TP\n.BR OMP_PROC_BIND \", \" OMP_PLACES\n"
          "when neither is set (and not under MPI), the Monte Carlo pins its threads to distinct "
          "CPUs of the process's affinity mask during the runs and restores them afterwards.\n"
          ".TP\n.BR OMPI_COMM_WORLD_SIZE \", \" PMIX_RANK \", \" PMI_SIZE\n"
          "set by \\fBmpirun\\fR: \\fBhdpsgd sweep\\fR then spreads its points over the ranks "
          "(and the Monte Carlo does not pin threads).\n"
          ".TP\n.B OPENBLAS_CORETYPE\n"
          "OpenBLAS picks its kernels from the CPU at run time; what goes through it (rf, kl, "
          "nc, sim\\-index, the schedule search of schedule, rates and sweep) can differ in "
          "its last digits between CPUs. Setting the core type (e.g. Haswell) gives the same "
          "digits on every CPU that can run it.\n"
          ".TP\n.B HDPSGD_TEST_STOP\n"
          "for the test suite only: compute or commit makes the command stop itself (SIGSTOP) "
          "at that point, so that a test can send a signal there.\n"
          ".TP\n.B HDPSGD_LIBRARY\n"
          "(the Python package only) the path of libhdpsgd.so to load.\n",
          f);
    fputs(".SH FILES\n"
          ".TP\n.I PREFIX/share/hdpsgd/models/*.ini\n"
          "the ready\\-made models (default.ini is the built\\-in default model); each starts "
          "with a comment saying what it shows.\n"
          ".TP\n.I PREFIX/share/hdpsgd/examples/sweeps/*.ini\n"
          "example sweep files (their base models are found relative to them, in ../../models).\n"
          ".TP\n.I PREFIX/share/hdpsgd/plots/*.gp\n"
          "the gnuplot scripts of the figures (the program carries its own copy).\n"
          ".TP\n.I PREFIX/share/bash\\-completion/completions/hdpsgd\n"
          "the bash completion (also: \\fBhdpsgd \\-\\-completion bash\\fR).\n",
          f);
    fputs(".SH EXAMPLES\n"
          "Compare the theory with the simulation on the built\\-in model, with a figure:\n"
          ".PP\n.RS\n.nf\nhdpsgd validate \\-\\-figure validate.png\n.fi\n.RE\n"
          ".PP\nThe risk ODE of a model file with two keys changed, as CSV on standard output:\n"
          ".PP\n.RS\n.nf\nhdpsgd ode models/powerlaw.ini \\-\\-set clip.c=0.5 \\-\\-set privacy.rho=inf\n"
          ".fi\n.RE\n"
          ".PP\nThe privacy level, and the rho that meets (epsilon, delta) = (1, 1e\\-5):\n"
          ".PP\n.RS\n.nf\nhdpsgd privacy\nhdpsgd privacy \\-\\-epsilon 1 \\-\\-delta 1e\\-5\n.fi\n.RE\n"
          ".PP\nThe best schedule at the model's rho, written as a table, and its figure:\n"
          ".PP\n.RS\n.nf\nhdpsgd schedule \\-\\-optimize \\-o best.tab \\-\\-figure schedules.pdf\n"
          ".fi\n.RE\n"
          ".PP\nA sweep (results in grid\\-out/ in the current directory), then one figure of it:\n"
          ".PP\n.RS\n.nf\nhdpsgd sweep PREFIX/share/hdpsgd/examples/sweeps/grid.ini \\-\\-threads 2\n"
          "hdpsgd plot grid\\-out/results.csv \\-\\-x clip.c \\-\\-by data.gamma "
          "\\-\\-y sim_final_risk \\-o grid.pdf\n.fi\n.RE\n",
          f);
#ifndef HDPSGD_DOCDIR
#define HDPSGD_DOCDIR "/usr/local/share/doc/hdpsgd"
#endif
    fputs(".SH SEE ALSO\n\\fBgnuplot\\fR(1), \\fBmpirun\\fR(1). The documentation is installed in "
          HDPSGD_DOCDIR " (for the prefix the build was configured with): README.md, docs/theory.md "
          "(the mathematics every help text cites by section), docs/reliability.md, "
          "docs/architecture.md and docs/gallery.md with its figures; the same files are in the "
          "hdpsgd sources.\n", f);
}

void cli_print_man(FILE *f)
{
    fprintf(f, ".TH HDPSGD 1 \"\" \"hdpsgd %s\" \"User Commands\"\n", hdp_version_string());
    fputs(".ad l\n.nh\n", f); /* ragged right, no hyphens: column lists and names fit */
    fputs(".SH NAME\nhdpsgd \\- predict and simulate the training dynamics of differentially private "
          "SGD in high dimensions\n",
          f);
    fputs(".SH SYNOPSIS\n.B hdpsgd\n\\fIcommand\\fR [\\fIMODEL.ini\\fR] [\\fB\\-\\-set\\fR "
          "\\fIsection.key=value\\fR]... [\\fIoptions\\fR]\n",
          f);
    fputs(".SH DESCRIPTION\nhdpsgd integrates the deterministic risk ODE of homogenized DP\\-SGD "
          "(theory), simulates the real algorithm and its SDE (Monte Carlo), compares them, "
          "accounts privacy and designs schedules. With no MODEL.ini the built\\-in default model "
          "is used; every model key can be overridden with \\-\\-set (see MODEL KEYS).\n",
          f);
    man_commands(f);
    man_keys(f);
    fputs(".SH EXIT STATUS\n0 success, 1 validation failed, 2 bad input (the message names file, "
          "line and key; no output file is written), 3 an output file could not be written, 4 "
          "numerical failure.\n",
          f);
    man_appendix(f);
}

/* The choices of a model key whose help lists them as "a | b | c", or whose default is a word:
 * every word of the help
 * that the model accepts as the key's value (probed with hdp_model_set, so that only real
 * values are offered). Written space-separated to f; returns how many. */
static int key_choices(FILE *f, const char *section, const char *key, const char *def,
                       const char *help)
{
    int worded = def && def[0] >= 'a' && def[0] <= 'z' && strcmp(def, "inf");
    if (!help || !(strstr(help, " | ") || worded))
        return 0;
    int n = 0;
    char word[64], seen[1024] = " ";
    for (const char *p = help; *p;) {
        size_t len = 0;
        while (p[len] && ((p[len] >= 'a' && p[len] <= 'z') || (p[len] >= '0' && p[len] <= '9') ||
                          p[len] == '-' || p[len] == '_'))
            len++;
        if (len == 0 || len >= sizeof word || !(p[0] >= 'a' && p[0] <= 'z')) {
            p += len ? len : 1;
            continue;
        }
        snprintf(word, sizeof word, "%.*s", (int)len, p);
        p += len;
        char probe[256], token[80];
        snprintf(token, sizeof token, " %s ", word);
        if (strstr(seen, token))
            continue;
        snprintf(probe, sizeof probe, "%s.%s=%s", section, key, word);
        hdp_model m;
        hdp_error err;
        hdp_error_clear(&err);
        hdp_model_init(&m);
        int ok = hdp_model_set(&m, probe, &err) == HDP_OK;
        hdp_model_free(&m);
        if (!ok)
            continue;
        fprintf(f, "%s%s", n ? " " : "", word);
        n++;
        if (strlen(seen) + strlen(word) + 2 < sizeof seen) {
            strcat(seen, word);
            strcat(seen, " ");
        }
    }
    return n;
}

/* the file suffixes of a command's positional arguments, for the completion */
static const char *positional_suffixes(const cli_command *c)
{
    if (!c->args || !c->args[0].name) return NULL;
    if (!strcmp(c->name, "plot")) return ".csv";
    if (!strcmp(c->name, "help")) return NULL;
    return ".ini";
}

static void opt_words(FILE *f, const cli_command *c, int which)
{
    /* which: 0 every option, 1 those naming a file written, 2 a folder, 3 taking a value */
    int first = 1;
    const cli_opt *tables[2] = {c->opts, cli_figure_opts_for(c)};
    for (int t = 0; t < 2; t++)
        for (const cli_opt *o = tables[t]; o && o->name; o++) {
            int dir = o->kind == OPT_STRING && o->metavar && !strcmp(o->metavar, "DIR");
            int want = which == 0 || (which == 1 && CLI_IS_OUTPUT(o->kind)) || (which == 2 && dir) ||
                       (which == 3 && o->kind != OPT_FLAG);
            if (!want) continue;
            if (o->short_name) {
                fprintf(f, "%s-%c", first ? "" : " ", o->short_name);
                first = 0;
            }
            fprintf(f, "%s--%s", first ? "" : " ", o->name);
            first = 0;
        }
}

/* the bash completion's case of command c: its options (all, those naming a file written, a
 * folder, taking a value), the words of its first argument, the suffix of its files */
static void completion_case(FILE *f, const cli_command *c)
{
    fprintf(f, "    %s)\n      opts='%s", c->name, c->sets ? "--set " : "");
    opt_words(f, c, 0);
    fputs(" --help'\n      fileopts='", f);
    opt_words(f, c, 1);
    fputs("'\n      diropts='", f);
    opt_words(f, c, 2);
    fputs("'\n      valopts='", f);
    opt_words(f, c, 3);
    fputs("'\n", f);
    const char *first = NULL;
    if (!strcmp(c->name, "kl")) first = "bound init run";
    else if (!strcmp(c->name, "rf-experiment")) first = "P1 P2 P3 P4";
    else if (!strcmp(c->name, "help")) {
        static char names[1024];
        size_t used = 0;
        for (const cli_command *d = hdp_commands; d->name; d++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s ", d->name);
        snprintf(names + used, sizeof names - used, "results"); /* help results [TABLE] */
        first = names;
    }
    if (first) fprintf(f, "      first='%s'\n", first);
    const char *suffix = positional_suffixes(c);
    if (suffix) fprintf(f, "      suffix='%s'\n", suffix);
    fputs("      ;;\n", f);
}

/* The bash completion script. Long on purpose: it is the script itself, one string per line
 * of bash with the tables' words printed into it, read top to bottom as the script it
 * writes (each command's case: completion_case). */
void cli_print_completion_bash(FILE *f)
{
    fputs("# bash completion for hdpsgd (generated by hdpsgd --completion bash from the command\n"
          "# table and the model schema). Plain bash: no extglob, no bash-completion package.\n", f);
    /* files with one of the suffixes (none: every file), and folders */
    fputs("_hdpsgd_files() { # _hdpsgd_files PREFIX CUR [SUFFIX]...\n"
          "  local pre=$1 cur=$2 f s ok IFS=$'\\n'\n"
          "  shift 2\n"
          "  compopt -o filenames 2>/dev/null\n"
          "  for f in $(compgen -f -- \"$cur\"); do\n"
          "    ok=0\n"
          "    if [[ -d $f || $# -eq 0 ]]; then ok=1; fi\n"
          "    for s in \"$@\"; do [[ $f == *\"$s\" ]] && ok=1; done\n"
          "    ((ok)) && COMPREPLY+=(\"$pre$f\")\n"
          "  done\n"
          "}\n", f);
    fputs("_hdpsgd_choices() { # the values of a model key that is a choice, or FILE\n"
          "  case $1 in\n", f);
    const char *section, *key, *def, *help;
    for (int i = 0; hdp_model_schema_entry(i, &section, &key, &def, &help); i++) {
        char buf[1024];
        FILE *m = fmemopen(buf, sizeof buf, "w");
        int n = m ? key_choices(m, section, key, def, help) : 0;
        if (m) fclose(m);
        if (n)
            fprintf(f, "    %s.%s) echo '%s' ;;\n", section, key, buf);
        else if (strstr(key, "file"))
            fprintf(f, "    %s.%s) echo FILE ;;\n", section, key);
    }
    fputs("  esac\n}\n", f);
    fputs("_hdpsgd() {\n"
          "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]}\n"
          "  local commands='", f);
    for (const cli_command *c = hdp_commands; c->name; c++)
        fprintf(f, "%s%s", c == hdp_commands ? "" : " ", c->name);
    fputs("'\n  local keys='", f);
    for (int i = 0; hdp_model_schema_entry(i, &section, &key, NULL, NULL); i++)
        fprintf(f, "%s%s.%s=", i ? " " : "", section, key);
    fputs("'\n  COMPREPLY=()\n", f);
    fputs("  if ((COMP_CWORD == 1)); then\n"
          "    COMPREPLY=($(compgen -W \"$commands -h --help -V --version --man --completion\" -- \"$cur\"))\n"
          "    return\n"
          "  fi\n"
          "  if [[ $cmd == --completion ]]; then COMPREPLY=($(compgen -W bash -- \"$cur\")); return; fi\n"
          "  # --set SECTION.KEY=VALUE: bash splits the word at '=' (COMP_WORDBREAKS): --set KEY = VALUE\n"
          "  local key= val= pre=\n"
          "  if [[ $cur == = && ${COMP_WORDS[COMP_CWORD-2]} == --set ]]; then key=$prev\n"
          "  elif [[ $prev == = && ${COMP_WORDS[COMP_CWORD-3]} == --set ]]; then key=${COMP_WORDS[COMP_CWORD-2]} val=$cur\n"
          "  elif [[ $prev == --set && $cur == *=* ]]; then key=${cur%%=*} val=${cur#*=} pre=$key=\n"
          "  fi\n"
          "  if [[ -n $key ]]; then\n"
          "    local choices c\n"
          "    choices=$(_hdpsgd_choices \"$key\")\n"
          "    if [[ $choices == FILE ]]; then _hdpsgd_files \"$pre\" \"$val\"; return; fi\n"
          "    for c in $choices; do [[ $c == \"$val\"* ]] && COMPREPLY+=(\"$pre$c\"); done\n"
          "    return\n"
          "  fi\n"
          "  if [[ $prev == --set ]]; then\n"
          "    compopt -o nospace 2>/dev/null\n"
          "    COMPREPLY=($(compgen -W \"$keys\" -- \"$cur\"))\n"
          "    return\n"
          "  fi\n"
          "  local opts= fileopts= diropts= valopts= first= suffix=\n"
          "  case $cmd in\n", f);
    for (const cli_command *c = hdp_commands; c->name; c++)
        completion_case(f, c);
    fputs("    *) return ;;\n"
          "  esac\n"
          "  local w\n"
          "  for w in $fileopts; do [[ $prev == \"$w\" ]] && { _hdpsgd_files '' \"$cur\"; return; }; done\n"
          "  for w in $diropts; do\n"
          "    if [[ $prev == \"$w\" ]]; then\n"
          "      compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")); return\n"
          "    fi\n"
          "  done\n"
          "  for w in $valopts; do [[ $prev == \"$w\" ]] && return; done\n"
          "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return; fi\n"
          "  # the positional arguments before this word (options and their values skipped)\n"
          "  local i o npos=0 skip=0\n"
          "  for ((i = 2; i < COMP_CWORD; i++)); do\n"
          "    w=${COMP_WORDS[i]}\n"
          "    if ((skip)); then skip=0; [[ $w == = ]] && skip=1; continue; fi\n"
          "    if [[ $w == = || $w == --set ]]; then skip=1; continue; fi\n"
          "    if [[ $w == -* ]]; then\n"
          "      for o in $valopts; do [[ $w == \"$o\" ]] && skip=1; done\n"
          "      continue\n"
          "    fi\n"
          "    npos=$((npos + 1))\n"
          "  done\n"
          "  if [[ -n $first ]]; then\n"
          "    if ((npos == 0)); then COMPREPLY=($(compgen -W \"$first\" -- \"$cur\")); return; fi\n"
          "    [[ $cmd == help ]] && return\n"
          "  fi\n"
          "  [[ -n $suffix ]] && _hdpsgd_files '' \"$cur\" $suffix\n"
          "}\n"
          "complete -F _hdpsgd hdpsgd\n",
          f);
}
