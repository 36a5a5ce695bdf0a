/*
 * kl_net.c — the ReLU networks of the KL family (hdpsgd/kl.h): the architecture check, the
 * weights (row-major, drawn layer by layer from one xoshiro256++ stream with the fast ziggurat
 * of rng.h), inputs on the sphere, and the forward pass with the back-propagated signals by
 * dgemm, giving the Jacobian Gram K = J J^T as the sum over layers of
 * (Delta_l Delta_l^T) .* (H_{l-1} H_{l-1}^T) (never the (n o) x p Jacobian itself).
 * Linking: products go through OpenBLAS's CBLAS (families/blas_internal.h; see rf_internal.h).
 */
#include "sim/rng_internal.h"
#include "families/kl_internal.h"
#include "core/alloc.h"
#include "core/check.h"
#include "sim/mc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "families/blas_internal.h"

/* ---- networks ---- */

int hdp_kl_arch_too_big(const hdp_kl_arch *a, char *why, size_t size)
{
    const double params = (double)a->m * (double)a->d +
                          (double)(a->L - 2) * (double)a->m * (double)a->m +
                          (double)a->o * (double)a->m;
    if (params <= 4.0e8)
        return 0;
    snprintf(why, size,
             "width %ld at depth %d, d = %ld, o = %ld gives %.3g weights (%.3g GB per network), "
             "more than the 4e8 accepted (3.2 GB): make width or depth smaller",
             a->m, a->L, a->d, a->o, params, params * 8 / 1e9);
    return 1;
}

hdp_status hdp_kl_arch_check(const hdp_kl_arch *a, hdp_error *err)
{
    if (a->L < 2 || a->L > HDP_KL_MAX_DEPTH)
        return hdp_fail(err, HDP_EINPUT, "[kl] depth = %d: expected an integer from 2 to %d", a->L,
                        HDP_KL_MAX_DEPTH);
    if (a->m < 1 || a->d < 1 || a->o < 1)
        return hdp_fail(err, HDP_EINPUT, "[kl] width, d and o must be >= 1 (got %ld, %ld, %ld)",
                        a->m, a->d, a->o);
    char why[256];
    if (hdp_kl_arch_too_big(a, why, sizeof why))
        return hdp_fail(err, HDP_EINPUT, "[kl] width: %s", why);
    return HDP_OK;
}

void hdp_kl_net_free(hdp_kl_net *net)
{
    if (!net)
        return;
    for (int l = 0; l <= HDP_KL_MAX_DEPTH; l++) {
        free(net->W[l]);
        net->W[l] = NULL;
    }
}

hdp_status hdp_kl_net_alloc(const hdp_kl_arch *a, hdp_kl_net *net, hdp_error *err)
{
    HDP_ZERO(net);
    HDP_REQUIRE(err, a);
    HDP_REQUIRE(err, net);
    hdp_status st = hdp_kl_arch_check(a, err);
    if (st != HDP_OK)
        return st;
    net->arch = *a;
    hdp_kl_widths(a, net->w);
    hdp_kl_betas(a, net->beta);
    for (int l = 1; l <= a->L; l++) {
        net->W[l] = hdp_dalloc((size_t)net->w[l] * (size_t)net->w[l - 1]);
        if (!net->W[l]) {
            hdp_kl_net_free(net);
            return hdp_fail(err, HDP_ENOMEM, "out of memory for the weights of layer %d", l);
        }
    }
    return HDP_OK;
}

void hdp_kl_net_draw(hdp_kl_net *net, hdp_xoshiro *g)
{
    if (!net || !g)
        return;
    for (int l = 1; l <= net->arch.L; l++) {
        const double s = sqrt(net->beta[l]);
        const long len = net->w[l] * net->w[l - 1];
        double *W = net->W[l];
        for (long i = 0; i < len; i++)
            W[i] = s * hdp_rng_normal_fast(g);
    }
}

void hdp_kl_sphere(hdp_xoshiro *g, long d, double *x)
{
    if (!g || !x)
        return;
    double s2;
    do {
        s2 = 0;
        for (long i = 0; i < d; i++) {
            x[i] = hdp_rng_normal_fast(g);
            s2 += x[i] * x[i];
        }
    } while (!(s2 > 0));
    const double scale = sqrt((double)d / s2);
    for (long i = 0; i < d; i++)
        x[i] *= scale;
}

/* hn2[i] = ||h_i||^2 of the n rows of H (n x m) */
static void row_norms2(const double *H, long n, long m, double *hn2)
{
    for (long i = 0; i < n; i++) {
        double s = 0;
        for (long k = 0; k < m; k++)
            s += H[i * m + k] * H[i * m + k];
        hn2[i] = s;
    }
}

/* Forward pass, back-propagated signals and the Gram of the Jacobian (kl.h). For layer l the
 * Jacobian of output a at x_i is delta_l^a(x_i) h_{l-1}(x_i)^T (Ye et al., eqs. 35-36), so
 * <J_l(x_i, a), J_l(x_j, b)> = <delta_l^a(x_i), delta_l^b(x_j)> <h_{l-1}(x_i), h_{l-1}(x_j)>,
 * with delta_L^a = e_a, delta_{L-1}^a = 1[g_{L-1} > 0] .* W_L[a, :]^T and
 * delta_l^a = 1[g_l > 0] .* W_{l+1}^T delta_{l+1}^a. */
