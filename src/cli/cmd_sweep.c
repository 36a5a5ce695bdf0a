/*
 * cmd_sweep.c — `hdpsgd sweep SWEEP.ini [--resume] [--dry-run] [-o DIR]`: run commands over
 * the Cartesian product of model-key axes, serially or under Open MPI.
 *
 * SWEEP.ini (inih):
 *   [sweep]  model = base.ini (relative to the sweep file; default: the built-in model)
 *            commands = ode, sim, sde, validate, schedule, rates   (any subset)
 *            schedule_families = all | a list   (schedule; default all)
 *            schedule_knots = K                 (schedule, pl family; default 8)
 *            schedule_refine = true | false     (schedule, pl family; default false)
 *            schedule_refine_tol = TOL          (its tolerance; default 1e-5)
 *            rates_gammas = LO:HI:COUNT         (rates; required with it)
 *            rates_families = a list            (rates; default output, linear-noise, inverse-time)
 *            tune_clip = true | false           (schedule and rates; default false)
 *   [axes]   section.key = v1, v2, ...   or   LO:HI:COUNT   or   LO:HI:COUNT:log
 *   [set]    section.key = value   (fixed overrides applied at every point)
 * The commands run in the order given; those after schedule run on its designed schedule
 * (the best family's table, schedule.tab; hdpsgd/sweep.h), those before it on the model's.
 * Points are numbered in row-major order (the last axis varies fastest). Point i
 * writes DIR/points/pNNNNN/{ode,sim,sde}.{csv,json}, validate.json, schedule.{json,tab}
 * and rates.{csv,json} (for the commands run), then its
 * result row DIR/points/pNNNNN/row.csv, atomically and last: a point is done
 * when its row exists. --resume skips the points that are done. At the end,
 * DIR/results.csv is the header plus the rows in point order, so a serial run, a
 * resumed run and an MPI run with the same seeds give the same bytes.
 * Under mpirun (Open MPI; detected from the environment) every rank takes the
 * next point from a shared counter (MPI_Fetch_and_op on rank 0's window:
 * dynamic load balancing); DIR must be on a file system that all ranks see.
 */
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HDPSGD_HAVE_MPI
#include <mpi.h>
#endif

#include "io/output.h"
#include "cli.h"
#include "core/clock.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/sweep.h"
#include "hdpsgd/validate.h"
#include "sweep_spec.h"

/* The longest accepted output folder (-o DIR, or NAME-out): the points' folders and files
 * (DIR/points/pNNNNN/..., DIR/sweep.digest) are built in buffers sized from it here and of
 * 1200 bytes in sweep_resume.c; a longer name is refused (exit 2), never cut. */
#define SWEEP_DIR_MAX 1100
#define SWEEP_PATH_MAX (SWEEP_DIR_MAX + 200)


static const char *out_dir;
static int resume, dry_run;
static cli_mc_args mc;

const cli_opt sweep_opts[] = {
    {"output", 'o', OPT_STRING, &out_dir, "DIR", "output folder, not '-' (default: NAME-out in the current directory for SWEEP NAME.ini)"},
    {"resume", 0, OPT_FLAG, &resume, NULL, "skip the points already done in DIR"},
    {"dry-run", 0, OPT_FLAG, &dry_run, NULL,
     "check every point's model, list the points and the commands, and stop (writes nothing)"},
    {"threads", 0, OPT_LONG, &mc.threads, "T",
     "OpenMP threads per point (default 0 = one per core; per rank under MPI)"},
    {NULL, 0, 0, NULL, NULL, NULL},
};

