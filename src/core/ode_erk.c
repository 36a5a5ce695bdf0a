/*
 * ode_erk.c — the risk ODE of docs/theory.md §3 with DOP853 (see ode_erk.h).
 *
 * Two integrations with their own steps: the bins D_0..D_{m-1} (the risk), then the two
 * scalar bounds (docs/theory.md §3), which do not feed back into R. Together, the lower bound
 * (decay 2 lambda_max eta mu(R_lower), the stiffest component) set the bins' steps through the
 * error norm: 74 steps instead of 51 at 1000 bins, 143 instead of 98 at 10^4 (issue 20's
 * benchmark model). The bins' right-hand side is
 * affine in each D_j once the scalars of a stage are known:
 *   f_j = lambda_j (alpha D_j + beta) + q,  alpha = -2 eta mu(R), beta = gamma eta^2 V(R),
 * with R = sum_j w_j lambda_j D_j. So every stage of a step is, bin by bin, a polynomial in
 * lambda_j applied to the step's starting state y_j:
 *   Y_i = P_i(lambda) y + Q_i(lambda),  K_i = lambda (alpha_i Y_i + beta_i) + q_i
 *       = A_i(lambda) y + B_i(lambda),  A_i = alpha_i lambda P_i,
 *   B_i = alpha_i lambda Q_i + beta_i lambda + q_i,  P_i = 1 + h sum_k a_ik A_k,  Q_i = h sum_k a_ik B_k,
 * of degree i (A_i, B_i: i + 1), and the stage's risk needs only the moments of y:
 *   R_i = sum_d P_i[d] M_(d+1) + Q_i[d] N_(d+1),  M_d = sum_j w_j lambda_j^d y_j,  N_d = sum_j w_j lambda_j^d.
 * The twelve stages are scalar work; one pass over the bins per step evaluates the new
 * state y + h sum b_k K_k and the two error estimates (polynomials of degree 12), the error
 * sums, and the moments M_1..M_12 of the new state for the next step. The rounding of the
 * polynomial form grows like e^(h |alpha| lambda) for the stiffest bins, which the step
 * control keeps within DOP853's stability interval (h |alpha| lambda_max <~ 6): relative
 * 1e-14 at worst. Step control as Hairer's dop853 and SciPy's DOP853: the error norm
 *   |h| e5^2 / sqrt((e5^2 + 0.01 e3^2) N),  e = ||(sum E_k K_k) / sc||_2,
 *   sc = atol + rtol max(|y|, |y_new|),
 * factor 0.9 err^(-1/8) within [0.2, 10], no growth right after a rejection.
 * Sums over bins use eight fixed partial sums (element j to sum j mod 8) added as a tree,
 * and the file is compiled without floating-point contraction: every clone (AVX-512,
 * AVX2, baseline) gives the same bits.
 */
#include "core/ode_erk.h"
#include "hdpsgd/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* HDP_ODE_ERK_BASELINE: one baseline build (tests/test_kernels.c compares it with the
 * library's clones) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(HDP_ODE_ERK_BASELINE)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

#define BLK 512 /* bins per block: a multiple of 8 */

