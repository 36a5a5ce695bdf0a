/*
 * ode.c — the risk ODE of homogenized DP-SGD on CVODE (docs/theory.md §3).
 *
 * State y = (D_0 .. D_{m-1}, R_upper, R_lower), length m + 2.
 *   f_j     = -2 lambda_j eta mu(R) D_j + gamma lambda_j eta^2 V(R) + q,   R = sum_j w_j lambda_j D_j
 *   f_upper = -2 lambda_min eta mu(Ru) Ru + lambda_max gamma eta^2 V(Ru) + q
 *   f_lower = -2 lambda_max eta mu(Rl) Rl +            gamma eta^2 V(Rl) + q
 * with q = 2 c^2 gamma^2 sigma~^2 (0 when rho = inf).
 *
 * Jacobian (docs/theory.md §3, "structure worth exploiting"): for the bins
 *   J = diag(a) + u v^T,  a_j = -2 lambda_j eta mu,
 *   u_j = lambda_j (-2 eta mu'(R) D_j + gamma eta^2 V'(R)),  v_k = w_k lambda_k,
 * and the two bound components are scalar (u, v are zero there). The Newton
 * matrix M = I - g J is solved by Sherman-Morrison in O(m):
 *   M^{-1} b = y + g z (v.y) / (1 - g v.z),  y = b / (1 - g a),  z = u / (1 - g a).
 * The linear solver is of type MATRIX_EMBEDDED. SUNDIALS 6.4 never calls setup
 * for that type (docs/theory.md §3, implementation note), so solve reads t, the
 * predicted state and gamma_BDF from CVodeGetNonlinearSystemData and builds
 * the factors itself.
 */
#include "hdpsgd/ode.h"
#include "core/check.h"
#include "core/ode_erk.h"

#include <cvode/cvode.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_linearsolver.h>
#include <time.h>

#include "hdpsgd/clip.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/spectrum.h"

typedef struct {
    long m;
    const double *lambda, *w;
    double lmin, lmax;
    double gamma, c, rho;
    hdp_clip *clip;
    hdp_schedule sched;
    void *cvode_mem;   /* for the linear solver */
    double *work;      /* m: z = u / diag */
    char errmsg[512];  /* last CVODE error message */
} ode_data;

static double noise_term(const ode_data *od, double t)
{
    if (isinf(od->rho))
        return 0.0;
    return 2.0 * od->c * od->c * od->gamma * od->gamma * hdp_sched_sigma2(&od->sched, t);
}

static double risk_of(const ode_data *od, const double *D)
{
    double R = 0;
    for (long j = 0; j < od->m; j++)
        R += od->w[j] * od->lambda[j] * D[j];
    return R;
}

static int rhs(sunrealtype t, N_Vector yv, N_Vector ydot, void *user)
{
    ode_data *od = user;
    if (hdp_cancel_requested()) /* issue 29: the thread's cancel flag stops CVODE */
        return -1;
    const double *y = N_VGetArrayPointer(yv);
    double *f = N_VGetArrayPointer(ydot);
    long m = od->m;
    double eta = hdp_sched_eta(&od->sched, t);
    double q = noise_term(od, t);
    double g = od->gamma;
    hdp_clip_values cv;

    /* values only: the derivatives (three quadratures instead of one for non-Gaussian
     * noise) are for the Newton matrix, in ls_solve */
    double R = risk_of(od, y);
    hdp_clip_eval_values(od->clip, R, &cv);
    for (long j = 0; j < m; j++) {
        double l = od->lambda[j];
        f[j] = -2.0 * l * eta * cv.mu * y[j] + g * l * eta * eta * cv.V + q;
    }
    double Ru = y[m], Rl = y[m + 1];
    hdp_clip_eval_values(od->clip, Ru, &cv);
    f[m] = -2.0 * od->lmin * eta * cv.mu * Ru + od->lmax * g * eta * eta * cv.V + q;
    hdp_clip_eval_values(od->clip, Rl, &cv);
    f[m + 1] = -2.0 * od->lmax * eta * cv.mu * Rl + g * eta * eta * cv.V + q;
    for (long j = 0; j < m + 2; j++)
        if (!isfinite(f[j]))
            return 1; /* recoverable: CVODE retries with a smaller step */
    return 0;
}

