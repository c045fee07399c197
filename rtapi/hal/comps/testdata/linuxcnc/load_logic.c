/* oneshot, timedelay, edge, toggle and updown's FUNCTIONs as halcompile
 * expands them, one instance each, exported in that order. Parameters
 * are registered as pins: the harness does not tell them apart. */
#include "shim/hal.h"
typedef bool rtapi_bool;
typedef int32_t rtapi_s32;
#define fperiod (period * 1e-9)
#define FUNCTION(name) static void name(void *arg, long period)
#define EXTRA_SETUP() static int oneshot_setup(void *inst, char *prefix, long extra_arg)
#define B(name) (hal_get_bool(__comp_inst->name##_p))
#define R(name) (hal_get_real(__comp_inst->name##_p))

static struct { cell *in_p, *reset_p, *out_p, *out_not_p, *width_p, *time_left_p, *retriggerable_p, *rising_p, *falling_p; } oneshot;
static double oneshot_data[4];
#define __comp_inst (&oneshot)
#define data (*(internal *)oneshot_data)
#define in B(in)
#define reset B(reset)
#define width R(width)
#define retriggerable B(retriggerable)
#define rising B(rising)
#define falling B(falling)
#define out_set(v) hal_set_bool(__comp_inst->out_p, (v))
#define out_not_set(v) hal_set_bool(__comp_inst->out_not_p, (v))
#define time_left_set(v) hal_set_real(__comp_inst->time_left_p, (v))
#define _ oneshot_fn
#include "build/oneshot.body"
#undef _
#undef __comp_inst
#undef data
#undef in
#undef reset
#undef out_set

static struct { cell *in_p, *out_p, *on_delay_p, *off_delay_p, *elapsed_p; double timer; } timedelay;
#define __comp_inst (&timedelay)
#define in B(in)
#define out B(out)
#define on_delay R(on_delay)
#define off_delay R(off_delay)
#define timer (__comp_inst->timer)
#define out_set(v) hal_set_bool(__comp_inst->out_p, (v))
#define elapsed_set(v) hal_set_real(__comp_inst->elapsed_p, (v))
#define _ timedelay_fn
FUNCTION(_) {
#include "build/timedelay.body"
}
#undef _
#undef __comp_inst
#undef in
#undef out
#undef out_set

static struct { cell *in_p, *out_p, *out_invert_p, *both_p, *in_edge_p, *out_width_ns_p, *time_left_ns_p, *last_in_p; int first; } edge;
#define __comp_inst (&edge)
#define in B(in)
#define out B(out)
#define both B(both)
#define in_edge B(in_edge)
#define last_in B(last_in)
#define out_width_ns (hal_get_si32(__comp_inst->out_width_ns_p))
#define time_left_ns (hal_get_si32(__comp_inst->time_left_ns_p))
#define first (__comp_inst->first)
#define out_set(v) hal_set_bool(__comp_inst->out_p, (v))
#define out_invert_set(v) hal_set_bool(__comp_inst->out_invert_p, (v))
#define last_in_set(v) hal_set_bool(__comp_inst->last_in_p, (v))
#define time_left_ns_set(v) hal_set_si32(__comp_inst->time_left_ns_p, (v))
#define _ edge_fn
#include "build/edge.body"
#undef _
#undef __comp_inst
#undef in
#undef out
#undef first
#undef out_set

static struct { cell *in_p, *out_p, *debounce_p; } toggle;
static int toggle_store[2];
#define __comp_inst (&toggle)
#define data (*(toggle_data *)toggle_store)
#define in B(in)
#define out B(out)
#define debounce (hal_get_ui32(__comp_inst->debounce_p))
#define debounce_set(v) hal_set_ui32(__comp_inst->debounce_p, (v))
#define out_set(v) hal_set_bool(__comp_inst->out_p, (v))
#define _ toggle_fn
#include "build/toggle.body"
#undef _
#undef __comp_inst
#undef data
#undef in
#undef out
#undef out_set

static struct { cell *countup_p, *countdown_p, *reset_p, *count_p, *clamp__p, *wrap_p, *max__p, *min__p; int oldup, olddown, first; } updown;
#define __comp_inst (&updown)
#define countup B(countup)
#define countdown B(countdown)
#define reset B(reset)
#define count (hal_get_si32(__comp_inst->count_p))
#define count_set(v) hal_set_si32(__comp_inst->count_p, (v))
#define clamp_ B(clamp_)
#define wrap B(wrap)
#define max_ (hal_get_si32(__comp_inst->max__p))
#define min_ (hal_get_si32(__comp_inst->min__p))
#define oldup (__comp_inst->oldup)
#define olddown (__comp_inst->olddown)
#define first (__comp_inst->first)
#define _ updown_fn
#include "build/updown.body"
#undef _
#undef __comp_inst
#undef first

