/*
 * ode_erk.c — the risk ODE of THEORY.md section 3 with DOP853 (see ode_erk.h).
 *
 * State: the bins D_0..D_{m-1} and the two scalar bounds. The bins' right-hand side is
 * affine in each D_j once the scalars of a stage are known:
 *   f_j = lambda_j (alpha D_j + beta) + q,  alpha = -2 eta mu(R), beta = gamma eta^2 V(R),
 * with R = sum_j w_j lambda_j D_j. A stage is one pass over the bins (blocks of BLK): the
 * previous stage's derivative from its state, then this stage's state y + h sum a_ik K_k
 * and its R. The last pass forms the new state, the two error estimates of DOP853 and the
 * new R. Step control as Hairer's dop853 and SciPy's DOP853: the error norm
 *   |h| e5^2 / sqrt((e5^2 + 0.01 e3^2) N),  e = ||(sum E_k K_k) / sc||_2,
 *   sc = atol + rtol max(|y|, |y_new|),
 * factor 0.9 err^(-1/8) within [0.2, 10], no growth right after a rejection.
 * Sums over bins use eight fixed partial sums (element j to sum j mod 8) added as a tree,
 * and the file is compiled without floating-point contraction: every clone (AVX-512,
 * AVX2, baseline) gives the same bits.
 */
#include "core/ode_erk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
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

/* K = lam (al Ys + be) + q, then Y = y + sum_k cf[k] Kl[k][.], returns sum wl Y.
 * Y may be Ys (each block's derivative is formed before its state is overwritten). */
CLONES static double stage_pass(long n, const double *lam, const double *wl, const double *y,
                                const double *Ys, double *K, double al, double be, double q,
                                int nk, const double *cf, double *const *Kl, double *Y)
{
    double s[8] = {0};
    for (long j0 = 0; j0 < n; j0 += BLK) {
        long e = j0 + BLK < n ? j0 + BLK : n;
        for (long j = j0; j < e; j++)
            K[j] = lam[j] * (al * Ys[j] + be) + q;
        const double *K0 = Kl[0];
        double c0 = cf[0];
        for (long j = j0; j < e; j++)
            Y[j] = y[j] + c0 * K0[j];
        for (int k = 1; k < nk; k++) {
            const double *Kk = Kl[k];
            double ck = cf[k];
            for (long j = j0; j < e; j++)
                Y[j] += ck * Kk[j];
        }
        lanes(j0, e, wl, Y, s);
    }
    return tree8(s);
}

/* The last stage's derivative K from Ys, then y_new = y + sum hb_k K_k, the error sums
 * e5 = sum E5_k K_k, e3 = sum E3_k K_k, scaled by sc = atol + rtol max(|y|, |y_new|):
 * out[0] = sum (e5/sc)^2, out[1] = sum (e3/sc)^2, out[2] = sum wl y_new. */
CLONES static void final_pass(long n, const double *lam, const double *wl, const double *y,
                              const double *Ys, double *K, double al, double be, double q,
                              int nb, const int *ib, const double *hb, int n5, const int *i5,
                              const double *c5, int n3, const int *i3, const double *c3,
                              double *const *Kl, double *yn, double rtol, double atol,
                              double out[3])
{
    double s5[8] = {0}, s3[8] = {0}, sr[8] = {0};
    double e5[BLK], e3[BLK];
    for (long j0 = 0; j0 < n; j0 += BLK) {
        long e = j0 + BLK < n ? j0 + BLK : n, len = e - j0;
        for (long j = j0; j < e; j++)
            K[j] = lam[j] * (al * Ys[j] + be) + q;
        for (long j = j0; j < e; j++)
            yn[j] = y[j] + hb[0] * Kl[ib[0]][j];
        for (int k = 1; k < nb; k++) {
            const double *Kk = Kl[ib[k]];
            double ck = hb[k];
            for (long j = j0; j < e; j++)
                yn[j] += ck * Kk[j];
        }
        for (long j = 0; j < len; j++)
            e5[j] = c5[0] * Kl[i5[0]][j0 + j];
        for (int k = 1; k < n5; k++) {
            const double *Kk = Kl[i5[k]] + j0;
            double ck = c5[k];
            for (long j = 0; j < len; j++)
                e5[j] += ck * Kk[j];
        }
        for (long j = 0; j < len; j++)
            e3[j] = c3[0] * Kl[i3[0]][j0 + j];
        for (int k = 1; k < n3; k++) {
            const double *Kk = Kl[i3[k]] + j0;
            double ck = c3[k];
            for (long j = 0; j < len; j++)
                e3[j] += ck * Kk[j];
        }
        for (long j = 0; j < len; j++) {
            double sc = atol + rtol * fmax(fabs(y[j0 + j]), fabs(yn[j0 + j]));
            e5[j] /= sc;
            e3[j] /= sc;
        }
        lanes(0, len, e5, e5, s5);
        lanes(0, len, e3, e3, s3);
        lanes(j0, e, wl, yn, sr);
    }
    out[0] = tree8(s5);
    out[1] = tree8(s3);
    out[2] = tree8(sr);
}

