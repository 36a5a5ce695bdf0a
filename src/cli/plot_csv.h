/*
 * plot_csv.h — the CSV files of the toolkit as `hdpsgd plot` reads them (internal to the
 * command line): the table, the command that wrote it (its first comment line), and the
 * kind of figure it makes, recognised by its header.
 */
#ifndef HDPSGD_PLOT_CSV_H
#define HDPSGD_PLOT_CSV_H

#include <stddef.h>

typedef enum {
    PK_NONE,
    PK_ODE,        /* t,risk,...            hdpsgd ode, validate's .ode.csv */
    PK_MC,         /* t,mean,...            hdpsgd sim, sde */
    PK_RATES_FIG,  /* gamma,risk_<f>,theory_<f>  rates --figure's .rates.csv */
    PK_RATES,      /* gamma,n,family,final_risk,...  rates -o */
    PK_SCHEDULES,  /* t,eta_<f>,risk_<f>    schedule --optimize --figure's .schedules.csv */
    PK_SCHED_TABLE, /* two columns t eta, no header  schedule --optimize -o (a table schedule) */
    PK_SWEEP,      /* point,<axes>,d,...    sweep's results.csv */
    PK_RF_RUN,     /* step,tau,dpgd_test,...  rf */
    PK_RF_P1, PK_RF_P2, PK_RF_P3, PK_RF_P4, /* rf-experiment */
    PK_KL_BOUND,   /* axis,depth,width,...  kl bound */
    PK_KL_EPOCHS,  /* epoch,T,...           kl run --vs epochs */
    PK_KL_SWEEP,   /* depth|width,<s>_kl_early,...  kl run --vs depth|width */
    PK_NC_SWEEP,   /* curve,name,p,...      nc --sweep */
    PK_SI_EPS, PK_SI_N, PK_SI_ALIGN, /* sim-index --experiment */
    PK_NET_VS, PK_NET_CURVE,         /* net --vs, net */
    PK_COUNT
} plot_kind;

typedef struct {
    const char *path;
    char command[128];   /* "ode", "sim", "rf-experiment P3", ... from "# hdpsgd V (git X) CMD: ..." */
    char *description;   /* the rest of that line (allocated; "" when none) */
    char *comments;      /* every '#' line, joined */
    int ncols;
    char **cols;
    long nrows;
    char **cells;        /* nrows * ncols, "" for an empty field */
    plot_kind kind;
} plot_csv;

/* Read path whole (a regular file, rows as wide as the header, numbers where the kind needs
 * them) and recognise it. 0, or EXIT_BAD_INPUT after a message naming the file and line. */
int plot_csv_read(const char *path, plot_csv *t);
void plot_csv_free(plot_csv *t);

const char *plot_kind_name(plot_kind k);
/* The column's index, or -1. */
int plot_csv_col(const plot_csv *t, const char *name);
const char *plot_csv_cell(const plot_csv *t, long row, int col);
double plot_csv_num(const plot_csv *t, long row, int col); /* NAN when not a number */
/* The value of the model key section.key in the CSV's header ("# [section]" ... "# key =
 * value", or "# section.key = value" of earlier versions), or NULL. */
const char *plot_csv_meta(const plot_csv *t, const char *key, char *buf, size_t size);

/* The accepted headers, for messages. */
extern const char plot_csv_accepted[];

#endif