/* `hdpsgd help sweep` (the command table in main.c points here) */
const char sweep_usage[] = "SWEEP.ini";
const char sweep_help[] =
    "Runs the commands named in SWEEP.ini ([sweep] commands = ode, sim, sde, validate,\n"
    "schedule, rates) at every point of the Cartesian product of its [axes] (section.key =\n"
    "v1, v2, ... or LO:HI:COUNT or LO:HI:COUNT:log), on the base model [sweep] model with the\n"
    "fixed overrides of [set]. schedule is `schedule --optimize` ([sweep] schedule_families,\n"
    "default all; schedule_knots, default 8; schedule_refine = true|false, pl only, with\n"
    "schedule_refine_tol, default 1e-5; tune_clip = true|false); rates is `rates`\n"
    "([sweep] rates_gammas = LO:HI:COUNT, required; rates_families, default output,\n"
    "linear-noise, inverse-time; not with a data.gamma or data.n axis).\n"
    "The commands run in the order given, each once. ode, sim, sde and validate after\n"
    "schedule run on the schedule it designed at the point (`commands = schedule, validate`:\n"
    "the best family's table, written to schedule.tab, as schedule.kind = table, and its\n"
    "clip.c with tune_clip): their columns are the designed schedule's; before it (or\n"
    "without it) they run on the point's model. rates designs its own schedules.\n"
    "Point i writes DIR/points/pNNNNN/ (the commands' CSV and JSON files, schedule.tab, then\n"
    "row.csv, last and atomically); DIR/results.csv collects the rows in point order: point,\n"
    "the axes, d, n, gamma, rho, epsilon_cks (CKS at delta), delta (privacy.delta), then\n"
    "the commands' columns in their order: ode_final_risk, sim_final_risk,\n"
    "sim_final_stderr, sim_diverged, sde_..., validate_pass, validate_max_rel_dev,\n"
    "validate_max_z, schedule_<family>_final_risk..., schedule_best_family,\n"
    "schedule_best_final_risk, schedule_best_c, schedule_table_final_risk (the ODE's risk of\n"
    "the table handed on), schedule_ode_solves, rates_<family>_slope,\n"
    "rates_<family>_theory_slope..., rates_ode_solves (for the commands run; family keys use\n"
    "linear_noise) and status (ok, or failed: the message). Every point's model is checked\n"
    "before anything runs (--dry-run: only that, and the list of points); at most 1000000\n"
    "points. The sweep file is read as a model file is (lines of at most 198 characters, an\n"
    "axis's list of values may continue on indented lines; each key once). --resume continues\n"
    "a killed sweep, losing at most the points in\n"
    "progress. Under `mpirun -np N hdpsgd sweep ...` (Open MPI) the ranks take points from a\n"
    "shared counter (dynamic load balancing); the results are the same bytes as a serial run.\n"
    "Exit status 4 when some point failed.";

/* The base model and overrides of point i ([set], then the axes; bufs hold the text). */
static void point_common(const sweep_spec *s, long i, cli_common *c, char bufs[][1200])
{
    memset(c, 0, sizeof *c);
    c->model_path = s->model[0] ? s->model : NULL;
    for (int k = 0; k < s->nfixed; k++) c->sets[c->nsets++] = s->fixed[k];
    int idx[MAX_AXES];
    sweep_point_values(s, i, idx);
    for (int a = 0; a < s->naxes; a++) {
        snprintf(bufs[a], 1200, "%s=%s", s->axes[a].key, s->axes[a].values[idx[a]]);
        c->sets[c->nsets++] = bufs[a];
    }
}

/* Build the model of point i and, with rates, the model at every gamma of its grid into *r
 * (zeroed without rates); prints the error (naming the point) on failure. */
static int point_model(const sweep_spec *s, long i, hdp_model *m, char bufs[][1200],
                       cli_rates *r)
{
    cli_common c;
    point_common(s, i, &c, bufs);
    memset(r, 0, sizeof *r);
    int rc = cli_load_model(&c, m);
    if (!rc && sweep_has(s, "rates") &&
        (rc = cli_rates_load("sweep", &c, s->set.gamma_lo, s->set.gamma_hi, s->set.gamma_count,
                             r)))
        hdp_model_free(m);
    if (rc) {
        fprintf(stderr, "hdpsgd sweep: error: at point %ld (", i);
        for (int a = 0; a < s->naxes; a++)
            fprintf(stderr, "%s%s", a ? ", " : "", bufs[a]);
        fprintf(stderr, ") of %s\n", s->path);
    }
    return rc;
}

