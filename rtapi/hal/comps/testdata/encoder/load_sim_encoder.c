/* sim_encoder.c unchanged, its entry points renamed (see load_encoder.c). */
#include "hal.h"
typedef int32_t rtapi_s32;
#define hal_export_funct(name, f, arg, fp, reent, comp) \
    hal_export_functf(f, arg, fp, reent, comp, "%s", name)
#define rtapi_app_main sim_encoder_main
#define rtapi_app_exit sim_encoder_exit
#include "sim_encoder.c"