void load(void) {
    hal_pin_new_bool(0, HAL_IN, &oneshot.in_p, 0, "oneshot.0.in");
    hal_pin_new_bool(0, HAL_IN, &oneshot.reset_p, 0, "oneshot.0.reset");
    hal_pin_new_bool(0, HAL_OUT, &oneshot.out_p, 0, "oneshot.0.out");
    hal_pin_new_bool(0, HAL_OUT, &oneshot.out_not_p, 0, "oneshot.0.out-not");
    hal_pin_new_real(0, HAL_IN, &oneshot.width_p, 0, "oneshot.0.width");
    hal_pin_new_real(0, HAL_OUT, &oneshot.time_left_p, 0, "oneshot.0.time-left");
    hal_pin_new_bool(0, HAL_IN, &oneshot.retriggerable_p, 1, "oneshot.0.retriggerable");
    hal_pin_new_bool(0, HAL_IN, &oneshot.rising_p, 1, "oneshot.0.rising");
    hal_pin_new_bool(0, HAL_IN, &oneshot.falling_p, 0, "oneshot.0.falling");
    oneshot_setup(0, 0, 0);
    hal_export_functf(oneshot_fn, 0, 1, 0, 0, "oneshot.0");
    hal_pin_new_bool(0, HAL_IN, &timedelay.in_p, 0, "timedelay.0.in");
    hal_pin_new_bool(0, HAL_OUT, &timedelay.out_p, 0, "timedelay.0.out");
    hal_pin_new_real(0, HAL_IN, &timedelay.on_delay_p, 0.5, "timedelay.0.on-delay");
    hal_pin_new_real(0, HAL_IN, &timedelay.off_delay_p, 0.5, "timedelay.0.off-delay");
    hal_pin_new_real(0, HAL_OUT, &timedelay.elapsed_p, 0, "timedelay.0.elapsed");
    hal_export_functf(timedelay_fn, 0, 1, 0, 0, "timedelay.0");
    hal_pin_new_bool(0, HAL_IN, &edge.in_p, 0, "edge.0.in");
    hal_pin_new_bool(0, HAL_OUT, &edge.out_p, 0, "edge.0.out");
    hal_pin_new_bool(0, HAL_OUT, &edge.out_invert_p, 0, "edge.0.out-invert");
    hal_pin_new_bool(0, HAL_IN, &edge.both_p, 0, "edge.0.both");
    hal_pin_new_bool(0, HAL_IN, &edge.in_edge_p, 1, "edge.0.in-edge");
    hal_pin_new_si32(0, HAL_IN, &edge.out_width_ns_p, 0, "edge.0.out-width-ns");
    hal_pin_new_si32(0, HAL_IN, &edge.time_left_ns_p, 0, "edge.0.time-left-ns");
    hal_pin_new_bool(0, HAL_IN, &edge.last_in_p, 0, "edge.0.last-in");
    edge.first = 1;
    hal_export_functf(edge_fn, 0, 1, 0, 0, "edge.0");
    hal_pin_new_bool(0, HAL_IN, &toggle.in_p, 0, "toggle.0.in");
    hal_pin_new_bool(0, HAL_IO, &toggle.out_p, 0, "toggle.0.out");
    hal_pin_new_ui32(0, HAL_IN, &toggle.debounce_p, 2, "toggle.0.debounce");
    hal_export_functf(toggle_fn, 0, 1, 0, 0, "toggle.0");
    hal_pin_new_bool(0, HAL_IN, &updown.countup_p, 0, "updown.0.countup");
    hal_pin_new_bool(0, HAL_IN, &updown.countdown_p, 0, "updown.0.countdown");
    hal_pin_new_bool(0, HAL_IN, &updown.reset_p, 0, "updown.0.reset");
    hal_pin_new_si32(0, HAL_OUT, &updown.count_p, 0, "updown.0.count");
    hal_pin_new_bool(0, HAL_IN, &updown.clamp__p, 0, "updown.0.clamp");
    hal_pin_new_bool(0, HAL_IN, &updown.wrap_p, 0, "updown.0.wrap");
    hal_pin_new_si32(0, HAL_IN, &updown.max__p, 0x7FFFFFFF, "updown.0.max");
    hal_pin_new_si32(0, HAL_IN, &updown.min__p, 0, "updown.0.min");
    updown.first = 1;
    hal_export_functf(updown_fn, 0, 1, 0, 0, "updown.0");
}
