/*
 * kl_relu.c — noisy GD on the real ReLU network (kl.network = relu; hdpsgd/kl.h): the
 * forward pass, the loss and the backward pass by dgemm with the gradient difference of every
 * remove-one neighbour (hdp_kl_net_gradient), and the run of one initialisation
 * (hdp_kl_relu_run_one with its thread workspace, for the driver in kl.c): W_0, its
 * ||J(x_i)||^2, then the noise paths one after the other.
 * Linking: products go through OpenBLAS's CBLAS (families/blas_internal.h; see rf_internal.h).
 */
#include "families/kl_internal.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "families/blas_internal.h"

/* ---- noisy GD on the real ReLU network (kl.network = relu) ---- */

/* the buffers of one gradient pass over n samples */
typedef struct {
    long n;
    double *H[HDP_KL_MAX_DEPTH + 1]; /* H[l] (n x m_l) post-activations, l = 1..L-1; H[0] = X */
    double *E, *En, *T;              /* n x max width: errors of the layer, next, E grad_l */
    double *g2, *gG;                 /* [n]: ||G_j||^2, <G_j, grad L> */
    void *block;                     /* all of them but H[0] */
} net_pass;

static void net_pass_free(net_pass *p)
{
    free(p->block);
    memset(p, 0, sizeof *p);
}

static int net_pass_alloc(const hdp_kl_net *net, long n, net_pass *p)
{
    memset(p, 0, sizeof *p);
    const int L = net->arch.L;
    long wmax = 0;
    for (int l = 0; l <= L; l++)
        wmax = net->w[l] > wmax ? net->w[l] : wmax;
    p->n = n;
    const size_t nw = (size_t)n * (size_t)wmax;
    hdp_mc_vec v[HDP_MC_BLOCK_MAX] = {{&p->E, nw}, {&p->En, nw}, {&p->T, nw}, {&p->g2, (size_t)n},
                                      {&p->gG, (size_t)n}};
    for (int l = 1; l < L; l++)
        v[4 + l] = (hdp_mc_vec){&p->H[l], (size_t)n * (size_t)net->w[l]};
    return (p->block = hdp_mc_vecs(v, (size_t)(4 + L))) != NULL;
}

/* hdp_kl_net_gradient with the caller's buffers (kl.h): returns the loss */
static double net_gradient(const hdp_kl_net *net, const double *X, const double *Y,
                           hdp_kl_loss_kind loss, net_pass *p, hdp_kl_net *grad, double *diff2)
{
    const int L = net->arch.L;
    const long n = p->n, o = net->arch.o, *w = net->w;
    const double nn = (double)n;
    p->H[0] = (double *)X;
    /* forward: H_l = relu(H_{l-1} W_l^T); outputs H_{L-1} W_L^T into E (n x o) */
    for (int l = 1; l < L; l++) {
        blas_gemm(0, 1, n, w[l], w[l - 1], 1.0, p->H[l - 1], w[l - 1], net->W[l], w[l - 1], 0.0,
                  p->H[l], w[l]);
        const long len = n * w[l];
        double *h = p->H[l];
        for (long i = 0; i < len; i++)
            h[i] = h[i] > 0 ? h[i] : 0.0;
    }
    blas_gemm(0, 1, n, o, w[L - 1], 1.0, p->H[L - 1], w[L - 1], net->W[L], w[L - 1], 0.0, p->E, o);
    /* the loss and e_{i,L} = l'(f(x_i); y_i) in place */
    double lsum = 0;
    for (long t = 0; t < n * o; t++) {
        lsum += loss_value(loss, p->E[t], Y[t]);
        p->E[t] = loss_deriv(loss, p->E[t], Y[t]);
    }
    memset(p->g2, 0, sizeof(double) * (size_t)n);
    memset(p->gG, 0, sizeof(double) * (size_t)n);
    double gbar2 = 0;
    for (int l = L; l >= 1; l--) {
        const long ml = w[l], mp = w[l - 1];
        const double *Hp = p->H[l - 1];
        double *G = grad->W[l];
        /* grad_l = E_l^T H_{l-1} / n */
        blas_gemm(1, 0, ml, mp, n, 1.0 / nn, p->E, ml, Hp, mp, 0.0, G, mp);
        for (long t = 0; t < ml * mp; t++)
            gbar2 += G[t] * G[t];
        if (diff2) {
            /* ||G_{j,l}||^2 = ||e_{j,l}||^2 ||h_{j,l-1}||^2; <G_{j,l}, grad_l> = (E_l grad_l)_j . h_j */
            blas_gemm(0, 0, n, mp, ml, 1.0, p->E, ml, G, mp, 0.0, p->T, mp);
            for (long i = 0; i < n; i++) {
                double e2 = 0, h2 = 0, eg = 0;
                for (long k = 0; k < ml; k++)
                    e2 += p->E[i * ml + k] * p->E[i * ml + k];
                for (long k = 0; k < mp; k++) {
                    h2 += Hp[i * mp + k] * Hp[i * mp + k];
                    eg += p->T[i * mp + k] * Hp[i * mp + k];
                }
                p->g2[i] += e2 * h2;
                p->gG[i] += eg;
            }
        }
        if (l > 1) {
            /* e_{l-1} = 1[h_{l-1} > 0] .* (E_l W_l) */
            blas_gemm(0, 0, n, mp, ml, 1.0, p->E, ml, net->W[l], mp, 0.0, p->En, mp);
            for (long t = 0; t < n * mp; t++)
                if (!(Hp[t] > 0))
                    p->En[t] = 0.0;
            double *s = p->E;
            p->E = p->En;
            p->En = s;
        }
    }
    if (diff2) {
        const double nn1 = (nn - 1.0) * (nn - 1.0);
        for (long j = 0; j < n; j++)
            diff2[j] = (p->g2[j] - 2.0 * p->gG[j] + gbar2) / nn1;
    }
    return lsum / nn;
}