/* Write pdir/row.csv (the point's row), atomically. */
static hdp_status write_row(const char *pdir, const char *row, hdp_error *err)
{
    char path[SWEEP_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/row.csv", pdir);
    hdp_outset out;
    hdp_outset_init(&out, err);
    FILE *f = hdp_outset_add(&out, path);
    if (f)
        fputs(row, f);
    return hdp_outset_commit(&out);
}

static void header(const sweep_spec *s, FILE *f)
{
    fputs("point", f);
    for (int a = 0; a < s->naxes; a++) fprintf(f, ",%s", s->axes[a].key);
    const hdp_sweep_runner *runners[MAX_SWEEP_COMMANDS];
    int n = sweep_runners_of(s, runners);
    char buf[8192];
    hdp_sweep_header(runners, n, &s->set, buf, sizeof buf);
    fputs(buf, f);
}

/* the files of runner r at point p, by its command's sweep_write (user: the point's folder) */
static hdp_status write_point_files(const hdp_sweep_runner *r, const hdp_sweep_point *p,
                                    void *user, hdp_error *err)
{
    for (const cli_command *c = hdp_commands; c->name; c++)
        if (c->sweep == r && c->sweep_write)
            return c->sweep_write(user, p, err);
    return HDP_OK;
}

/* Run point i and write its files; the row last. Returns 0, -1 when the point
 * was done before (--resume), 4 when a computation failed (the row then says
 * so), or 3 on an output error. */
static int run_point(const sweep_spec *s, long i, const char *dir, int threads)
{
    char pdir[SWEEP_PATH_MAX], path[SWEEP_PATH_MAX + 16];
    snprintf(pdir, sizeof pdir, "%s/points/p%05ld", dir, i);
    snprintf(path, sizeof path, "%s/row.csv", pdir);
    if (resume && sweep_file_exists(path)) return -1; /* done in an earlier run */
    if (sweep_mkdir_p(pdir) != 0) {
        fprintf(stderr, "hdpsgd sweep: error: %s: cannot create: %s\n", pdir, strerror(errno));
        return EXIT_IO;
    }
    char bufs[MAX_AXES][1200];
    hdp_model m;
    cli_rates gm; /* rates: the model at every gamma (checked before the sweep started) */
    if (point_model(s, i, &m, bufs, &gm)) return EXIT_BAD_INPUT;
    hdp_mc_options opt;
    hdp_mc_options_from_model(&m, &opt);
    opt.threads = threads;
    char prefix[4096];
    int idx[MAX_AXES];
    sweep_point_values(s, i, idx);
    size_t len = (size_t)snprintf(prefix, sizeof prefix, "%ld", i);
    for (int a = 0; a < s->naxes && len < sizeof prefix; a++)
        len += (size_t)snprintf(prefix + len, sizeof prefix - len, ",%s", s->axes[a].values[idx[a]]);
    char table[SWEEP_PATH_MAX + 16]; /* schedule.tab: the design the commands after it run on */
    snprintf(table, sizeof table, "%s/schedule.tab", pdir);
    hdp_sweep_point pt = {.m = &m, .opt = &opt, .set = &s->set, .gamma_models = gm.models,
                          .gamma_count = gm.count, .design_file = table};
    const hdp_sweep_runner *runners[MAX_SWEEP_COMMANDS];
    int n = sweep_runners_of(s, runners);
    static hdp_sweep_outcome out; /* large; one point at a time */
    hdp_error err;
    hdp_error_clear(&err);
    hdp_sweep_point_run(runners, n, &pt, prefix, write_point_files, pdir, &out, &err);
    cli_rates_free(&gm);
    hdp_model_free(&m);
    if (out.io != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", out.io_err.msg);
        return EXIT_IO;
    }
    if (write_row(pdir, out.row, &err) != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", err.msg);
        return EXIT_IO;
    }
    if (out.st != HDP_OK)
        fprintf(stderr, "hdpsgd sweep: point %ld failed: %s\n", i, out.err.msg);
    return out.st == HDP_OK ? 0 : EXIT_NUMERIC;
}

/* Concatenate the rows into DIR/results.csv; returns the number of failed points or -1. */
static int assemble(const sweep_spec *s, const char *dir, long npoints)
{
    char path[SWEEP_PATH_MAX];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    hdp_outfile o;
    hdp_error err;
    hdp_error_clear(&err);
    if (hdp_out_open(&o, path, &err) != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", err.msg);
        return -1;
    }
    header(s, o.f);
    int failed = 0;
    char *line = NULL; /* a row of any length (a failed point's message is long) */
    size_t cap = 0;
    for (long i = 0; i < npoints; i++) {
        char rp[SWEEP_PATH_MAX];
        snprintf(rp, sizeof rp, "%s/points/p%05ld/row.csv", dir, i);
        FILE *f = fopen(rp, "r");
        if (!f || getline(&line, &cap, f) < 0) {
            fprintf(stderr, "hdpsgd sweep: error: %s is missing: point %ld did not finish\n", rp, i);
            if (f) fclose(f);
            free(line);
            hdp_out_abort(&o);
            return -1;
        }
        fclose(f);
        if (strstr(line, ",failed: ")) failed++;
        fputs(line, o.f);
    }
    free(line);
    if (hdp_out_commit(&o, &err) != HDP_OK) {
        fprintf(stderr, "hdpsgd sweep: error: %s\n", err.msg);
        hdp_out_abort(&o);
        return -1;
    }
    return failed;
}

/* On rank 0, before any point runs: every point's model checked (and digested), the dry
 * run's list, the output folder made or --resume's digest checked. Returns 0, -1 when the
 * dry run ended, or the exit status after a message. */
static int prepare(const sweep_spec *sp, const char *dir, long npoints, int mpi)
{
    int rc = 0;
    char points_dir[SWEEP_PATH_MAX];
    snprintf(points_dir, sizeof points_dir, "%s/points", dir);
    char cmds[96];
    sweep_digest digest;
    memset(&digest, 0, sizeof digest);
    digest.points = SWEEP_FNV_START;
    digest.sweep = sweep_digest_file(sp->path);
    digest.base = sp->model[0] ? sweep_digest_file(sp->model) : 0;
    for (long i = 0; i < npoints && !rc; i++) {
        char bufs[MAX_AXES][1200];
        hdp_model m;
        cli_rates r;
        rc = point_model(sp, i, &m, bufs, &r);
        if (!rc) {
            cli_rates_free(&r);
            if (sweep_digest_point(&digest, &m)) {
                fprintf(stderr, "hdpsgd sweep: error: out of memory digesting point %ld\n", i);
                rc = EXIT_NUMERIC;
            }
            hdp_model_free(&m);
        }
    }
    if (!rc && dry_run) {
        /* the grid as it would run: one line per point, then stop (exit 0, no files) */
        for (long i = 0; i < npoints; i++) {
            int idx[MAX_AXES];
            sweep_point_values(sp, i, idx);
            printf("%ld", i);
            for (int a = 0; a < sp->naxes; a++)
                printf(" %s=%s", sp->axes[a].key, sp->axes[a].values[idx[a]]);
            putchar('\n');
        }
        fprintf(stderr, "hdpsgd sweep: dry run: %ld points x {%s} checked; nothing written "
                        "(would write %s)\n", npoints, sweep_commands_text(sp, cmds, sizeof cmds),
                dir);
        rc = -1;
    }
    if (!rc && !resume && sweep_file_exists(points_dir)) {
        fprintf(stderr, "hdpsgd sweep: error: %s already holds a sweep: use --resume to "
                        "continue it, or another -o DIR\n", dir);
        rc = EXIT_BAD_INPUT;
    }
    int fresh = !sweep_file_exists(points_dir);
    if (!rc && resume && !fresh)
        rc = sweep_check_digest(dir, sp, &digest);
    if (!rc && sweep_mkdir_p(points_dir) != 0) {
        fprintf(stderr, "hdpsgd sweep: error: %s: cannot create: %s\n", points_dir,
                strerror(errno));
        rc = EXIT_BAD_INPUT;
    }
    if (!rc && fresh)
        rc = sweep_write_digest(dir, sp, &digest);
    sweep_digest_free(&digest);
    if (!rc)
        fprintf(stderr, "hdpsgd sweep: %ld points x {%s} -> %s%s\n", npoints,
                sweep_commands_text(sp, cmds, sizeof cmds), dir, mpi ? " (MPI)" : "");
    return rc;
}

/* Run the points (under MPI: the next point from rank 0's shared counter) and return the
 * worst exit status. */
static int run_points(const sweep_spec *sp, const char *dir, long npoints, int threads, int mpi,
                      int rank)
{
    (void)mpi;
    int worst = 0;
    long done = 0;
#ifdef HDPSGD_HAVE_MPI
    MPI_Win win = MPI_WIN_NULL;
    long *counter = NULL;
    if (mpi) {
        MPI_Win_allocate(rank == 0 ? (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL,
                         MPI_COMM_WORLD, &counter, &win);
        if (rank == 0) *counter = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
    }
#endif
    for (;;) {
        long i;
#ifdef HDPSGD_HAVE_MPI
        if (mpi) {
            long one = 1;
            MPI_Fetch_and_op(&one, &i, MPI_LONG, 0, 0, MPI_SUM, win);
            MPI_Win_flush(0, win);
        } else
#endif
            i = done;
        if (i >= npoints) break;
        double t0 = hdp_seconds_now();
        int prc = run_point(sp, i, dir, threads);
        double seconds = hdp_seconds_now() - t0;
        done++;
        if (prc < 0)
            continue;
        if (prc == EXIT_IO || prc == EXIT_BAD_INPUT) {
            worst = prc;
            break;
        }
        if (prc > worst) worst = prc;
        fprintf(stderr, "hdpsgd sweep: [rank %d] point %ld of %ld done (%.2f s)\n", rank, i + 1,
                npoints, seconds);
    }
#ifdef HDPSGD_HAVE_MPI
    if (mpi) {
        MPI_Win_unlock_all(win);
        MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Win_free(&win);
    }
#endif
    return worst;
}

static int under_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

int cmd_sweep(int argc, char **argv)
{
    const cli_command *cmd = cli_find_command("sweep");
    cli_common common;
    out_dir = NULL;
    resume = 0;
    cli_mc_args_reset(&mc);
    int rc = cli_start(cmd, argc, argv, &common);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: the help was asked for and printed */
    if (common.npos != 1 || common.nsets) {
        fprintf(stderr, "hdpsgd sweep: error: give exactly one SWEEP.ini (put overrides in its [set] "
                        "section)\nUsage: hdpsgd %s\n", cli_usage_str(cmd));
        return EXIT_BAD_INPUT;
    }
    if ((rc = cli_mc_args_apply("sweep", &mc, &common))) return rc;
    int threads = cli_mc_threads(&mc);
    static sweep_spec spec;
    if ((rc = sweep_load_spec(common.pos[0], &spec))) return rc;
    const char *dir_name = out_dir ? out_dir : common.pos[0];
    if (strlen(dir_name) > SWEEP_DIR_MAX) {
        fprintf(stderr, "hdpsgd sweep: error: %s %s: the name is %zu characters long: at most %d "
                        "are accepted for the output folder\n", out_dir ? "-o" : "SWEEP.ini",
                dir_name, strlen(dir_name), SWEEP_DIR_MAX);
        sweep_spec_free(&spec);
        return EXIT_BAD_INPUT;
    }
    char dir[SWEEP_DIR_MAX + 8];
    if (out_dir) {
        snprintf(dir, sizeof dir, "%s", out_dir);
    } else {
        /* in the current directory (the sweep file's may be read-only, e.g. installed) */
        const char *base = strrchr(common.pos[0], '/');
        snprintf(dir, sizeof dir, "%s", base ? base + 1 : common.pos[0]);
        char *dot = strrchr(dir, '.');
        if (dot && dot != dir) *dot = '\0';
        strncat(dir, "-out", sizeof dir - strlen(dir) - 1);
    }
    long npoints = sweep_count_points(&spec);

    int rank = 0, size = 1, mpi = 0;
#ifdef HDPSGD_HAVE_MPI
    if (under_mpi()) {
        MPI_Init(NULL, NULL);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        mpi = 1;
    }
#else
    if (under_mpi())
        fprintf(stderr, "hdpsgd sweep: warning: started under mpirun, but this build has no MPI "
                        "support (install libopenmpi-dev and rebuild): every rank runs the whole "
                        "sweep\n");
#endif
    /* check every point before computing anything (bad input: exit 2, no files) */
    rc = rank == 0 ? prepare(&spec, dir, npoints, mpi) : 0;
#ifdef HDPSGD_HAVE_MPI
    if (mpi) MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
    if (rc) {
#ifdef HDPSGD_HAVE_MPI
        if (mpi) MPI_Finalize();
#endif
        sweep_spec_free(&spec);
        return rc < 0 ? 0 : rc; /* -1: the dry run ended */
    }
    int worst = run_points(&spec, dir, npoints, threads, mpi, rank);
    int failed = 0;
    if (rank == 0 && worst != EXIT_IO && worst != EXIT_BAD_INPUT) {
        failed = assemble(&spec, dir, npoints);
        if (failed < 0) worst = EXIT_IO;
        else fprintf(stderr, "hdpsgd sweep: %ld points, %d failed -> %s/results.csv\n", npoints,
                     failed, dir);
    }
#ifdef HDPSGD_HAVE_MPI
    if (mpi) MPI_Finalize();
#endif
    sweep_spec_free(&spec);
    return worst;
}
