/* mux_generic.c unchanged; the shim lacks hal_type_t, the u32 parameter
 * and the 64-bit pin calls (never reached: config has no such type),
 * defined here on top of the shim's pins. */
#include <stdarg.h>
#include "hal.h"
typedef int32_t rtapi_s32;
typedef enum { HAL_BOOL = 1, HAL_REAL = 2, HAL_S32 = 3, HAL_U32 = 4, HAL_S64 = 6, HAL_U64 = 7 } hal_type_t;
#define HAL_SINT HAL_S64
#define HAL_UINT HAL_U64
#define RTAPI_INT32_MAX INT32_MAX
#define RTAPI_INT32_MIN INT32_MIN
#define RTAPI_UINT32_MAX UINT32_MAX
static int hal_pin_new_sint(int comp, hal_pin_dir_t d, cell **ref, int v, const char *fmt, ...) { return -1; }
static int hal_pin_new_uint(int comp, hal_pin_dir_t d, cell **ref, int v, const char *fmt, ...) { return -1; }
int hal_param_new_ui32(int comp, hal_param_dir_t d, cell **ref, uint32_t def, const char *fmt, ...) {
    char name[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return hal_pin_new_ui32(comp, HAL_IN, ref, def, "%s", name);
}
#include "mux_generic.c"
void load(void) { config[0] = "ff8"; config[1] = "fs5"; config[2] = "fu4"; config[3] = "sb2"; config[4] = "ub2"; config[5] = "fb2"; rtapi_app_main(); }