/* ---- the Sherman-Morrison linear solver ---- */

static SUNLinearSolver_Type ls_type(SUNLinearSolver S)
{
    (void)S;
    return SUNLINEARSOLVER_MATRIX_EMBEDDED;
}

static int ls_init(SUNLinearSolver S) { (void)S; return SUNLS_SUCCESS; }
static int ls_setup(SUNLinearSolver S, SUNMatrix A) { (void)S; (void)A; return SUNLS_SUCCESS; }

static int ls_solve(SUNLinearSolver S, SUNMatrix A, N_Vector xv, N_Vector bv, sunrealtype tol)
{
    (void)A;
    (void)tol;
    ode_data *od = S->content;
    sunrealtype tcur, gam, rl1;
    N_Vector ypred, yn, fn, zn1;
    void *ud;
    if (CVodeGetNonlinearSystemData(od->cvode_mem, &tcur, &ypred, &yn, &fn, &gam, &rl1, &zn1,
                                    &ud) != CV_SUCCESS)
        return SUNLS_PACKAGE_FAIL_UNREC;
    const double *y = N_VGetArrayPointer(ypred);
    const double *b = N_VGetArrayPointer(bv);
    double *x = N_VGetArrayPointer(xv);
    double *z = od->work;
    long m = od->m;
    double eta = hdp_sched_eta(&od->sched, tcur);
    double g = od->gamma;
    hdp_clip_values cv;

    double R = risk_of(od, y);
    hdp_clip_eval(od->clip, R, &cv);
    double vy = 0, vz = 0;
    for (long j = 0; j < m; j++) {
        double l = od->lambda[j];
        double diag = 1.0 + gam * 2.0 * l * eta * cv.mu;
        double u = l * (-2.0 * eta * cv.dmu * y[j] + g * eta * eta * cv.dV);
        x[j] = b[j] / diag;
        z[j] = u / diag;
        double v = od->w[j] * l;
        vy += v * x[j];
        vz += v * z[j];
    }
    double denom = 1.0 - gam * vz;
    if (!(fabs(denom) > 1e-300) || !isfinite(denom))
        return SUNLS_PACKAGE_FAIL_REC;
    double coef = gam * vy / denom;
    for (long j = 0; j < m; j++)
        x[j] += coef * z[j];

    /* the two scalar bound components */
    double Ru = y[m], Rl = y[m + 1];
    hdp_clip_eval(od->clip, Ru, &cv);
    double Ju = -2.0 * od->lmin * eta * (cv.dmu * Ru + cv.mu) + od->lmax * g * eta * eta * cv.dV;
    hdp_clip_eval(od->clip, Rl, &cv);
    double Jl = -2.0 * od->lmax * eta * (cv.dmu * Rl + cv.mu) + g * eta * eta * cv.dV;
    x[m] = b[m] / (1.0 - gam * Ju);
    x[m + 1] = b[m + 1] / (1.0 - gam * Jl);
    for (long j = 0; j < m + 2; j++)
        if (!isfinite(x[j]))
            return SUNLS_PACKAGE_FAIL_REC;
    return SUNLS_SUCCESS;
}

static int ls_free(SUNLinearSolver S)
{
    if (!S)
        return SUNLS_SUCCESS;
    S->content = NULL; /* ode_data is owned by hdp_ode_solve */
    SUNLinSolFreeEmpty(S);
    return SUNLS_SUCCESS;
}

static SUNLinearSolver sherman_morrison_new(SUNContext ctx, ode_data *od)
{
    SUNLinearSolver S = SUNLinSolNewEmpty(ctx);
    if (!S)
        return NULL;
    S->ops->gettype = ls_type;
    S->ops->initialize = ls_init;
    S->ops->setup = ls_setup;
    S->ops->solve = ls_solve;
    S->ops->free = ls_free;
    S->content = od;
    return S;
}

static void on_cvode_error(int code, const char *module, const char *function, char *msg,
                           void *user)
{
    ode_data *od = user;
    (void)code;
    snprintf(od->errmsg, sizeof od->errmsg, "%s in %s: %s", module, function, msg);
}