/* DOP853 (Hairer, Norsett, Wanner; the coefficients of Hairer's dop853.f) */
static const double dp_c[12] = {0.0, 0.05260015195876773, 0.0789002279381516, 0.1183503419072274, 0.2816496580927726, 0.3333333333333333, 0.25, 0.3076923076923077, 0.6512820512820513, 0.6, 0.8571428571428571, 1.0};
static const double dp_a[12][12] = {
    {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.05260015195876773, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.0197250569845379, 0.0591751709536137, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.02958758547680685, 0.0, 0.08876275643042054, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.2413651341592667, 0.0, -0.8845494793282861, 0.924834003261792, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.037037037037037035, 0.0, 0.0, 0.17082860872947386, 0.12546768756682242, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.037109375, 0.0, 0.0, 0.17025221101954405, 0.06021653898045596, -0.017578125, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.03709200011850479, 0.0, 0.0, 0.17038392571223998, 0.10726203044637328, -0.015319437748624402, 0.008273789163814023, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.6241109587160757, 0.0, 0.0, -3.3608926294469414, -0.868219346841726, 27.59209969944671, 20.154067550477894, -43.48988418106996, 0.0, 0.0, 0.0, 0.0},
    {0.47766253643826434, 0.0, 0.0, -2.4881146199716677, -0.590290826836843, 21.230051448181193, 15.279233632882423, -33.28821096898486, -0.020331201708508627, 0.0, 0.0, 0.0},
    {-0.9371424300859873, 0.0, 0.0, 5.186372428844064, 1.0914373489967295, -8.149787010746927, -18.52006565999696, 22.739487099350505, 2.4936055526796523, -3.0467644718982196, 0.0, 0.0},
    {2.273310147516538, 0.0, 0.0, -10.53449546673725, -2.0008720582248625, -17.9589318631188, 27.94888452941996, -2.8589982771350235, -8.87285693353063, 12.360567175794303, 0.6433927460157636, 0.0},
};
static const double dp_b[12] = {0.054293734116568765, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, 0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259};
static const double dp_e3[12] = {-0.18980075407240762, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, -0.4226823213237919, -0.1521609496625161, 0.20136540080403034, 0.02265179219836082};
static const double dp_e5[12] = {0.01312004499419488, 0.0, 0.0, 0.0, 0.0, -1.2251564463762044, -0.4957589496572502, 1.6643771824549864, -0.35032884874997366, 0.3341791187130175, 0.08192320648511571, -0.022355307863886294};

