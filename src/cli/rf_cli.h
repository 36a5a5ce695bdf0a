/*
 * rf_cli.h — pieces shared by `hdpsgd rf` (cmd_rf.c) and `hdpsgd rf-experiment`
 * (cmd_rf_experiment.c) (internal to the command-line front end).
 */
#ifndef HDPSGD_RF_CLI_H
#define HDPSGD_RF_CLI_H

#include <stddef.h>

#include "cli.h"
#include "hdpsgd/rf.h"

/* "given", "simple", "zcdp" or "none". */
const char *cli_rf_route_name(hdp_rf_sigma_route r);

/* The note of docs/theory.md §6 on stderr when sigma comes from the zCDP route. */
void cli_rf_sigma_note(const char *cmd, const hdp_rf_dpgd *q);

/* --runs sets rf.runs (not sim.runs, through cli_add_with: the schema checks it); --threads
 * and --seed as for sim. Returns 0 or EXIT_BAD_INPUT after a message. */
int cli_rf_apply_args(const char *cmd, cli_mc_args *a, cli_common *common);

/* Load the model of a random-features command and resolve it: the spec (on a data set's rows
 * with data.source = file: hdp_rf_spec_from_data; rf-experiment refuses them, and regime =
 * theorem) and the [dpgd] hyperparameters for its p, n, d. Returns 0, or an exit status after
 * the message (the model then freed). */
int cli_rf_load(const char *cmd, const cli_common *common, hdp_model *m, hdp_rf_spec *spec,
                hdp_rf_dpgd *q);

#endif