/* ---- driver ---- */

/* Table schedules (docs/theory.md §5) have a kink at every knot, where
 * sigma~^2 = -(eta~^2)'/rho^2 jumps: the right-hand side is discontinuous there. The
 * integration never steps past the next interior knot (CVODE's stop time), stops exactly
 * on it and restarts CVODE there (CVodeReInit), so that no BDF step or history straddles
 * a jump: fewer failed steps than stepping across, and no loss of accuracy. Knots within
 * rounding of the last restart are skipped. Counters of the finished pieces accumulate. */
typedef struct {
    int next;       /* index of the next interior knot */
    double t_start; /* time of the last (re)initialisation */
    long nfe, nst;  /* CVODE counters before the last restart */
} knot_walk;

static double next_stop(const hdp_schedule *s, const knot_walk *kw)
{
    return (s->kind == HDP_SCHED_TABLE && kw->next < s->len - 1) ? s->t[kw->next] : 1.0;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b)); }

/* Advance to tout (see knot_walk). */
static int advance(void *mem, const ode_data *od, double tout, N_Vector y, sunrealtype *tret,
                   knot_walk *kw)
{
    const hdp_schedule *s = &od->sched;
    int flag;
    while (s->kind == HDP_SCHED_TABLE && kw->next < s->len - 1 && s->t[kw->next] <= tout) {
        double tk = s->t[kw->next++];
        if (near(kw->t_start, tk))
            continue;
        if ((flag = CVodeSetStopTime(mem, tk)) < 0 || (flag = CVode(mem, tk, y, tret, CV_NORMAL)) < 0)
            return flag;
        long nfe = 0, nst = 0;
        CVodeGetNumRhsEvals(mem, &nfe);
        CVodeGetNumSteps(mem, &nst);
        kw->nfe += nfe;
        kw->nst += nst;
        if ((flag = CVodeReInit(mem, tk, y)) < 0)
            return flag;
        kw->t_start = *tret = tk;
    }
    if (near(kw->t_start, tout))
        return CV_SUCCESS; /* restarted at (or within rounding of) tout */
    if ((flag = CVodeSetStopTime(mem, next_stop(s, kw))) < 0)
        return flag;
    return CVode(mem, tout, y, tret, CV_NORMAL);
}

void hdp_ode_result_free(hdp_ode_result *res)
{
    if (!res)
        return;
    double **arrays[] = {&res->t, &res->risk, &res->upper, &res->lower,
                         &res->mu, &res->nu, &res->eta, &res->sigma2};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        free(*arrays[i]);
        *arrays[i] = NULL;
    }
    res->points = 0;
}

static hdp_status alloc_result(hdp_ode_result *res, long points, hdp_error *err)
{
    memset(res, 0, sizeof *res);
    res->points = points;
    double **arrays[] = {&res->t, &res->risk, &res->upper, &res->lower,
                         &res->mu, &res->nu, &res->eta, &res->sigma2};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        *arrays[i] = calloc((size_t)points, sizeof(double));
        if (!*arrays[i]) {
            hdp_ode_result_free(res);
            return hdp_fail(err, HDP_ENOMEM, "out of memory for %ld output points", points);
        }
    }
    return HDP_OK;
}

static void record_values(hdp_ode_result *res, long i, double t, double R, double Ru, double Rl,
                          ode_data *od)
{
    hdp_clip_values cv;
    hdp_clip_eval(od->clip, R, &cv);
    res->t[i] = t;
    res->risk[i] = R;
    res->upper[i] = Ru;
    res->lower[i] = Rl;
    res->mu[i] = cv.mu;
    res->nu[i] = cv.nu;
    res->eta[i] = hdp_sched_eta(&od->sched, t);
    res->sigma2[i] = hdp_sched_sigma2(&od->sched, t);
}

static void record(hdp_ode_result *res, long i, double t, const double *y, ode_data *od)
{
    record_values(res, i, t, risk_of(od, y), y[od->m], y[od->m + 1], od);
}