hdp_status hdp_kl_net_jacobian(const hdp_kl_net *net, const double *X, long n, double *f0,
                               double *K, double *layer_norm2, hdp_error *err)
{
    HDP_REQUIRE(err, net);
    HDP_REQUIRE(err, X);
    const int L = net->arch.L;
    const long o = net->arch.o, N = n * o;
    const long *w = net->w;
    long wmax = 0;
    for (int l = 0; l <= L; l++)
        wmax = w[l] > wmax ? w[l] : wmax;
    double *H[HDP_KL_MAX_DEPTH + 1] = {0}, *D, *Dn, *GD, *GH, *hn2;
    const size_t Nw = (size_t)N * (size_t)wmax, NN = K ? (size_t)N * (size_t)N : 1;
    hdp_mc_vec v[HDP_MC_BLOCK_MAX] = {{&D, Nw}, {&Dn, Nw}, {&GD, NN},
                                      {&GH, K ? (size_t)n * (size_t)n : 1}, {&hn2, (size_t)n}};
    for (int l = 1; l < L; l++)
        v[4 + l] = (hdp_mc_vec){&H[l], (size_t)n * (size_t)w[l]};
    void *block = hdp_mc_vecs(v, (size_t)(4 + L));
    if (!block)
        return hdp_fail(err, HDP_ENOMEM, "out of memory for the Jacobian (n = %ld, width %ld)", n,
                        wmax);
    H[0] = (double *)X;
    /* forward: H_l = relu(H_{l-1} W_l^T); the mask of layer l is H_l > 0 */
    for (int l = 1; l < L; l++) {
        blas_gemm(0, 1, n, w[l], w[l - 1], 1.0, H[l - 1], w[l - 1], net->W[l], w[l - 1], 0.0, H[l],
             w[l]);
        const long len = n * w[l];
        for (long i = 0; i < len; i++)
            H[l][i] = H[l][i] > 0 ? H[l][i] : 0.0;
    }
    if (f0)
        blas_gemm(0, 1, n, o, w[L - 1], 1.0, H[L - 1], w[L - 1], net->W[L], w[L - 1], 0.0, f0, o);
    if (K)
        memset(K, 0, sizeof(double) * (size_t)N * (size_t)N);
    /* layer L: delta_L^a = e_a */
    const long mL1 = w[L - 1];
    row_norms2(H[L - 1], n, mL1, hn2);
    for (long i = 0; layer_norm2 && i < n; i++)
        layer_norm2[i * L + (L - 1)] = (double)o * hn2[i];
    if (K) {
        blas_gemm(0, 1, n, n, mL1, 1.0, H[L - 1], mL1, H[L - 1], mL1, 0.0, GH, n);
        for (long i = 0; i < n; i++)
            for (long j = 0; j < n; j++)
                for (long a = 0; a < o; a++)
                    K[(i * o + a) * N + (j * o + a)] += GH[i * n + j];
    }
    /* delta_{L-1}: rows (i, a) = mask_{L-1}(i) .* W_L[a, :] */
    for (long i = 0; i < n; i++)
        for (long a = 0; a < o; a++)
            for (long k = 0; k < mL1; k++)
                D[(i * o + a) * mL1 + k] = H[L - 1][i * mL1 + k] > 0 ? net->W[L][a * mL1 + k] : 0.0;
    for (int l = L - 1; l >= 1; l--) {
        const long ml = w[l], mp = w[l - 1];
        /* D holds delta_l (N x m_l) */
        row_norms2(H[l - 1], n, mp, hn2);
        if (layer_norm2)
            for (long i = 0; i < n; i++) {
                double s = 0;
                for (long a = 0; a < o; a++)
                    for (long k = 0; k < ml; k++)
                        s += D[(i * o + a) * ml + k] * D[(i * o + a) * ml + k];
                layer_norm2[i * L + (l - 1)] = s * hn2[i];
            }
        if (K) {
            blas_gemm(0, 1, N, N, ml, 1.0, D, ml, D, ml, 0.0, GD, N);
            blas_gemm(0, 1, n, n, mp, 1.0, H[l - 1], mp, H[l - 1], mp, 0.0, GH, n);
            for (long p = 0; p < N; p++)
                for (long q = 0; q < N; q++)
                    K[p * N + q] += GD[p * N + q] * GH[(p / o) * n + (q / o)];
        }
        if (l > 1) {
            /* delta_{l-1} = mask_{l-1} .* (delta_l W_l) */
            blas_gemm(0, 0, N, mp, ml, 1.0, D, ml, net->W[l], mp, 0.0, Dn, mp);
            for (long p = 0; p < N; p++) {
                const double *h = H[l - 1] + (p / o) * mp;
                for (long k = 0; k < mp; k++)
                    if (!(h[k] > 0))
                        Dn[p * mp + k] = 0.0;
            }
            double *t = D;
            D = Dn;
            Dn = t;
        }
    }
    free(block);
    return HDP_OK;
}
