/* scale, sum2, lowpass and ddt's FUNCTIONs as halcompile expands them,
 * one instance each, exported in that order. */
#include "shim/hal.h"
#define fperiod (period * 1e-9)
#define FUNCTION(name) static void name(void *arg, long period)

static struct { cell *in_p, *gain_p, *offset_p, *out_p; } scale;
#define __comp_inst (&scale)
#define in (hal_get_real(__comp_inst->in_p))
#define gain (hal_get_real(__comp_inst->gain_p))
#define offset (hal_get_real(__comp_inst->offset_p))
#define out (hal_get_real(__comp_inst->out_p))
#define out_set(v) (hal_set_real(__comp_inst->out_p, (v)))
#define _ scale_fn
#include "build/scale.body"
#undef _
#undef __comp_inst
#undef gain
#undef offset

static struct { cell *in0_p, *in1_p, *gain0_p, *gain1_p, *offset_p, *out_p; } sum2;
#define __comp_inst (&sum2)
#define in0 (hal_get_real(__comp_inst->in0_p))
#define in1 (hal_get_real(__comp_inst->in1_p))
#define gain0 (hal_get_real(__comp_inst->gain0_p))
#define gain1 (hal_get_real(__comp_inst->gain1_p))
#define offset (hal_get_real(__comp_inst->offset_p))
#define _ sum2_fn
#include "build/sum2.body"
#undef _
#undef __comp_inst
#undef offset

static struct { cell *in_p, *out_p, *load_p, *gain_p; } lowpass;
#define __comp_inst (&lowpass)
#define load (hal_get_bool(__comp_inst->load_p))
#define gain (hal_get_real(__comp_inst->gain_p))
#define _ lowpass_fn
#include "build/lowpass.body"
#undef _
#undef __comp_inst
#undef load

static struct { cell *in_p, *out_p; double old; } ddt;
#define __comp_inst (&ddt)
#define old (__comp_inst->old)
#define _ ddt_fn
FUNCTION(_) {
#include "build/ddt.body"
}
#undef _

void load(void) {
    hal_pin_new_real(0, HAL_IN, &scale.in_p, 0, "scale.0.in");
    hal_pin_new_real(0, HAL_IN, &scale.gain_p, 0, "scale.0.gain");
    hal_pin_new_real(0, HAL_IN, &scale.offset_p, 0, "scale.0.offset");
    hal_pin_new_real(0, HAL_OUT, &scale.out_p, 0, "scale.0.out");
    hal_export_functf(scale_fn, 0, 1, 0, 0, "scale.0");
    hal_pin_new_real(0, HAL_IN, &sum2.in0_p, 0, "sum2.0.in0");
    hal_pin_new_real(0, HAL_IN, &sum2.in1_p, 0, "sum2.0.in1");
    hal_param_new_real(0, HAL_RW, &sum2.gain0_p, 1, "sum2.0.gain0");
    hal_param_new_real(0, HAL_RW, &sum2.gain1_p, 1, "sum2.0.gain1");
    hal_param_new_real(0, HAL_RW, &sum2.offset_p, 0, "sum2.0.offset");
    hal_pin_new_real(0, HAL_OUT, &sum2.out_p, 0, "sum2.0.out");
    hal_export_functf(sum2_fn, 0, 1, 0, 0, "sum2.0");
    hal_pin_new_real(0, HAL_IN, &lowpass.in_p, 0, "lowpass.0.in");
    hal_pin_new_real(0, HAL_OUT, &lowpass.out_p, 0, "lowpass.0.out");
    hal_pin_new_bool(0, HAL_IN, &lowpass.load_p, 0, "lowpass.0.load");
    hal_param_new_real(0, HAL_RW, &lowpass.gain_p, 0, "lowpass.0.gain");
    hal_export_functf(lowpass_fn, 0, 1, 0, 0, "lowpass.0");
    hal_pin_new_real(0, HAL_IN, &ddt.in_p, 0, "ddt.0.in");
    hal_pin_new_real(0, HAL_OUT, &ddt.out_p, 0, "ddt.0.out");
    hal_export_functf(ddt_fn, 0, 1, 0, 0, "ddt.0");
}