/* auto: DOP853 when the stiffness estimate S = 2 lambda_max int eta~ dt is at most this.
 * DOP853 needs about S/10 steps for stability alone; a step costs it ~2 us of scalar work
 * (twelve stages' clipping factors) plus ~10 ns per bin, a CVODE step ~1 us plus ~80 ns per
 * bin, and CVODE takes 250-600 steps whatever S. Measured break-even (Release build, 101
 * points): S ~ 2500 for one bin, ~16000 for 64 bins; DOP853 still 2x faster at S = 76000
 * and 10^5 bins. Student-t noise makes each clipping factor a quadrature, which DOP853
 * evaluates about three times as often per step: there the one-bin threshold. */
static double erk_max_stiffness(const hdp_model *m, long bins)
{
    if (m->noise == HDP_NOISE_STUDENT)
        return 2000.0;
    return fmin(30000.0, 2000.0 + 200.0 * (double)bins);
}

/* DOP853 (ode_erk.c) on the bins, then on the two bounds apart (with lambda_min = lambda_max
 * they are R itself); 0 and res filled (risk before the final noise; steps: the bins', the
 * steps of R; rhs_evals: both integrations'), or -1 with why set (the caller falls back to
 * CVODE or fails). */
static int solve_erk(const hdp_model *m, ode_data *od, double R0, long points,
                     hdp_ode_result *res, const char **why, double *t_reached)
{
    hdp_erk_problem p = {od->m, od->lambda, od->w, od->lmin, od->lmax, m->gamma, m->c,
                         m->rho, od->clip, &od->sched, m->rtol, m->atol, m->max_steps, 0};
    /* the outputs go to risk, upper, lower; mu, nu, eta, sigma2 follow from them */
    hdp_erk_out out = {res->risk, res->upper, res->lower, 0, 0, 0, 0, NULL};
    int rc = hdp_erk_solve(&p, R0, points, &out);
    res->steps = out.steps;
    res->rhs_evals = out.rhs_evals;
    if (rc == 0 && od->lmin == od->lmax) {
        memcpy(res->upper, res->risk, sizeof(double) * (size_t)points);
        memcpy(res->lower, res->risk, sizeof(double) * (size_t)points);
    } else if (rc == 0) {
        p.bounds = 1;
        rc = hdp_erk_solve(&p, R0, points, &out);
        res->rhs_evals += out.rhs_evals;
    }
    if (rc != 0) {
        *why = out.why;
        *t_reached = out.t_reached;
        return -1;
    }
    for (long i = 0; i < points; i++) {
        double t = (double)i / (double)(points - 1);
        record_values(res, i, t, res->risk[i], res->upper[i], res->lower[i], od);
    }
    snprintf(res->solver, sizeof res->solver, "dop853");
    return 0;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Name a CVODE return flag (CVodeGetReturnFlagName returns malloc'd memory). */
static void flag_name(int flag, char *buf, size_t size)
{
    char *name = CVodeGetReturnFlagName(flag);
    snprintf(buf, size, "%s", name ? name : "unknown flag");
    free(name);
}

/* CVODE's N_VClone (SUNDIALS 6) writes through the NULL that a failed clone returns, so its
 * vectors must be there before it asks: CVodeInit clones 13 (BDF of order 5), the Newton
 * solver and the linear solver's interface about 5 more, and y; allocated once here (as
 * separate blocks, as CVODE will) and freed, with 2 to spare. */
#define CVODE_VECTORS 20

static int cvode_memory_available(long len)
{
    void *v[CVODE_VECTORS];
    int k = 0;
    while (k < CVODE_VECTORS && (v[k] = malloc(sizeof(double) * (size_t)len)))
        k++;
    for (int i = 0; i < k; i++)
        free(v[i]);
    return k == CVODE_VECTORS;
}

/* CVODE (BDF with the Sherman-Morrison linear solver) on the bins and the two bounds;
 * *t0: the start of the timing, moved past the setup unless DOP853 was tried first
 * (erk_failed: the time of both is counted). */
static hdp_status solve_cvode(const hdp_model *m, ode_data *od, double R0, long points,
                              int erk_failed, double *t0, hdp_ode_result *res, hdp_error *err)
{
    hdp_status st = HDP_OK;
    SUNContext ctx = NULL;
    N_Vector y = NULL;
    void *mem = NULL;
    SUNLinearSolver LS = NULL;
    long len = od->m + 2;
    int flag;
    char fname[128];
#define CHECK(call, what)                                                                     \
    do {                                                                                      \
        flag = (call);                                                                        \
        if (flag < 0) {                                                                       \
            flag_name(flag, fname, sizeof fname);                                             \
            st = hdp_fail(err, flag == CV_MEM_FAIL ? HDP_ENOMEM : HDP_ENUMERIC,               \
                          "CVODE setup failed in %s: %s", what, fname);                       \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

    if (SUNContext_Create(NULL, &ctx) != 0) {
        st = hdp_fail(err, HDP_ENOMEM, "SUNContext_Create failed");
        goto done;
    }
    if (!cvode_memory_available(len)) { /* issue 29: SUNDIALS 6 crashes when a clone fails */
        st = hdp_fail(err, HDP_ENOMEM,
                      "out of memory for CVODE on %ld bins: it needs about %.3g GB (%d vectors "
                      "of %ld numbers); use fewer bins ([ode] bins = auto or a number)",
                      od->m, CVODE_VECTORS * 8.0 * (double)len / 1e9, CVODE_VECTORS, len);
        goto done;
    }
    y = N_VNew_Serial(len, ctx);
    mem = CVodeCreate(CV_BDF, ctx);
    if (!y || !mem) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory creating the CVODE problem (%ld states)", len);
        goto done;
    }
    double *yd = N_VGetArrayPointer(y);
    for (long j = 0; j < od->m; j++)
        yd[j] = R0; /* D_j(0) = r*^2/2 for theta* uniform on the sphere */
    yd[od->m] = yd[od->m + 1] = R0;
    od->cvode_mem = mem;
    CHECK(CVodeInit(mem, rhs, 0.0, y), "CVodeInit");
    CHECK(CVodeSetErrHandlerFn(mem, on_cvode_error, od), "CVodeSetErrHandlerFn");
    CHECK(CVodeSStolerances(mem, m->rtol, m->atol), "CVodeSStolerances");
    CHECK(CVodeSetUserData(mem, od), "CVodeSetUserData");
    CHECK(CVodeSetMaxNumSteps(mem, m->max_steps), "CVodeSetMaxNumSteps");
    CHECK(CVodeSetStopTime(mem, 1.0), "CVodeSetStopTime");
    LS = sherman_morrison_new(ctx, od);
    if (!LS) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory creating the linear solver");
        goto done;
    }
    CHECK(CVodeSetLinearSolver(mem, LS, NULL), "CVodeSetLinearSolver");
#undef CHECK

    if (!erk_failed)
        *t0 = now_seconds(); /* the setup of CVODE is not timed */
    record(res, 0, 0.0, yd, od);
    knot_walk kw = {1, 0.0, 0, 0};
    sunrealtype tret = 0;
    for (long i = 1; i < points; i++) {
        double tout = (double)i / (double)(points - 1);
        flag = advance(mem, od, tout, y, &tret, &kw);
        if (flag < 0 && hdp_cancel_requested()) {
            st = hdp_fail(err, HDP_ECANCELLED, "ODE: cancelled at t = %.6g", (double)tret);
            goto done;
        }
        if (flag < 0) {
            flag_name(flag, fname, sizeof fname);
            const char *hint =
                flag == CV_TOO_MUCH_WORK ? "raise [ode] max_steps"
                : flag == CV_REPTD_RHSFUNC_ERR || flag == CV_RHSFUNC_FAIL
                    ? "the risk overflowed: is the learning rate past the stability limit "
                      "2/gamma (docs/theory.md §3)?"
                    : "try other [ode] rtol and atol";
            st = hdp_fail(err, HDP_ENUMERIC,
                          "CVODE failed with %s at t = %.6g (next output t = %.6g): %s; %s",
                          fname, (double)tret, tout, od->errmsg[0] ? od->errmsg : "no message",
                          hint);
            goto done;
        }
        record(res, i, tout, yd, od);
        if (!isfinite(res->risk[i]) || !isfinite(res->upper[i]) || !isfinite(res->lower[i])) {
            st = hdp_fail(err, HDP_ENUMERIC,
                          "the risk is no longer finite at t = %.6g (learning rate past the "
                          "stability limit 2/gamma?)",
                          tout);
            goto done;
        }
    }
    long nfe = 0, nst = 0;
    CVodeGetNumRhsEvals(mem, &nfe);
    CVodeGetNumSteps(mem, &nst);
    res->rhs_evals = nfe + kw.nfe;
    res->steps = nst + kw.nst;
done:
    if (mem)
        CVodeFree(&mem);
    if (LS)
        SUNLinSolFree(LS);
    if (y)
        N_VDestroy(y);
    if (ctx)
        SUNContext_Free(&ctx);
    return st;
}

/* final-iterate noise (docs/theory.md §3): the last step adds 2 C_clip sigma_{n-1} xi */
static void add_final_noise(const hdp_model *m, const ode_data *od, long points,
                            hdp_ode_result *res)
{
    long last = points - 1;
    double eta1 = hdp_sched_eta(&od->sched, 1.0);
    res->final_noise =
        isinf(m->rho) ? 0.0 : 2.0 * m->c * m->c * m->gamma * m->gamma * eta1 * eta1 / (m->rho * m->rho);
    res->risk_before_final_noise = res->risk[last];
    res->risk[last] += res->final_noise;
    res->upper[last] += res->final_noise;
    res->lower[last] += res->final_noise;
    res->final_risk = res->risk[last];
}

/* Integrate on the bins of spec with `points` output points (docs/theory.md §3): DOP853 when the
 * problem is not too stiff for it (or asked for), else or when it fails CVODE. */
static hdp_status solve_binned(const hdp_model *m, const hdp_spectrum *sp, long points,
                               hdp_ode_result *res, hdp_error *err)
{
    hdp_status st = alloc_result(res, points, err);
    if (st != HDP_OK)
        return st;
    const hdp_spectrum spec = *sp; /* borrowed */
    ode_data od;
    memset(&od, 0, sizeof od);
    od.m = spec.m;
    od.lambda = spec.bin_lambda;
    od.w = spec.bin_weight;
    od.lmin = spec.lambda_min;
    od.lmax = spec.lambda_max;
    od.gamma = m->gamma;
    od.c = m->c;
    od.rho = m->rho;
    hdp_sched_from_model(m, &od.sched);
    od.clip = hdp_clip_alloc(m->noise, m->tau2, m->noise_df, m->c);
    od.work = malloc(sizeof(double) * (size_t)spec.m);
    res->bins = spec.m;
    res->eta_sup = hdp_sched_eta_sup(&od.sched);
    res->stable = res->eta_sup < 2.0 / m->gamma;
    if (!od.clip || !od.work) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory for the ODE of %ld bins (%.3g GB)", spec.m,
                      8.0 * (double)spec.m / 1e9);
        goto done;
    }

    double R0 = 0.5 * m->target_radius * m->target_radius;
    double t0 = now_seconds();
    int erk_failed = 0, erk_done = 0;
    snprintf(res->solver, sizeof res->solver, "cvode");
    if (m->ode_solver == HDP_ODE_DOP853 ||
        (m->ode_solver == HDP_ODE_AUTO &&
         hdp_erk_stiffness(&od.sched, od.lmax) <= erk_max_stiffness(m, spec.m))) {
        const char *why = "";
        double t_reached = 0;
        erk_done = solve_erk(m, &od, R0, points, res, &why, &t_reached) == 0;
        if (!erk_done && (!strcmp(why, HDP_ERK_CANCELLED) || !strcmp(why, HDP_ERK_NOMEM))) {
            st = !strcmp(why, HDP_ERK_CANCELLED)
                     ? hdp_fail(err, HDP_ECANCELLED, "ODE: cancelled at t = %.6g", t_reached)
                     : hdp_fail(err, HDP_ENOMEM, "out of memory for DOP853 on %ld bins (about "
                                "%.3g GB)", spec.m, 5 * 8.0 * (double)spec.m / 1e9);
            goto done;
        }
        if (!erk_done && m->ode_solver == HDP_ODE_DOP853) {
            st = hdp_fail(err, HDP_ENUMERIC, "DOP853 failed at t = %.6g: %s; try [ode] solver = cvode",
                          t_reached, why);
            goto done;
        }
        if (!erk_done) {
            erk_failed = 1; /* CVODE solves it: its counters, the time of both */
            res->steps = res->rhs_evals = 0;
        }
    }
    if (!erk_done && (st = solve_cvode(m, &od, R0, points, erk_failed, &t0, res, err)) != HDP_OK)
        goto done;
    res->solve_seconds = now_seconds() - t0;
    add_final_noise(m, &od, points, res);
done:
    hdp_clip_free(od.clip);
    free(od.work);
    return st;
}

