/* hypot, wcomp, comp, abs, near, limit2 and mult2's FUNCTIONs as
 * halcompile expands them, one instance each, exported in that order
 * (math-gen.sh). */
#include "shim/hal.h"
typedef bool rtapi_bool; /* not in the shim */
#define fperiod (period * 1e-9)
#define FUNCTION(name) static void name(void *arg, long period)
#define R(p) (hal_get_real(__comp_inst->p##_p))
#define B(p) (hal_get_bool(__comp_inst->p##_p))
#define SETR(p, v) (hal_set_real(__comp_inst->p##_p, (v)))
#define SETB(p, v) (hal_set_bool(__comp_inst->p##_p, (v)))

static struct { cell *in0_p, *in1_p, *in2_p, *out_p; } hypot_i;
#define __comp_inst (&hypot_i)
#define in0 R(in0)
#define in1 R(in1)
#define in2 R(in2)
#define out_set(v) SETR(out, v)
#define _ hypot_fn
#include "build/hypot.body"
#undef _
#undef __comp_inst
#undef in0
#undef in1
#undef in2
#undef out_set

static struct { cell *in_p, *min__p, *max__p, *out_p, *under_p, *over_p; } wcomp_i;
#define __comp_inst (&wcomp_i)
#define in R(in)
#define min_ R(min_)
#define max_ R(max_)
#define out_set(v) SETB(out, v)
#define under_set(v) SETB(under, v)
#define over_set(v) SETB(over, v)
#define _ wcomp_fn
#include "build/wcomp.body"
#undef _
#undef __comp_inst
#undef in
#undef min_
#undef max_
#undef out_set

static struct { cell *in0_p, *in1_p, *out_p, *equal_p, *hyst_p; } comp_i;
#define __comp_inst (&comp_i)
#define in0 R(in0)
#define in1 R(in1)
#define hyst R(hyst)
#define out_set(v) SETB(out, v)
#define equal_set(v) SETB(equal, v)
#define _ comp_fn
#include "build/comp.body"
#undef _
#undef __comp_inst
#undef in0
#undef in1
#undef out_set

static struct { cell *in_p, *out_p, *sign_p, *is_positive__p, *is_negative__p; } abs_i;
#define __comp_inst (&abs_i)
#define in R(in)
#define out_set(v) SETR(out, v)
#define sign_set(v) SETB(sign, v)
#define is_positive__set(v) SETB(is_positive_, v)
#define is_negative__set(v) SETB(is_negative_, v)
#define _ abs_fn
#include "build/abs.body"
#undef _
#undef __comp_inst
#undef in
#undef out_set

static struct { cell *in1__p, *in2__p, *scale_p, *difference_p, *out_p; } near_i;
#define __comp_inst (&near_i)
#define in1_ R(in1_)
#define in2_ R(in2_)
#define scale R(scale)
#define difference R(difference)
#define out_set(v) SETB(out, v)
#define _ near_fn
#include "build/near.body"
#undef _
#undef __comp_inst
#undef out_set

static struct { cell *in_p, *out_p, *load_p, *min__p, *max__p, *maxv_p; void *_data; } limit2_i;
#define __comp_inst (&limit2_i)
#define in R(in)
#define load B(load)
#define min_ R(min_)
#define max_ R(max_)
#define maxv R(maxv)
#define out_set(v) SETR(out, v)
#define data (*(limit2_data *)(__comp_inst->_data))
#define _ limit2_fn
#include "build/limit2.body"
#undef _
#undef __comp_inst
#undef in
#undef load
#undef out_set

static struct { cell *in0_p, *in1_p, *out_p; } mult2_i;
#define __comp_inst (&mult2_i)
#define in0 R(in0)
#define in1 R(in1)
#define out_set(v) SETR(out, v)
#define _ mult2_fn
#include "build/mult2.body"
#undef _
#undef __comp_inst

#define PR(c, p, d, def) hal_pin_new_real(0, d, &c##_i.p##_p, def, #c ".0." #p)
#define PB(c, p, d, def) hal_pin_new_bool(0, d, &c##_i.p##_p, def, #c ".0." #p)
void load(void) {
    PR(hypot, in0, HAL_IN, 0); PR(hypot, in1, HAL_IN, 0); PR(hypot, in2, HAL_IN, 0); PR(hypot, out, HAL_OUT, 0);
    hal_export_functf(hypot_fn, 0, 1, 0, 0, "hypot.0");
    PR(wcomp, in, HAL_IN, 0);
    hal_pin_new_real(0, HAL_IN, &wcomp_i.min__p, 0, "wcomp.0.min");
    hal_pin_new_real(0, HAL_IN, &wcomp_i.max__p, 0, "wcomp.0.max");
    PB(wcomp, out, HAL_OUT, 0); PB(wcomp, under, HAL_OUT, 0); PB(wcomp, over, HAL_OUT, 0);
    hal_export_functf(wcomp_fn, 0, 1, 0, 0, "wcomp.0");
    PR(comp, in0, HAL_IN, 0); PR(comp, in1, HAL_IN, 0); PB(comp, out, HAL_OUT, 0); PB(comp, equal, HAL_OUT, 0);
    hal_param_new_real(0, HAL_RW, &comp_i.hyst_p, 0, "comp.0.hyst");
    hal_export_functf(comp_fn, 0, 1, 0, 0, "comp.0");
    PR(abs, in, HAL_IN, 0); PR(abs, out, HAL_OUT, 0); PB(abs, sign, HAL_OUT, 0);
    hal_pin_new_bool(0, HAL_OUT, &abs_i.is_positive__p, 0, "abs.0.is-positive");
    hal_pin_new_bool(0, HAL_OUT, &abs_i.is_negative__p, 0, "abs.0.is-negative");
    hal_export_functf(abs_fn, 0, 1, 0, 0, "abs.0");
    hal_pin_new_real(0, HAL_IN, &near_i.in1__p, 0, "near.0.in1");
    hal_pin_new_real(0, HAL_IN, &near_i.in2__p, 0, "near.0.in2");
    hal_param_new_real(0, HAL_RW, &near_i.scale_p, 1, "near.0.scale");
    hal_param_new_real(0, HAL_RW, &near_i.difference_p, 0, "near.0.difference");
    PB(near, out, HAL_OUT, 0);
    hal_export_functf(near_fn, 0, 1, 0, 0, "near.0");
    PR(limit2, in, HAL_IN, 0); PR(limit2, out, HAL_OUT, 0); PB(limit2, load, HAL_IN, 0);
    hal_pin_new_real(0, HAL_IN, &limit2_i.min__p, -1e20, "limit2.0.min");
    hal_pin_new_real(0, HAL_IN, &limit2_i.max__p, 1e20, "limit2.0.max");
    PR(limit2, maxv, HAL_IN, 1e20);
    limit2_i._data = hal_malloc(sizeof(limit2_data));
    hal_export_functf(limit2_fn, 0, 1, 0, 0, "limit2.0");
    PR(mult2, in0, HAL_IN, 0); PR(mult2, in1, HAL_IN, 0); PR(mult2, out, HAL_OUT, 0);
    hal_export_functf(mult2_fn, 0, 1, 0, 0, "mult2.0");
}
