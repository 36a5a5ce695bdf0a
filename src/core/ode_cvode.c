/*
 * ode_cvode.c — the risk ODE (risk_ode.h) on CVODE (docs/theory.md §3); see ode_cvode.h.
 *
 * State y = (D_0 .. D_{m-1}, R_upper, R_lower), or the parts asked for, in that order.
 * Jacobian (docs/theory.md §3, "structure worth exploiting"): for the bins
 *   J = diag(a) + u v^T (risk_ode.h), and the bound components are scalar (u, v are zero
 * there). The Newton matrix M = I - g J is solved by Sherman-Morrison in O(m):
 *   M^{-1} b = y + g z (v.y) / (1 - g v.z),  y = b / (1 - g a),  z = u / (1 - g a).
 * The linear solver is of type MATRIX_EMBEDDED. SUNDIALS 6.4 never calls setup
 * for that type (docs/theory.md §3, implementation note), so solve reads t, the
 * predicted state and gamma_BDF from CVodeGetNonlinearSystemData and builds
 * the factors itself.
 */
#include "core/ode_cvode.h"
#include "core/clock.h"
#include "hdpsgd/error.h"

#include <cvode/cvode.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_linearsolver.h>

typedef struct {
    const hdp_risk_ode *o;
    long nb;           /* bins in the state: m or 0 */
    long iu, il;       /* the bounds' indices in the state, or -1 */
    long len;          /* the state's length */
    void *cvode_mem;   /* for the linear solver */
    double *work;      /* nb: z = u / diag */
    char errmsg[512];  /* last CVODE error message */
} cv_data;

static int rhs(sunrealtype t, N_Vector yv, N_Vector ydot, void *user)
{
    cv_data *cd = user;
    if (hdp_cancel_requested()) /* the thread's cancel flag stops CVODE */
        return -1;
    const hdp_risk_ode *o = cd->o;
    const double *y = N_VGetArrayPointer(yv);
    double *f = N_VGetArrayPointer(ydot);
    hdp_rode_step st;
    hdp_rode_step_at(o, t, &st);
    if (cd->nb) {
        /* values only: the derivatives (three quadratures instead of one for non-Gaussian
         * noise) are for the Newton matrix, in ls_solve */
        hdp_rode_coef cf;
        hdp_rode_coefs(o, st.eta, st.q, hdp_rode_risk(o, y), 0, &cf);
        if (hdp_rode_rhs(o, &cf, y, f))
            return 1; /* not finite; recoverable: CVODE retries with a smaller step */
    }
    if (cd->iu >= 0 && !isfinite(f[cd->iu] = hdp_rode_bound_rhs(o, &st, 0, y[cd->iu])))
        return 1;
    if (cd->il >= 0 && !isfinite(f[cd->il] = hdp_rode_bound_rhs(o, &st, 1, y[cd->il])))
        return 1;
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

/* x = (I - gam J)^{-1} b on the bins: Sherman-Morrison; 0, or -1 when singular */
static int bins_solve(const cv_data *cd, const hdp_rode_step *st, double gam, const double *y,
                      const double *b, double *x)
{
    const hdp_risk_ode *o = cd->o;
    double *z = cd->work;
    hdp_rode_coef c1;
    hdp_rode_coefs(o, st->eta, st->q, hdp_rode_risk(o, y), 1, &c1);
    const hdp_rode_coef cf = c1; /* a copy the stores cannot alias: kept in registers */
    double vy = 0, vz = 0;
    hdp_rode_coef cb;
    for (long j = 0; j < cd->nb; j++) {
        double l = o->lambda[j];
        const hdp_rode_coef *cj = hdp_rode_bin(o, &cf, j, &cb); /* clip_weights = direction */
        double diag = 1.0 - gam * (hdp_rode_a(l, cj) + hdp_rode_disc_a(o, j, cj));
        x[j] = b[j] / diag;
        z[j] = hdp_rode_u(l, y[j], cj) / diag;
        double v = o->w[j] * l;
        vy += v * x[j];
        vz += v * z[j];
    }
    double denom = 1.0 - gam * vz;
    if (!(fabs(denom) > 1e-300) || !isfinite(denom))
        return -1;
    double coef = gam * vy / denom;
    for (long j = 0; j < cd->nb; j++)
        x[j] += coef * z[j];
    return 0;
}

static int ls_solve(SUNLinearSolver S, SUNMatrix A, N_Vector xv, N_Vector bv, sunrealtype tol)
{
    (void)A;
    (void)tol;
    cv_data *cd = S->content;
    sunrealtype tcur, gam, rl1;
    N_Vector ypred, yn, fn, zn1;
    void *ud;
    if (CVodeGetNonlinearSystemData(cd->cvode_mem, &tcur, &ypred, &yn, &fn, &gam, &rl1, &zn1,
                                    &ud) != CV_SUCCESS)
        return SUNLS_PACKAGE_FAIL_UNREC;
    const double *y = N_VGetArrayPointer(ypred);
    const double *b = N_VGetArrayPointer(bv);
    double *x = N_VGetArrayPointer(xv);
    hdp_rode_step st;
    hdp_rode_step_at(cd->o, tcur, &st);
    if (cd->nb && bins_solve(cd, &st, gam, y, b, x))
        return SUNLS_PACKAGE_FAIL_REC;
    /* the scalar bound components */
    if (cd->iu >= 0)
        x[cd->iu] = b[cd->iu] / (1.0 - gam * hdp_rode_bound_jac(cd->o, &st, 0, y[cd->iu]));
    if (cd->il >= 0)
        x[cd->il] = b[cd->il] / (1.0 - gam * hdp_rode_bound_jac(cd->o, &st, 1, y[cd->il]));
    for (long j = 0; j < cd->len; j++)
        if (!isfinite(x[j]))
            return SUNLS_PACKAGE_FAIL_REC;
    return SUNLS_SUCCESS;
}

static int ls_free(SUNLinearSolver S)
{
    if (!S)
        return SUNLS_SUCCESS;
    S->content = NULL; /* cv_data is owned by hdp_cvode_solve */
    SUNLinSolFreeEmpty(S);
    return SUNLS_SUCCESS;
}

static SUNLinearSolver sherman_morrison_new(SUNContext ctx, cv_data *cd)
{
    SUNLinearSolver S = SUNLinSolNewEmpty(ctx);
    if (!S)
        return NULL;
    S->ops->gettype = ls_type;
    S->ops->initialize = ls_init;
    S->ops->setup = ls_setup;
    S->ops->solve = ls_solve;
    S->ops->free = ls_free;
    S->content = cd;
    return S;
}

static void on_cvode_error(int code, const char *module, const char *function, char *msg,
                           void *user)
{
    cv_data *cd = user;
    (void)code;
    snprintf(cd->errmsg, sizeof cd->errmsg, "%s in %s: %s", module, function, msg);
}

/* ---- driver ---- */

/* Table schedules (docs/theory.md §5) have a kink at every knot, where
 * sigma~^2 = -(eta~^2)'/rho^2 jumps: the right-hand side is discontinuous there. The
 * integration never steps past the next knot stop (CVODE's stop time), stops exactly
 * on it and restarts CVODE there (CVodeReInit), so that no BDF step or history straddles
 * a jump: fewer failed steps than stepping across, and no loss of accuracy. Knots within
 * rounding of the last restart are skipped. Counters of the finished pieces accumulate. */
typedef struct {
    int next;       /* where the search for the next knot resumes */
    double t_start; /* time of the last (re)initialisation */
    long nfe, nst;  /* CVODE counters before the last restart */
} knot_walk;

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b)); }