static double tree8(const double s[8])
{
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* s[l] += sum over j = l mod 8 of a_j b_j for j in [j0, e), j0 a multiple of 8 */
static inline void lanes(long j0, long e, const double *a, const double *b, double s[8])
{
    long j = j0;
    for (; j + 8 <= e; j += 8)
        for (int l = 0; l < 8; l++)
            s[l] += a[j + l] * b[j + l];
    for (int l = 0; j + l < e; l++)
        s[l] += a[j + l] * b[j + l];
}

/* The step's polynomials in lambda (see the top): degree <= 12 */
#define NP 13
enum { C_YP, C_YQ, C_5A, C_5B, C_3A, C_3B, NPOLY };

/* One bin: x = lambda_j, its new state yn = Pn(x) y + Qn(x) and its contributions
 * r[0] = (e5/sc)^2, r[1] = (e3/sc)^2, r[2 + d] = w_j lambda_j^(d+1) yn (d = 0..11). */
static inline double bin_step(double x, double wlj, double yj, const double (*c)[NP], double rtol,
                              double atol, double r[14])
{
    double pw[NP], v[NPOLY];
    pw[0] = 1.0;
    for (int d = 1; d < NP; d++)
        pw[d] = pw[d - 1] * x;
    for (int k = 0; k < NPOLY; k++) {
        v[k] = c[k][0];
        for (int d = 1; d < NP; d++)
            v[k] += c[k][d] * pw[d];
    }
    double ynj = v[C_YP] * yj + v[C_YQ];
    double sc = atol + rtol * fmax(fabs(yj), fabs(ynj));
    double e5 = (v[C_5A] * yj + v[C_5B]) / sc, e3 = (v[C_3A] * yj + v[C_3B]) / sc;
    r[0] = e5 * e5;
    r[1] = e3 * e3;
    double mj = wlj * ynj;
    for (int d = 0; d < 12; d++)
        r[2 + d] = mj * pw[d];
    return ynj;
}

/* four doubles (GCC's vector extension, unaligned, aliasing double): bin_step on four
 * bins at once, the same operations in the same order (IEEE: the same bits) */
typedef double v4 __attribute__((vector_size(32), aligned(8), may_alias));
typedef long long v4i __attribute__((vector_size(32), aligned(8), may_alias));

/* |a| (the sign bit cleared) and max(a, b) for numbers (as fmax when neither is NaN) */
#define SIGN_OFF 0x7fffffffffffffffLL
#define VABS(a) ((v4)((v4i)(a) & (v4i){SIGN_OFF, SIGN_OFF, SIGN_OFF, SIGN_OFF}))
#define VMAX(a, b, gt) ((gt) = (a) > (b), (v4)(((v4i)(a) & (gt)) | ((v4i)(b) & ~(gt))))

static inline __attribute__((always_inline)) void bin_step4(const double *xp, const double *wlp,
                                                            const double *yp, double *ynp,
                                                            const double (*c)[NP], double rtol,
                                                            double atol, v4 r[14])
{
    v4 x = *(const v4 *)xp, yj = *(const v4 *)yp, wlj = *(const v4 *)wlp;
    v4 pw[NP], v[NPOLY];
    pw[0] = (v4){1.0, 1.0, 1.0, 1.0};
    for (int d = 1; d < NP; d++)
        pw[d] = pw[d - 1] * x;
    for (int k = 0; k < NPOLY; k++) {
        v[k] = c[k][0] + (v4){0, 0, 0, 0};
        for (int d = 1; d < NP; d++)
            v[k] += c[k][d] * pw[d];
    }
    v4 ynj = v[C_YP] * yj + v[C_YQ], ay = VABS(yj), an = VABS(ynj);
    v4i gt;
    v4 sc = atol + rtol * VMAX(ay, an, gt);
    v4 e5 = (v[C_5A] * yj + v[C_5B]) / sc, e3 = (v[C_3A] * yj + v[C_3B]) / sc;
    r[0] += e5 * e5;
    r[1] += e3 * e3;
    v4 mj = wlj * ynj;
    for (int d = 0; d < 12; d++)
        r[2 + d] += mj * pw[d];
    *(v4 *)ynp = ynj;
}

/* The pass of a step: yn for every bin; out[0], out[1] the two error sums, out[2 + d] the
 * moment M_(d+1) = sum_j w_j lambda_j^(d+1) yn_j, each in eight partial sums (bin j to sum
 * j mod 8: two four-wide halves) added as a tree. */
CLONES static void step_pass(long n, const double *lam, const double *wl, const double *y,
                             double *yn, const double (*c)[NP], double rtol, double atol,
                             double out[14])
{
    v4 lo[14], hi[14];
    for (int k = 0; k < 14; k++)
        lo[k] = hi[k] = (v4){0, 0, 0, 0};
    long j0 = 0;
    for (; j0 + 8 <= n; j0 += 8) {
        bin_step4(lam + j0, wl + j0, y + j0, yn + j0, c, rtol, atol, lo);
        bin_step4(lam + j0 + 4, wl + j0 + 4, y + j0 + 4, yn + j0 + 4, c, rtol, atol, hi);
    }
    double acc[14][8];
    for (int k = 0; k < 14; k++) {
        memcpy(acc[k], &lo[k], sizeof(v4));
        memcpy(acc[k] + 4, &hi[k], sizeof(v4));
    }
    for (int l = 0; j0 + l < n; l++) {
        double r[14];
        yn[j0 + l] = bin_step(lam[j0 + l], wl[j0 + l], y[j0 + l], c, rtol, atol, r);
        for (int k = 0; k < 14; k++)
            acc[k][l] += r[k];
    }
    for (int k = 0; k < 14; k++)
        out[k] = tree8(acc[k]);
}

/* ---- the scalars of a stage ---- */

typedef struct {
    const hdp_erk_problem *p;
    long evals;
} erk_ctx;

/* At time t with risk R and bounds Ru, Rl: the bins' coefficients alpha, beta, q (risk_ode.h)
 * or, integrating the bounds, q and the bounds' derivatives fb. */
static void stage_scalars(erk_ctx *cx, double t, double R, double Ru, double Rl,
                          hdp_rode_coef *cf, double fb[2])
{
    const hdp_erk_problem *p = cx->p;
    hdp_rode_step st;
    hdp_rode_step_at(p->ode, t, &st);
    if (!p->bounds) {
        hdp_rode_coefs(p->ode, st.eta, st.q, R, 0, cf);
        fb[0] = fb[1] = 0.0; /* the bounds are integrated apart */
    } else {
        cf->alpha = cf->beta = 0.0; /* no bins */
        cf->q = st.q;
        fb[0] = hdp_rode_bound_rhs(p->ode, &st, 0, Ru);
        fb[1] = hdp_rode_bound_rhs(p->ode, &st, 1, Rl);
    }
    cx->evals++;
}

static double risk_sum(long n, const double *wl, const double *y)
{
    double s[8] = {0};
    lanes(0, n, wl, y, s);
    return tree8(s);
}

#define FAIL(msg)                                                                              \
    do {                                                                                       \
        out->why = (msg);                                                                      \
        out->t_reached = t;                                                                    \
        goto done;                                                                             \
    } while (0)

/* The moments m[d] = sum_j w_j lambda_j^d v_j, d = 1..12 (m[0] unused). */
static void moments(long n, const double *lam, const double *wl, const double *v, double m[NP])
{
    double acc[NP][8];
    memset(acc, 0, sizeof acc);
    for (long j = 0; j < n; j++) {
        double pj = wl[j] * v[j];
        for (int d = 1; d < NP; d++) {
            acc[d][j & 7] += pj;
            pj *= lam[j];
        }
    }
    m[0] = 0;
    for (int d = 1; d < NP; d++)
        m[d] = tree8(acc[d]);
}

/* The solver's state at time t: the bins' values y (n of them; none when the bounds are
 * integrated) with their moments M_d and those of the ones N_d, the risk R = M_1, the bounds
 * yu, yl; yn, f0, tmp: the bins' scratch. */
typedef struct {
    long n;
    int bounds;
    double N; /* the error norm's count: n, or 2 for the bounds */
    double *y, *yn, *wl, *f0, *tmp;
    double mom[NP], ones_mom[NP];
    double R, yu, yl;
} erk_state;

/* the DOP853 stages of a step, as polynomials in lambda (see the top) */
typedef struct {
    double A[12][NP], B[12][NP], Ku[12], Kv[12];
} erk_stages;

/* The initial step (Hairer, Norsett, Wanner II.4): from f(0) and f(h0). */
static double initial_step(erk_ctx *cx, erk_state *st)
{
    const hdp_erk_problem *p = cx->p;
    const double *lam = p->ode->lambda;
    long n = st->n;
    double *y = st->y, *f0 = st->f0, *tmp = st->tmp, yu = st->yu, yl = st->yl;
    hdp_rode_coef cf;
    double fb[2];
    stage_scalars(cx, 0.0, st->R, yu, yl, &cf, fb);
    double fu = fb[0], fl = fb[1];
    double d0 = 0, d1 = 0;
    for (long j = 0; j < n; j++) {
        double sc = p->atol + p->rtol * fabs(y[j]);
        f0[j] = hdp_rode_f(lam[j], y[j], &cf);
        d0 += (y[j] / sc) * (y[j] / sc);
        d1 += (f0[j] / sc) * (f0[j] / sc);
    }
    if (st->bounds) {
        double su = p->atol + p->rtol * fabs(yu), sl = p->atol + p->rtol * fabs(yl);
        d0 += (yu / su) * (yu / su) + (yl / sl) * (yl / sl);
        d1 += (fu / su) * (fu / su) + (fl / sl) * (fl / sl);
    }
    d0 = sqrt(d0 / st->N);
    d1 = sqrt(d1 / st->N);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > 1.0)
        h0 = 1.0;
    for (long j = 0; j < n; j++)
        tmp[j] = y[j] + h0 * f0[j];
    hdp_rode_coef cf1;
    stage_scalars(cx, h0, risk_sum(n, st->wl, tmp), yu + h0 * fu, yl + h0 * fl, &cf1, fb);
    double fu1 = fb[0], fl1 = fb[1];
    double d2 = 0;
    for (long j = 0; j < n; j++) {
        double sc = p->atol + p->rtol * fabs(y[j]);
        double df = (hdp_rode_f(lam[j], tmp[j], &cf1) - f0[j]) / sc;
        d2 += df * df;
    }
    if (st->bounds) {
        double su = p->atol + p->rtol * fabs(yu), sl = p->atol + p->rtol * fabs(yl);
        d2 += ((fu1 - fu) / su) * ((fu1 - fu) / su) + ((fl1 - fl) / sl) * ((fl1 - fl) / sl);
    }
    d2 = sqrt(d2 / st->N) / h0;
    double dm = fmax(d1, d2);
    double h1 = dm <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 1.0 / 8.0);
    return fmin(fmin(100.0 * h0, h1), 1.0);
}

