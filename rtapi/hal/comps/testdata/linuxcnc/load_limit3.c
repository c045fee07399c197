/* limit3.comp's FUNCTION as halcompile expands it, for one instance. */
#include "shim/hal.h"
static struct {
    cell *in_p, *enable_p, *out_p, *load_p, *min__p, *max__p, *maxv_p, *maxa_p, *smooth_steps_p;
    double in_pos_old, out_old;
} inst;
#define __comp_inst (&inst)
#define in (hal_get_real(__comp_inst->in_p))
#define enable (hal_get_bool(__comp_inst->enable_p))
#define out (hal_get_real(__comp_inst->out_p))
#define out_set(v) (hal_set_real(__comp_inst->out_p, (v)))
#define load (hal_get_bool(__comp_inst->load_p))
#define min_ (hal_get_real(__comp_inst->min__p))
#define max_ (hal_get_real(__comp_inst->max__p))
#define maxv (hal_get_real(__comp_inst->maxv_p))
#define maxa (hal_get_real(__comp_inst->maxa_p))
#define smooth_steps (hal_get_ui32(__comp_inst->smooth_steps_p))
#define in_pos_old (__comp_inst->in_pos_old)
#define out_old (__comp_inst->out_old)
#define fperiod (period * 1e-9)
#define FUNCTION(name) static void name(void *arg, long period)
#include "build/limit3.body"
#undef load
void load(void) {
    hal_pin_new_real(0, HAL_IN, &inst.in_p, 0, "limit3.0.in");
    hal_pin_new_bool(0, HAL_IN, &inst.enable_p, 1, "limit3.0.enable");
    hal_pin_new_real(0, HAL_OUT, &inst.out_p, 0, "limit3.0.out");
    hal_pin_new_bool(0, HAL_IN, &inst.load_p, 0, "limit3.0.load");
    hal_pin_new_real(0, HAL_IN, &inst.min__p, -1e20, "limit3.0.min");
    hal_pin_new_real(0, HAL_IN, &inst.max__p, 1e20, "limit3.0.max");
    hal_pin_new_real(0, HAL_IN, &inst.maxv_p, 1e20, "limit3.0.maxv");
    hal_pin_new_real(0, HAL_IN, &inst.maxa_p, 1e7, "limit3.0.maxa");
    hal_pin_new_ui32(0, HAL_IN, &inst.smooth_steps_p, 2, "limit3.0.smooth-steps");
    hal_export_functf(_, 0, 1, 0, 0, "limit3.0");
}