/* bins = auto (issue 7): log-spaced bins with two-node Gauss quadrature per bin
 * (hdp_spectrum_bin_log), refined by doubling from 8 bins until the final risk
 * of two successive binnings differs by at most spectrum_tol (relative); the
 * finer of the two is kept. A spectrum with few distinct eigenvalues (<= 64, or
 * fewer than the next doubling) keeps one bin per distinct eigenvalue, which is
 * exact. The trial solves use two output points; their wall time is reported
 * apart from the final solve (binning_seconds). */
static hdp_status choose_bins(const hdp_model *m, hdp_spectrum *spec, hdp_ode_result *res,
                              hdp_error *err)
{
    long distinct = hdp_spectrum_distinct(spec);
    double t0 = now_seconds(), prev = NAN;
    for (long k = 8; 2 * k < distinct && distinct > 64; k *= 2) {
        hdp_status st = hdp_spectrum_bin_log(spec, k, err);
        if (st != HDP_OK)
            return st;
        hdp_ode_result trial;
        st = solve_binned(m, spec, 2, &trial, err);
        double r = trial.final_risk;
        hdp_ode_result_free(&trial);
        if (st != HDP_OK)
            return st;
        if (isfinite(prev) && fabs(r - prev) <= m->spectrum_tol * fabs(r)) {
            res->binning_seconds = now_seconds() - t0;
            return HDP_OK;
        }
        prev = r;
    }
    /* not converged before reaching the distinct eigenvalues: use them all */
    hdp_spectrum_free(spec);
    hdp_status st = hdp_spectrum_build(m, spec, err);
    res->binning_seconds = now_seconds() - t0;
    return st;
}

