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
    fputs(".SH EXIT STATUS\n0 success, 1 validation failed, 2 bad input (the message names file, "
          "line and key; no output file is written), 3 an output file could not be written, 4 "
          "numerical failure.\n",
          f);
    fputs(".SH ENVIRONMENT\n"
          ".TP\n.B HDPSGD_GNUPLOT\n"
          "the gnuplot program that draws the figures (default: gnuplot on PATH). Without "
          "gnuplot the data files are still written and a warning says how to install it.\n"
          ".TP\n.B HDPSGD_SIMD\n"
          "generic, avx2 or avx512: the kernel of the Monte Carlo's Gaussian block sampler "
          "(default: the widest the CPU has; another value, or one the CPU lacks, is ignored "
          "with a warning). Every kernel gives the same numbers.\n"
          ".TP\n.B OMP_NUM_THREADS\n"
          "the number of threads of the Monte Carlo commands when \\fB\\-\\-threads\\fR is 0 or "
          "not given (OpenMP's default: one per core).\n"
          ".TP\n.BR OMP_PROC_BIND \", \" OMP_PLACES\n"
          "when neither is set (and not under MPI), the Monte Carlo pins its threads to distinct "
          "CPUs of the process's affinity mask during the runs and restores them afterwards.\n"
          ".TP\n.BR OMPI_COMM_WORLD_SIZE \", \" PMIX_RANK \", \" PMI_SIZE\n"
          "set by \\fBmpirun\\fR: \\fBhdpsgd sweep\\fR then spreads its points over the ranks "
          "(and the Monte Carlo does not pin threads).\n"
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
    fputs(".SH SEE ALSO\n\\fBgnuplot\\fR(1), \\fBmpirun\\fR(1); the README.md, docs/ and "
          "THEORY.md of the hdpsgd sources.\n", f);
}

void cli_print_completion_bash(FILE *f)
{
    fputs("# bash completion for hdpsgd (generated by hdpsgd --completion bash)\n", f);
    fputs("_hdpsgd() {\n  local cur prev cmd\n  cur=${COMP_WORDS[COMP_CWORD]}\n"
          "  prev=${COMP_WORDS[COMP_CWORD-1]}\n  cmd=${COMP_WORDS[1]}\n",
          f);
    fputs("  local commands='", f);
    for (const cli_command *c = hdp_commands; c->name; c++) fprintf(f, "%s ", c->name);
    fputs("help'\n  local keys='", f);
    const char *section, *key;
    for (int i = 0; hdp_model_schema_entry(i, &section, &key, NULL, NULL); i++)
        fprintf(f, "%s.%s= ", section, key);
    fputs("'\n", f);
    fputs("  if [[ $COMP_CWORD -eq 1 ]]; then\n"
          "    COMPREPLY=($(compgen -W \"$commands --help --version\" -- \"$cur\")); return\n"
          "  fi\n"
          "  if [[ $cmd == help ]]; then COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")); return; fi\n"
          "  if [[ $prev == --set ]]; then\n"
          "    compopt -o nospace 2>/dev/null\n"
          "    COMPREPLY=($(compgen -W \"$keys\" -- \"$cur\")); return\n"
          "  fi\n"
          "  local opts='--set --help'\n"
          "  case $cmd in\n",
          f);
    for (const cli_command *c = hdp_commands; c->name; c++) {
        fprintf(f, "    %s) opts=\"$opts", c->name);
        for (const cli_opt *o = c->opts; o && o->name; o++) fprintf(f, " --%s", o->name);
        for (const cli_opt *o = cli_figure_opts_for(c); o && o->name; o++)
            fprintf(f, " --%s", o->name);
        fputs("\" ;;\n", f);
    }
    fputs("  esac\n"
          "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")); return; fi\n"
          "  COMPREPLY=($(compgen -f -X '!*.@(ini|csv|txt|tab|png|pdf|svg|eps|tex)' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
          "}\n"
          "complete -F _hdpsgd hdpsgd\n",
          f);
}
