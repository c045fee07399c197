/* debounce.c unchanged; the shim lacks hal_param_new_si32, defined here
 * on top of hal_pin_new_si32 (the harness does not tell them apart). */
#include <stdarg.h>
#include "hal.h"
typedef int32_t rtapi_s32;
int hal_param_new_si32(int comp, hal_param_dir_t d, cell **ref, int32_t def, const char *fmt, ...) {
    char name[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return hal_pin_new_si32(comp, HAL_IN, ref, def, "%s", name);
}
#include "debounce.c"
void load(void) { cfg[0] = 2; cfg[1] = 1; rtapi_app_main(); }