/* The twelve stages of a step of size hh from t: scalar work on the moments (the stage's
 * risk) and the bounds, the stages kept as polynomials in lambda: Y_i = P_i y + Q_i,
 * K_i = A_i y + B_i. */
static void stages(erk_ctx *cx, const erk_state *st, double t, double hh, erk_stages *k)
{
    int bounds = st->bounds;
    for (int i = 0; i < 12; i++) {
        double P[NP] = {0}, Q[NP] = {0}, Yu = st->yu, Yl = st->yl;
        P[0] = 1.0;
        for (int j = 0; j < i; j++) {
            double cf = hh * dp_a[i][j];
            if (cf == 0.0)
                continue;
            for (int d = 0; d <= j + 1 && !bounds; d++) {
                P[d] += cf * k->A[j][d];
                Q[d] += cf * k->B[j][d];
            }
            Yu += cf * k->Ku[j];
            Yl += cf * k->Kv[j];
        }
        double Ri = 0; /* sum_j w_j lambda_j Y_ij from the moments */
        for (int d = 0; d <= i && !bounds; d++)
            Ri += P[d] * st->mom[d + 1] + Q[d] * st->ones_mom[d + 1];
        hdp_rode_coef cf;
        double fb[2];
        stage_scalars(cx, t + dp_c[i] * hh, Ri, Yu, Yl, &cf, fb);
        k->Ku[i] = fb[0];
        k->Kv[i] = fb[1];
        k->A[i][0] = 0.0;
        k->B[i][0] = cf.q;
        for (int d = 0; d < NP - 1; d++) {
            k->A[i][d + 1] = cf.alpha * P[d];
            k->B[i][d + 1] = cf.alpha * Q[d];
        }
        k->B[i][1] += cf.beta;
    }
}