hdp_status hdp_kl_net_gradient(const hdp_kl_net *net, const double *X, const double *Y, long n,
                               hdp_kl_loss_kind loss, double *loss_value_out, hdp_kl_net *grad,
                               double *diff2, hdp_error *err)
{
    HDP_REQUIRE(err, net);
    HDP_REQUIRE(err, X);
    HDP_REQUIRE(err, Y);
    HDP_REQUIRE(err, loss_value_out);
    HDP_REQUIRE(err, grad);
    if (n < 2)
        return hdp_fail(err, HDP_EINPUT, "hdp_kl_net_gradient: n = %ld: need at least 2 samples", n);
    for (int l = 1; l <= net->arch.L; l++)
        if (!grad->W[l] || grad->w[l] != net->w[l] || grad->w[l - 1] != net->w[l - 1])
            return hdp_fail(err, HDP_EINPUT,
                            "hdp_kl_net_gradient: grad is not a net of the same architecture");
    net_pass p;
    if (!net_pass_alloc(net, n, &p))
        return hdp_fail(err, HDP_ENOMEM, "out of memory for a gradient pass over %ld samples", n);
    const int old = blas_single();
    *loss_value_out = net_gradient(net, X, Y, loss, &p, grad, diff2);
    blas_restore(old);
    net_pass_free(&p);
    return HDP_OK;
}

/* a thread's workspace for the real network: the weights, W_0, the gradient, a pass */
typedef struct {
    hdp_kl_net net, net0, grad;
    net_pass pass;
    double *diff2, *S, *xi; /* [n], [n], [max layer size] */
    double *ln2;            /* [n x L] ||J_l(x_i)||^2 at W_0 */
} relu_ws;

void hdp_kl_relu_ws_free(void *vw)
{
    relu_ws *w = vw;
    if (!w)
        return;
    hdp_kl_net_free(&w->net), hdp_kl_net_free(&w->net0), hdp_kl_net_free(&w->grad);
    net_pass_free(&w->pass);
    free(w);
}