/* ---- the scalars of a stage ---- */

typedef struct {
    const hdp_erk_problem *p;
    long evals;
} erk_ctx;

/* At time t with risk R and bounds Ru, Rl: the bins' alpha, beta, q and the bounds'
 * derivatives fu, fl (THEORY 3). */
static void stage_scalars(erk_ctx *cx, double t, double R, double Ru, double Rl, double *al,
                          double *be, double *q, double *fu, double *fl)
{
    const hdp_erk_problem *p = cx->p;
    double eta = hdp_sched_eta(p->sched, t), g = p->gamma;
    double qq = isinf(p->rho) ? 0.0
                              : 2.0 * p->c * p->c * g * g * hdp_sched_sigma2(p->sched, t);
    hdp_clip_values cv;
    hdp_clip_eval_values(p->clip, R, &cv);
    *al = -2.0 * eta * cv.mu;
    *be = g * eta * eta * cv.V;
    *q = qq;
    if (p->bounds_equal) {
        *fu = *fl = 0.0; /* the bounds are R: not integrated */
    } else {
        hdp_clip_eval_values(p->clip, Ru, &cv);
        *fu = -2.0 * p->lmin * eta * cv.mu * Ru + p->lmax * g * eta * eta * cv.V + qq;
        hdp_clip_eval_values(p->clip, Rl, &cv);
        *fl = -2.0 * p->lmax * eta * cv.mu * Rl + g * eta * eta * cv.V + qq;
    }
    cx->evals++;
}

static double risk_sum(long n, const double *wl, const double *y)
{
    double s[8] = {0};
    lanes(0, n, wl, y, s);
    return tree8(s);
}

double hdp_erk_stiffness(const hdp_schedule *s, double lmax)
{
    double integral = 0; /* int_0^1 eta~ */
    switch (s->kind) {
    case HDP_SCHED_CONSTANT:
    case HDP_SCHED_OUTPUT: integral = s->eta0; break;
    case HDP_SCHED_LINEAR_NOISE: integral = 2.0 * s->eta0 / 3.0; break;
    case HDP_SCHED_OPTIMAL: integral = s->c1 * log1p(1.0 / s->a); break;
    case HDP_SCHED_TABLE:
        for (int i = 0; i + 1 < s->len; i++)
            integral += 0.5 * (s->eta[i] + s->eta[i + 1]) * (s->t[i + 1] - s->t[i]);
        break;
    }
    return 2.0 * lmax * integral;
}

/* nonzero entries of a coefficient row */
static int compact(const double *row, int len, int *idx, double *val)
{
    int k = 0;
    for (int i = 0; i < len; i++)
        if (row[i] != 0.0) {
            idx[k] = i;
            val[k++] = row[i];
        }
    return k;
}

#define FAIL(msg)                                                                              \
    do {                                                                                       \
        out->why = (msg);                                                                      \
        out->t_reached = t;                                                                    \
        goto done;                                                                             \
    } while (0)

