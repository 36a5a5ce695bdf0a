/*
 * net_keys.c — the [net] section of the model files: full-batch DP-GD on a two-layer ReLU
 * network (the privacy-for-free paper's Fig. 1; docs/theory.md §7.4; hdpsgd/net.h). Its keys,
 * the names of its enums, the size that finalize checks and the accessors hdp_net_keys_of,
 * hdp_net_keys_edit. Registered in families.c.
 */
#include "families/sections.h"
#include "hdpsgd/net.h"

#include <math.h>
#include <string.h>

static const char *const net_activation_names[] = {"relu", NULL};
static const char *const net_loss_names[] = {"ce", "squared", NULL};
static const char *const net_train_names[] = {"both", "second", NULL};
static const char *const net_clip_scale_names[] = {"absolute", "sqrt-width", NULL};
static const char *const net_calibration_names[] = {"simple", "zcdp", NULL};

const char *hdp_net_activation_name(hdp_net_activation_kind k) { return net_activation_names[k]; }
const char *hdp_net_loss_name(hdp_net_loss_kind k) { return net_loss_names[k]; }
const char *hdp_net_train_name(hdp_net_train_kind k) { return net_train_names[k]; }
const char *hdp_net_clip_scale_name(hdp_net_clip_scale_kind k)
{
    return net_clip_scale_names[k];
}
const char *hdp_net_calibration_name(hdp_net_calibration_kind k)
{
    return net_calibration_names[k];
}

/* The parameters of the widest layer times the samples that share a block are bounded by
 * the data, not by the model: only the weights are checked here. */
static hdp_status net_finalize(hdp_model *m, hdp_error *err)
{
    const hdp_net_keys *q = hdp_net_keys_of(m);
    double cells, w = (double)q->width;
    if ((cells = w * (double)q->d) > HDP_MODEL_MAX_CELLS)
        return hdp_model_too_big(m, "net", "width", w, "net.d", (double)q->d, cells,
                                 "the first layer", err);
    return HDP_OK;
}

/* the rows of the list in hdpsgd/net.h, hdp_net_section and hdp_net_keys_of */
#define HDP_SECTION_KEYS hdp_net_keys
HDP_SECTION_DEFINE(net, HDP_NET_KEYS, net_finalize)

hdp_net_keys *hdp_net_keys_edit(hdp_model *m) { return hdp_model_section(m, &hdp_net_section); }

void hdp_net_config_from_model(const hdp_model *m, long n, hdp_net_config *c)
{
    const hdp_net_keys *q = hdp_net_keys_of(m);
    memset(c, 0, sizeof *c);
    c->width = q->width;
    c->loss = q->loss;
    c->train = q->train;
    c->steps = q->steps;
    c->lr = q->lr;
    c->clip = q->clip_scale == HDP_NET_CLIP_SQRT_WIDTH ? q->C * sqrt((double)q->width) : q->C;
    c->epsilon = q->epsilon;
    c->delta = q->delta == HDP_AUTO_DOUBLE ? 1.0 / (double)n : q->delta;
    c->calibration = q->calibration;
    c->records = q->records < q->steps ? q->records : q->steps;
    c->seed = m->seed;
}
