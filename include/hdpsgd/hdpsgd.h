/*
 * hdpsgd/hdpsgd.h — the whole public API of libhdpsgd in one include.
 *
 *   model.h     load a model: INI file (hdp_model_load_file) or key/value pairs (hdp_model_set)
 *   problem.h   spectrum, bins, schedule, clipping factors, threshold, accountant, built
 *               once for every side                                 hdp_problem_build
 *   progress.h  the one progress callback of the long calls            hdp_progress_fn
 *   ode.h       the risk ODE of homogenized DP-SGD (docs/theory.md §3)      hdp_ode_solve(_problem)
 *   sim.h       Monte Carlo of DP-SGD and the homogenized SDE        hdp_sim_run, hdp_sde_run
 *   validate.h  ODE vs simulation with a verdict; scaling in n      hdp_validate_run, _scaling
 *   privacy.h   accountant, zCDP <-> (epsilon, delta), calibration  (docs/theory.md §6)
 *   accountant.h  DP-SGD with Poisson sampling: PLD and RDP accountants, calibration (§6.5)
 *   design.h    schedule design on the ODE                          hdp_design_optimize, hdp_design_set_run
 *               (and on a problem: hdp_design_optimize_problem, hdp_design_set_run_problem)
 *   rates.h     optimised risk of each schedule family against gamma hdp_rates_run
 *   rf.h        DP-GD on random features and its OU limit           hdp_rf_simulate
 *   kl.h        KL privacy of noisy training by initialisation      hdp_kl_run
 *   nc.h        NoisyGD on neural-collapse features                 hdp_nc_run
 *   si.h        two-stage private learning of a single-index model  hdp_si_stage2
 *   handle.h    the library behind opaque pointers, for ctypes and other FFIs (the Python package)
 *   grid.h      the grid runner of the drivers' experiments        hdp_grid_run
 *   ncsweep.h   nc points and the sweeps over p (nc --sweep)       hdp_ncsweep_plan, _run
 *   klsweep.h   kl run --vs epochs|depth|width, kl init            hdp_klsweep_run, hdp_klinit_run
 *   rfexp.h     Bombari-Mondelli's Fig. 2 on random features (P1..P4)      hdp_rfexp_run
 *   siexp.h     sim-index experiments eps, n, align                hdp_siexp_run
 *   sweep.h     the point runners of `hdpsgd sweep`                hdp_sweep_point_run
 *   clip.h, schedule.h, spectrum.h, rng.h   the building blocks
 *
 * Conventions: every function that can fail returns an hdp_status (0 = HDP_OK)
 * and fills an hdp_error whose message names the problem; the library never
 * prints and never exits; there is no global mutable state apart from two
 * once-initialised items (the ziggurat tables, and GSL's error handler, which
 * hdp_gsl_quiet turns off), so independent models may be used from different
 * threads (one caveat: rf, kl and sim-index run OpenBLAS single-threaded during
 * their calls through the process-wide openblas_set_num_threads). Results own their
 * arrays: release them with the matching *_free.
 * Bad arguments: a function that returns an hdp_status refuses a NULL pointer argument
 * with HDP_EINPUT naming it (its output struct, when given, is zeroed first, so that the
 * *_free is safe after any failure); the solvers and simulators refuse a model that was
 * not finalized after its last change, or whose fields were written with invalid values
 * (hdp_model_check). Functions without a status do nothing (void) or return NaN (numbers)
 * for a NULL pointer; every *_free accepts NULL. The random-number kernels of rng.h are
 * the exception: a NULL state there is a programming error, unchecked for speed.
 * Link: pkg-config --cflags --libs hdpsgd, or find_package(hdpsgd) and
 * target_link_libraries(app hdpsgd::hdpsgd).
 */
#ifndef HDPSGD_HDPSGD_H
#define HDPSGD_HDPSGD_H

#include "hdpsgd/version.h"
#include "hdpsgd/error.h"
#include "hdpsgd/progress.h"
#include "hdpsgd/model.h"
#include "hdpsgd/clip.h"
#include "hdpsgd/spectrum.h"
#include "hdpsgd/schedule.h"
#include "hdpsgd/problem.h"
#include "hdpsgd/ode.h"
#include "hdpsgd/privacy.h"
#include "hdpsgd/accountant.h"
#include "hdpsgd/rng.h"
#include "hdpsgd/sim.h"
#include "hdpsgd/validate.h"
#include "hdpsgd/design.h"
#include "hdpsgd/rates.h"
#include "hdpsgd/rf.h"
#include "hdpsgd/kl.h"
#include "hdpsgd/nc.h"
#include "hdpsgd/si.h"
#include "hdpsgd/net.h"
#include "hdpsgd/handle.h"
#include "hdpsgd/fields.h"
#include "hdpsgd/grid.h"
#include "hdpsgd/ncsweep.h"
#include "hdpsgd/klsweep.h"
#include "hdpsgd/rfexp.h"
#include "hdpsgd/siexp.h"
#include "hdpsgd/netexp.h"
#include "hdpsgd/sweep.h"

#endif
