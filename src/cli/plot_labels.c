/*
 * plot_labels.c — the words of a sweep figure's axes and legend: a model key (section.key)
 * by the leading phrase of its help text in the schema (`hdpsgd keys`), a result column of
 * results.csv by a short description, split into what it measures (the axis) and where it
 * comes from (the legend): ode_final_risk is "final excess risk R(1)" from "ODE".
 */
#include <stdio.h>
#include <string.h>

#include "hdpsgd/model.h"
#include "plot_data.h"

/* what a result column measures, after its source prefix */
static const struct { const char *suffix, *what; } measures[] = {
    {"final_risk", "final excess risk R(1)"},
    {"final_stderr", "standard error of R(1)"},
    {"diverged", "diverged runs"},
    {"pass", "passed (1) or not (0)"},
    {"max_rel_dev", "largest relative deviation"},
    {"max_abs_dev", "largest absolute deviation"},
    {"max_z", "largest z-score"},
    {"best_c", "clipping constant c"},
    {"ode_solves", "ODE solves"},
    {"theory_slope", "rate exponent"},
    {"slope", "rate exponent"},
};

/* the columns every sweep writes before its results */
static const struct { const char *col, *what; } point_columns[] = {
    {"d", "dimension d"},
    {"n", "samples n"},
    {"gamma", "aspect ratio γ = d/n"},
    {"rho", "privacy parameter ρ"},
    {"epsilon_cks", "ε (Canonne–Kamath–Steinke)"},
    {"delta", "δ"},
};

static const struct { const char *prefix, *source; } sources[] = {
    {"ode_", "ODE"},
    {"sim_", "Monte Carlo"},
    {"sde_", "SDE"},
    {"validate_", "validate"},
    {"schedule_", "designed schedule"},
    {"rates_", "rates"},
};

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

/* a model key's label: the help's leading phrase (up to " in ", ":", ";", " (" or ", "),
 * then the key; 0 when name is no key of the schema */
static int key_label(const char *name, char *out, size_t size)
{
    const char *sec, *key, *def, *help;
    for (int i = 0; hdp_model_schema_entry(i, &sec, &key, &def, &help); i++) {
        size_t ls = strlen(sec);
        if (strncmp(name, sec, ls) || name[ls] != '.' || strcmp(name + ls + 1, key))
            continue;
        size_t n = help ? strlen(help) : 0;
        static const char *const stops[] = {" in ", ":", ";", " (", ", ", " = "};
        for (size_t s = 0; s < sizeof stops / sizeof stops[0]; s++) {
            const char *p = help ? strstr(help, stops[s]) : NULL;
            if (p && (size_t)(p - help) < n)
                n = (size_t)(p - help);
        }
        if (n == 0)
            snprintf(out, size, "%s", name);
        else
            snprintf(out, size, "%.*s (%s)", (int)n, help, name);
        return 1;
    }
    return 0;
}

void plot_column_words(const char *col, char *what, size_t wsize, char *source, size_t ssize)
{
    snprintf(what, wsize, "%s", col);
    snprintf(source, ssize, "%s", col);
    if (key_label(col, what, wsize)) {
        source[0] = '\0';
        return;
    }
    for (size_t i = 0; i < sizeof point_columns / sizeof point_columns[0]; i++)
        if (!strcmp(col, point_columns[i].col)) {
            snprintf(what, wsize, "%s", point_columns[i].what);
            source[0] = '\0'; /* no source: the point's own value */
            return;
        }
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        size_t lp = strlen(sources[i].prefix);
        if (strncmp(col, sources[i].prefix, lp))
            continue;
        const char *rest = col + lp;
        for (size_t k = 0; k < sizeof measures / sizeof measures[0]; k++) {
            const char *suf = measures[k].suffix;
            if (!ends_with(rest, suf))
                continue;
            size_t lr = strlen(rest) - strlen(suf); /* a family between: "inverse_time_" */
            snprintf(what, wsize, "%s", measures[k].what);
            if (lr > 1 && rest[lr - 1] == '_' && strcmp(rest, "best_c") != 0)
                snprintf(source, ssize, "%s %.*s%s", sources[i].source, (int)(lr - 1), rest,
                         !strcmp(suf, "theory_slope") ? ", theory" : "");
            else if (!strncmp(rest, "best_", 5))
                snprintf(source, ssize, "best %s", sources[i].source);
            else
                snprintf(source, ssize, "%s", sources[i].source);
            return;
        }
    }
}

void plot_axis_label(const char *col, char *out, size_t size)
{
    char source[256];
    plot_column_words(col, out, size, source, sizeof source);
}