int hdp_erk_solve(const hdp_erk_problem *p, double R0, long points, hdp_erk_out *out)
{
    long n = p->m;
    int status = -1;
    double t = 0;
    erk_ctx cx = {p, 0};
    out->steps = out->rhs_evals = out->rejected = 0;
    out->why = NULL;
    out->t_reached = 0;
    double *mem = malloc(sizeof(double) * (size_t)n * 16);
    if (!mem)
        FAIL("out of memory");
    double *y = mem, *yn = mem + n, *Y = mem + 2 * n, *wl = mem + 3 * n, *K[12];
    for (int i = 0; i < 12; i++)
        K[i] = mem + (4 + i) * n;
    for (long j = 0; j < n; j++) {
        y[j] = R0;
        wl[j] = p->w[j] * p->lambda[j];
    }
    /* the coefficient rows without their zeros */
    int ai[12][12], an[12], bi[12], nb, i5[12], n5, i3[12], n3;
    double av[12][12], bv[12], v5[12], v3[12];
    for (int i = 1; i < 12; i++)
        an[i] = compact(dp_a[i], i, ai[i], av[i]);
    nb = compact(dp_b, 12, bi, bv);
    n5 = compact(dp_e5, 12, i5, v5);
    n3 = compact(dp_e3, 12, i3, v3);

    const hdp_schedule *s = p->sched;
    double R = risk_sum(n, wl, y), yu = R0, yl = R0;
    if (p->bounds_equal)
        yu = yl = R;
    out->risk[0] = R;
    out->upper[0] = yu;
    out->lower[0] = yl;
    double N = (double)(p->bounds_equal ? n : n + 2);

    /* initial step (Hairer, Norsett, Wanner II.4): from f(0) and f(h0) */
    double h;
    {
        double al, be, q, fu, fl;
        stage_scalars(&cx, 0.0, R, yu, yl, &al, &be, &q, &fu, &fl);
        double d0 = 0, d1 = 0;
        for (long j = 0; j < n; j++) {
            double sc = p->atol + p->rtol * fabs(y[j]);
            K[0][j] = p->lambda[j] * (al * y[j] + be) + q;
            d0 += (y[j] / sc) * (y[j] / sc);
            d1 += (K[0][j] / sc) * (K[0][j] / sc);
        }
        if (!p->bounds_equal) {
            double su = p->atol + p->rtol * fabs(yu), sl = p->atol + p->rtol * fabs(yl);
            d0 += (yu / su) * (yu / su) + (yl / sl) * (yl / sl);
            d1 += (fu / su) * (fu / su) + (fl / sl) * (fl / sl);
        }
        d0 = sqrt(d0 / N);
        d1 = sqrt(d1 / N);
        double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
        if (h0 > 1.0)
            h0 = 1.0;
        for (long j = 0; j < n; j++)
            Y[j] = y[j] + h0 * K[0][j];
        double al1, be1, q1, fu1, fl1;
        stage_scalars(&cx, h0, risk_sum(n, wl, Y), yu + h0 * fu, yl + h0 * fl, &al1, &be1, &q1,
                      &fu1, &fl1);
        double d2 = 0;
        for (long j = 0; j < n; j++) {
            double sc = p->atol + p->rtol * fabs(y[j]);
            double df = (p->lambda[j] * (al1 * Y[j] + be1) + q1 - K[0][j]) / sc;
            d2 += df * df;
        }
        if (!p->bounds_equal) {
            double su = p->atol + p->rtol * fabs(yu), sl = p->atol + p->rtol * fabs(yl);
            d2 += ((fu1 - fu) / su) * ((fu1 - fu) / su) + ((fl1 - fl) / sl) * ((fl1 - fl) / sl);
        }
        d2 = sqrt(d2 / N) / h0;
        double dm = fmax(d1, d2);
        double h1 = dm <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dm, 1.0 / 8.0);
        h = fmin(fmin(100.0 * h0, h1), 1.0);
        if (!(h > 0) || !isfinite(h))
            FAIL("no initial step");
    }

    int knot = 1; /* next interior knot of a table schedule */
    int rejected_last = 0;
    long next_out = 1;
    while (next_out < points) {
        double t_out = (double)next_out / (double)(points - 1);
        double stop = t_out;
        int at_knot = 0;
        if (s->kind == HDP_SCHED_TABLE) {
            while (knot < s->len - 1 && s->t[knot] <= t + 1e-12)
                knot++;
            if (knot < s->len - 1 && s->t[knot] < stop - 1e-12) {
                stop = s->t[knot];
                at_knot = 1;
            }
        }
        double hh = h;
        int clipped = 0;
        if (t + 1.05 * hh >= stop) {
            hh = stop - t;
            clipped = 1;
        }
        if (!(hh > 1e-14 * fmax(1.0, t)))
            FAIL("step size below rounding");

        /* stages 1..11: each pass forms the previous stage's derivative and this state */
        double al, be, q, Ku[12], Kv[12];
        stage_scalars(&cx, t, R, yu, yl, &al, &be, &q, &Ku[0], &Kv[0]);
        const double *Ys = y;
        for (int i = 1; i < 12; i++) {
            double cf[12], Yu = yu, Yl = yl;
            double *Kl[12];
            for (int k = 0; k < an[i]; k++) {
                cf[k] = hh * av[i][k];
                Kl[k] = K[ai[i][k]];
                Yu += cf[k] * Ku[ai[i][k]];
                Yl += cf[k] * Kv[ai[i][k]];
            }
            double Ri = stage_pass(n, p->lambda, wl, y, Ys, K[i - 1], al, be, q, an[i], cf, Kl, Y);
            Ys = Y;
            stage_scalars(&cx, t + dp_c[i] * hh, Ri, Yu, Yl, &al, &be, &q, &Ku[i], &Kv[i]);
        }
        double hb[12], sums[3];
        double yun = yu, yln = yl, eu5 = 0, eu3 = 0, el5 = 0, el3 = 0;
        for (int k = 0; k < nb; k++) {
            hb[k] = hh * bv[k];
            yun += hb[k] * Ku[bi[k]];
            yln += hb[k] * Kv[bi[k]];
        }
        for (int k = 0; k < n5; k++) {
            eu5 += v5[k] * Ku[i5[k]];
            el5 += v5[k] * Kv[i5[k]];
        }
        for (int k = 0; k < n3; k++) {
            eu3 += v3[k] * Ku[i3[k]];
            el3 += v3[k] * Kv[i3[k]];
        }
        final_pass(n, p->lambda, wl, y, Y, K[11], al, be, q, nb, bi, hb, n5, i5, v5, n3, i3, v3,
                   K, yn, p->rtol, p->atol, sums);
        if (!p->bounds_equal) {
            double su = p->atol + p->rtol * fmax(fabs(yu), fabs(yun));
            double sl = p->atol + p->rtol * fmax(fabs(yl), fabs(yln));
            sums[0] += (eu5 / su) * (eu5 / su) + (el5 / sl) * (el5 / sl);
            sums[1] += (eu3 / su) * (eu3 / su) + (el3 / sl) * (el3 / sl);
        }
        double err = 0;
        if (sums[0] > 0 || sums[1] > 0)
            err = hh * sums[0] / sqrt((sums[0] + 0.01 * sums[1]) * N);
        if (!isfinite(err) || !isfinite(sums[2]) || !isfinite(yun) || !isfinite(yln))
            FAIL("a value is no longer finite");
        if (err <= 1.0) {
            double factor = err == 0 ? 10.0 : fmin(10.0, 0.9 * pow(err, -1.0 / 8.0));
            if (rejected_last)
                factor = fmin(1.0, factor);
            double hnew = hh * factor;
            h = clipped ? fmax(hnew, h) : hnew; /* a step cut short to a stop keeps the planned size */
            t = clipped ? stop : t + hh;
            double *tmp = y;
            y = yn;
            yn = tmp;
            R = sums[2];
            yu = p->bounds_equal ? R : yun;
            yl = p->bounds_equal ? R : yln;
            rejected_last = 0;
            if (++out->steps > p->max_steps)
                FAIL("more steps than ode.max_steps");
            if (clipped && !at_knot) {
                out->risk[next_out] = R;
                out->upper[next_out] = yu;
                out->lower[next_out] = yl;
                next_out++;
            }
        } else {
            h = hh * fmax(0.2, 0.9 * pow(err, -1.0 / 8.0));
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