/* The step's end: the new state (the bins' into st->yn, their error and moment sums into
 * sums; the bounds into *yun, *yln) and the error norm of the step. */
static double step_end(const hdp_erk_problem *p, const erk_state *st, double hh,
                       const erk_stages *k, double *yun, double *yln, double sums[14])
{
    int bounds = st->bounds;
    /* the new state and the two error estimates, as polynomials */
    double c[NPOLY][NP] = {{0}};
    c[C_YP][0] = 1.0;
    double eu5 = 0, eu3 = 0, el5 = 0, el3 = 0;
    *yun = st->yu;
    *yln = st->yl;
    for (int j = 0; j < 12; j++) {
        double hb = hh * dp_b[j];
        for (int d = 0; d < NP && !bounds; d++) {
            c[C_YP][d] += hb * k->A[j][d];
            c[C_YQ][d] += hb * k->B[j][d];
            c[C_5A][d] += dp_e5[j] * k->A[j][d];
            c[C_5B][d] += dp_e5[j] * k->B[j][d];
            c[C_3A][d] += dp_e3[j] * k->A[j][d];
            c[C_3B][d] += dp_e3[j] * k->B[j][d];
        }
        *yun += hb * k->Ku[j];
        *yln += hb * k->Kv[j];
        eu5 += dp_e5[j] * k->Ku[j];
        el5 += dp_e5[j] * k->Kv[j];
        eu3 += dp_e3[j] * k->Ku[j];
        el3 += dp_e3[j] * k->Kv[j];
    }
    if (!bounds) /* the bounds alone: the polynomials above are not formed either */
        step_pass(st->n, p->ode->lambda, st->wl, st->y, st->yn, (const double(*)[NP])c, p->rtol,
                  p->atol, sums);
    if (bounds) {
        double su = p->atol + p->rtol * fmax(fabs(st->yu), fabs(*yun));
        double sl = p->atol + p->rtol * fmax(fabs(st->yl), fabs(*yln));
        sums[0] += (eu5 / su) * (eu5 / su) + (el5 / sl) * (el5 / sl);
        sums[1] += (eu3 / su) * (eu3 / su) + (el3 / sl) * (el3 / sl);
    }
    double err = 0;
    if (sums[0] > 0 || sums[1] > 0)
        err = hh * sums[0] / sqrt((sums[0] + 0.01 * sums[1]) * st->N);
    return err;
}

/* the output point i: the risk, or the bounds */
static void put_point(const erk_state *st, long i, hdp_erk_out *out)
{
    if (st->bounds) {
        out->upper[i] = st->yu;
        out->lower[i] = st->yl;
    } else {
        out->risk[i] = st->R;
    }
}

/* Where the step from t must stop: the output time t_out, or the next knot stop before it
 * (*at_knot; *knot: where the search for the next knot resumes). */
