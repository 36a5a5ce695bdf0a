/* nc_spec.h — the base [nc] spec the NC tests start from (test_nc.c, test_nc_theorems.c):
 * K = 10 balanced classes, n = 250, one step of NoisyGD with cross-entropy from zero, G = 1,
 * rho = 0.005, no perturbation or remedy; p, the Monte Carlo's draws and the seed are the
 * test's. */
#ifndef HDPSGD_TESTS_NC_SPEC_H
#define HDPSGD_TESTS_NC_SPEC_H

#include <string.h>

#include "hdpsgd/nc.h"

static inline hdp_nc_spec nc_base_spec(long p, long draws, unsigned long long seed)
{
    hdp_nc_spec s;
    memset(&s, 0, sizeof s);
    s.K = 10;
    s.p = p;
    s.n = 250;
    s.G = 1;
    s.rho = 0.005;
    s.steps = 1;
    s.eta = 1;
    s.loss = HDP_NC_CE;
    s.init = HDP_NC_INIT_ZERO;
    s.init_std = 1;
    s.perturbation = HDP_NC_PERT_NONE;
    s.beta = 0.1;
    s.remedy = HDP_NC_REMEDY_NONE;
    s.public_samples = 200;
    s.batch = 0;
    s.draws = draws;
    s.test_samples = 5;
    s.delta = 1e-5;
    s.seed = seed;
    return s;
}

#endif