/* Advance to tout (see knot_walk). */
static int advance(void *mem, const hdp_risk_ode *o, double tout, N_Vector y, sunrealtype *tret,
                   knot_walk *kw)
{
    int flag;
    double tk;
    while ((tk = hdp_rode_next_knot(o, &kw->next, kw->t_start)) <= tout) {
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
    if ((flag = CVodeSetStopTime(mem, isinf(tk) ? 1.0 : tk)) < 0)
        return flag;
    return CVode(mem, tout, y, tret, CV_NORMAL);
}

/* Name a CVODE return flag (CVodeGetReturnFlagName returns malloc'd memory). */
static void flag_name(int flag, char *buf, size_t size)
{
    char *name = CVodeGetReturnFlagName(flag);
    snprintf(buf, size, "%s", name ? name : "unknown flag");
    free(name);
}

/* output point i: the parts' values; non-zero when one is not finite */
static int put_point(const cv_data *cd, const double *y, long i, hdp_cvode_out *out)
{
    int bad = 0;
    if (cd->nb) {
        out->risk[i] = hdp_rode_risk(cd->o, y);
        bad |= !isfinite(out->risk[i]);
    }
    if (cd->iu >= 0) {
        out->upper[i] = y[cd->iu];
        bad |= !isfinite(out->upper[i]);
    }
    if (cd->il >= 0) {
        out->lower[i] = y[cd->il];
        bad |= !isfinite(out->lower[i]);
    }
    return bad;
}

/* the output points 1.. (points_done: those reached) */
static hdp_status integrate(cv_data *cd, void *mem, N_Vector y, const hdp_cvode_spec *spec,
                            long points, hdp_cvode_out *out, hdp_error *err)
{
    const double *yd = N_VGetArrayPointer(y);
    knot_walk kw = {1, 0.0, 0, 0};
    sunrealtype tret = 0;
    char fname[128];
    for (long i = 1; i < points; i++, out->points_done = i) {
        double tout = (double)i / (double)(points - 1);
        int flag = advance(mem, cd->o, tout, y, &tret, &kw);
        if (flag < 0 && hdp_cancel_requested())
            return hdp_fail(err, HDP_ECANCELLED, "ODE: cancelled at t = %.6g", (double)tret);
        if (flag < 0 && spec->tolerant)
            break;
        if (flag < 0) {
            flag_name(flag, fname, sizeof fname);
            const char *hint =
                flag == CV_TOO_MUCH_WORK ? "raise [ode] max_steps"
                : flag == CV_REPTD_RHSFUNC_ERR || flag == CV_RHSFUNC_FAIL
                    ? "the risk overflowed: is the learning rate past the stability limit "
                      "2/gamma (docs/theory.md §3)?"
                    : "try other [ode] rtol and atol";
            return hdp_fail(err, HDP_ENUMERIC,
                            "CVODE failed with %s at t = %.6g (next output t = %.6g): %s; %s",
                            fname, (double)tret, tout, cd->errmsg[0] ? cd->errmsg : "no message",
                            hint);
        }
        int bad = put_point(cd, yd, i, out);
        if (bad && spec->tolerant)
            break;
        if (bad)
            return hdp_fail(err, HDP_ENUMERIC,
                            "the risk is no longer finite at t = %.6g (learning rate past the "
                            "stability limit 2/gamma?)",
                            tout);
    }
    long nfe = 0, nst = 0;
    CVodeGetNumRhsEvals(mem, &nfe);
    CVodeGetNumSteps(mem, &nst);
    out->rhs_evals = nfe + kw.nfe;
    out->steps = nst + kw.nst;
    return HDP_OK;
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

hdp_status hdp_cvode_solve(const hdp_risk_ode *o, const hdp_cvode_spec *spec, long points,
                           hdp_cvode_out *out, hdp_error *err)
{
    hdp_status st = HDP_OK;
    SUNContext ctx = NULL;
    N_Vector y = NULL;
    void *mem = NULL;
    SUNLinearSolver LS = NULL;
    cv_data cd = {.o = o, .nb = spec->parts & HDP_CV_BINS ? o->m : 0, .iu = -1, .il = -1};
    cd.len = cd.nb;
    if (spec->parts & HDP_CV_UPPER)
        cd.iu = cd.len++;
    if (spec->parts & HDP_CV_LOWER)
        cd.il = cd.len++;
    out->points_done = out->steps = out->rhs_evals = 0;
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
    if (!cvode_memory_available(cd.len)) { /* SUNDIALS 6 crashes when a clone fails */
        st = hdp_fail(err, HDP_ENOMEM,
                      "out of memory for CVODE on %ld bins: it needs about %.3g GB (%d vectors "
                      "of %ld numbers); use fewer bins ([ode] bins = auto or a number)",
                      o->m, CVODE_VECTORS * 8.0 * (double)cd.len / 1e9, CVODE_VECTORS, cd.len);
        goto done;
    }
    y = N_VNew_Serial(cd.len, ctx);
    mem = CVodeCreate(CV_BDF, ctx);
    cd.work = malloc(sizeof(double) * (size_t)(cd.nb > 0 ? cd.nb : 1));
    if (!y || !mem || !cd.work) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory creating the CVODE problem (%ld states)",
                      cd.len);
        goto done;
    }
    double *yd = N_VGetArrayPointer(y);
    for (long j = 0; j < cd.len; j++) /* D_j(0) (r*^2/2 for theta* uniform on the sphere);
                                         the bounds start at R(0) */
        yd[j] = j < cd.nb && o->D0 ? o->D0[j] : o->R0;
    cd.cvode_mem = mem;
    CHECK(CVodeInit(mem, rhs, 0.0, y), "CVodeInit");
    CHECK(CVodeSetErrHandlerFn(mem, on_cvode_error, &cd), "CVodeSetErrHandlerFn");
    CHECK(CVodeSStolerances(mem, spec->rtol, spec->atol), "CVodeSStolerances");
    CHECK(CVodeSetUserData(mem, &cd), "CVodeSetUserData");
    CHECK(CVodeSetMaxNumSteps(mem, spec->max_steps), "CVodeSetMaxNumSteps");
    CHECK(CVodeSetStopTime(mem, 1.0), "CVodeSetStopTime");
    LS = sherman_morrison_new(ctx, &cd);
    if (!LS) {
        st = hdp_fail(err, HDP_ENOMEM, "out of memory creating the linear solver");
        goto done;
    }
    CHECK(CVodeSetLinearSolver(mem, LS, NULL), "CVodeSetLinearSolver");
#undef CHECK

    out->setup_end = hdp_seconds_now(); /* not timed */
    put_point(&cd, yd, 0, out);
    out->points_done = 1;
    st = integrate(&cd, mem, y, spec, points, out, err);
done:
    if (mem)
        CVodeFree(&mem);
    if (LS)
        SUNLinSolFree(LS);
    if (y)
        N_VDestroy(y);
    if (ctx)
        SUNContext_Free(&ctx);
    free(cd.work);
    return st;
}