/* bins = auto refines spec in place (choose_bins); then the solve on its bins */
static hdp_status solve_spectrum(const hdp_model *m, hdp_spectrum *spec, hdp_ode_result *res,
                                 hdp_error *err)
{
    hdp_status st = HDP_OK;
    if (m->bins == HDP_BINS_AUTO)
        st = choose_bins(m, spec, res, err);
    double binning = res->binning_seconds;
    if (st == HDP_OK)
        st = solve_binned(m, spec, m->points, res, err);
    res->binning_seconds = binning;
    return st;
}

hdp_status hdp_ode_solve(const hdp_model *m, hdp_ode_result *res, hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, res);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    memset(res, 0, sizeof *res);
    hdp_spectrum spec;
    hdp_status st = hdp_spectrum_build(m, &spec, err);
    if (st == HDP_OK)
        st = solve_spectrum(m, &spec, res, err);
    hdp_spectrum_free(&spec);
    return st;
}

hdp_status hdp_ode_solve_problem(const hdp_model *m, const hdp_problem *pb, hdp_ode_result *res,
                                 hdp_error *err)
{
    HDP_ZERO(res);
    HDP_REQUIRE(err, m);
    HDP_REQUIRE(err, pb);
    HDP_REQUIRE(err, res);
    if (hdp_model_check(m, err) != HDP_OK)
        return HDP_EINPUT;
    if (hdp_problem_check(pb, m, "hdp_ode_solve_problem", err) != HDP_OK)
        return HDP_EINPUT;
    if (m->bins != HDP_BINS_AUTO)
        return solve_binned(m, &pb->spec, m->points, res, err);
    hdp_spectrum spec; /* bins = auto refines the bins: on a copy */
    hdp_status st = hdp_spectrum_copy(&pb->spec, &spec, err);
    if (st == HDP_OK)
        st = solve_spectrum(m, &spec, res, err);
    hdp_spectrum_free(&spec);
    return st;
}