void *hdp_kl_relu_ws_alloc(const void *vc)
{
    const hdp_kl_spec *s = ((const init_ctx *)vc)->s;
    long wd[HDP_KL_MAX_DEPTH + 1], big = 0;
    hdp_kl_widths(&s->arch, wd);
    for (int l = 1; l <= s->arch.L; l++)
        big = wd[l] * wd[l - 1] > big ? wd[l] * wd[l - 1] : big;
    const hdp_mc_array a[] = {HDP_MC_ARRAY(relu_ws, diff2, s->n), HDP_MC_ARRAY(relu_ws, S, s->n),
                              HDP_MC_ARRAY(relu_ws, xi, big),
                              HDP_MC_ARRAY(relu_ws, ln2, (size_t)s->n * (size_t)s->arch.L)};
    relu_ws *w = HDP_MC_WS_ALLOC(relu_ws, a);
    if (w && (hdp_kl_net_alloc(&s->arch, &w->net, NULL) != HDP_OK ||
              hdp_kl_net_alloc(&s->arch, &w->net0, NULL) != HDP_OK ||
              hdp_kl_net_alloc(&s->arch, &w->grad, NULL) != HDP_OK ||
              !net_pass_alloc(&w->net, s->n, &w->pass))) {
        hdp_kl_relu_ws_free(w);
        return NULL;
    }
    return w;
}

/* Initialisation idx of the real network on its stream g: W_0 (the same draws as the
 * linearised run's), its ||J(x_i)||^2, then the noise paths one after the other from the block
 * Gaussian stream started at g; the sums over paths of S_j and S_j^2 and the mean loss into io. */
hdp_status hdp_kl_relu_run_one(const void *vc, long idx, void *vw, hdp_xoshiro *g,
                                void *slot, hdp_error *err)
{
    const init_ctx *c = vc;
    const hdp_kl_spec *s = c->s;
    relu_ws *w = vw;
    init_out *io = slot;
    const int L = s->arch.L;
    const long n = s->n, E = s->epochs, P = s->runs;
    hdp_kl_net_draw(&w->net0, g);
    if (hdp_kl_net_jacobian(&w->net0, c->X, n, NULL, NULL, w->ln2, err) != HDP_OK)
        return HDP_ENOMEM;
    double g2 = 0;
    for (long i = 0; i < n * L; i++)
        g2 += w->ln2[i];
    io->pb.grad2 = g2 / (double)n;
    io->pb.R_lazy = NAN;
    io->eta_lmax = NAN;
    hdp_normals nrm;
    hdp_normals_init(&nrm, g);
    const double noise = sqrt(2.0 * s->eta * s->sigma * s->sigma);
    for (long q = 0; q < P; q++) {
        for (int l = 1; l <= L; l++)
            memcpy(w->net.W[l], w->net0.W[l], sizeof(double) * (size_t)(w->net.w[l] * w->net.w[l - 1]));
        memset(w->S, 0, sizeof(double) * (size_t)n);
        for (long k = 0; k <= E; k++) {
            const double lv = net_gradient(&w->net, c->X, c->Y, s->loss, &w->pass, &w->grad,
                                           k < E ? w->diff2 : NULL);
            io->loss[k] += lv / (double)P;
            if (k == E)
                break;
            double *sum = io->sum + (k + 1) * n, *sum2 = io->sum2 + (k + 1) * n;
            for (long j = 0; j < n; j++) {
                w->S[j] += s->eta * w->diff2[j];
                sum[j] += w->S[j];
                sum2[j] += w->S[j] * w->S[j];
            }
            if (!isfinite(lv) || !isfinite(sum[0]))
                return hdp_fail(err, HDP_ENUMERIC,
                                "non-finite loss or gradient of the ReLU network at epoch %ld "
                                "(initialisation %ld, path %ld): lower [kl] eta",
                                k, idx, q);
            /* W <- W - eta grad L + sqrt(2 eta sigma^2) xi */
            for (int l = 1; l <= L; l++) {
                const long len = w->net.w[l] * w->net.w[l - 1];
                double *Wl = w->net.W[l];
                const double *G = w->grad.W[l];
                hdp_normals_fill(&nrm, w->xi, len);
                for (long t = 0; t < len; t++)
                    Wl[t] += -s->eta * G[t] + noise * w->xi[t];
            }
        }
    }
    return HDP_OK;
}