static double next_stop(const hdp_risk_ode *o, double t, double t_out, int *knot, int *at_knot)
{
    double stop = t_out, tk = hdp_rode_next_knot(o, knot, t);
    *at_knot = 0;
    if (tk < stop - 1e-12) {
        stop = tk;
        *at_knot = 1;
    }
    return stop;
}

int hdp_erk_solve(const hdp_erk_problem *p, long points, hdp_erk_out *out)
{
    const hdp_risk_ode *o = p->ode;
    double R0 = o->R0;
    erk_state st = {.n = p->bounds ? 0 : o->m, .bounds = p->bounds};
    long n = st.n;
    int status = -1;
    double t = 0;
    erk_ctx cx = {p, 0};
    out->steps = out->rhs_evals = out->rejected = 0;
    out->why = NULL;
    out->t_reached = 0;
    double *mem = calloc((size_t)(n > 0 ? n : 1) * 5, sizeof(double));
    if (!mem)
        FAIL(HDP_ERK_NOMEM);
    st.y = mem, st.yn = mem + n, st.wl = mem + 2 * n, st.f0 = mem + 3 * n, st.tmp = mem + 4 * n;
    for (long j = 0; j < n; j++) {
        st.y[j] = o->D0 ? o->D0[j] : R0;
        st.wl[j] = o->w[j] * o->lambda[j];
        st.tmp[j] = 1.0;
    }
    moments(n, o->lambda, st.wl, st.tmp, st.ones_mom); /* N_d = sum w lambda^d */
    moments(n, o->lambda, st.wl, st.y, st.mom);
    st.R = st.mom[1];
    st.yu = st.yl = R0;
    st.N = st.bounds ? 2.0 : (double)n;
    put_point(&st, 0, out);

    double h = initial_step(&cx, &st);
    if (!(h > 0) || !isfinite(h))
        FAIL("no initial step");
    int knot = 1; /* next interior knot of a table schedule */
    int rejected_last = 0;
    long next_out = 1;
    erk_stages k;
    while (next_out < points) {
        int at_knot;
        double stop = next_stop(o, t, (double)next_out / (double)(points - 1), &knot,
                                &at_knot);
        double hh = h;
        int clipped = 0;
        if (t + 1.05 * hh >= stop) {
            hh = stop - t;
            clipped = 1;
        }
        if (!(hh > 1e-14 * fmax(1.0, t)))
            FAIL("step size below rounding");
        if (hdp_cancel_requested()) /* issue 29: the thread's cancel flag, at every step */
            FAIL(HDP_ERK_CANCELLED);
        stages(&cx, &st, t, hh, &k);
        double yun, yln, sums[14] = {0};
        double err = step_end(p, &st, hh, &k, &yun, &yln, sums);
        int finite = isfinite(err) && isfinite(sums[2]) && isfinite(yun) && isfinite(yln);
        if (finite && err <= 1.0) {
            double factor = err == 0 ? 10.0 : fmin(10.0, 0.9 * pow(err, -1.0 / 8.0));
            if (rejected_last)
                factor = fmin(1.0, factor);
            double hnew = hh * factor;
            h = clipped ? fmax(hnew, h) : hnew; /* a step cut short to a stop keeps its size */
            t = clipped ? stop : t + hh;
            double *sw = st.y;
            st.y = st.yn;
            st.yn = sw;
            for (int d = 1; d < NP; d++)
                st.mom[d] = sums[1 + d];
            st.R = st.mom[1];
            st.yu = yun;
            st.yl = yln;
            rejected_last = 0;
            if (++out->steps > p->max_steps)
                FAIL("more steps than ode.max_steps");
            if (clipped && !at_knot)
                put_point(&st, next_out++, out);
        } else {
            /* a non-finite estimate (a step far too long) is a rejection too; a solution that
             * overflows ends in steps below rounding or too many rejections */
            h = hh * (finite ? fmax(0.2, 0.9 * pow(err, -1.0 / 8.0)) : 0.2);
            rejected_last = 1;
            if (++out->rejected > 50 + out->steps / 2)
                FAIL("too many rejected steps (stiff?)");
        }
    }
    status = 0;
done:
    out->rhs_evals = cx.evals;
    free(mem);
    return status;
}
