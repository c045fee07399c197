/* encoder.c unchanged, after sim_encoder (load_sim_encoder.c), on the
 * golden harness of ../linuxcnc: load() is "loadrt sim_encoder" then
 * "loadrt encoder num_chan=1", so the functions run in the order
 * make-pulses, update-speed, update-counters, capture-position. */
#include "hal.h"
typedef int32_t rtapi_s32;
typedef bool rtapi_bool;
#define hal_export_funct(name, f, arg, fp, reent, comp) \
    hal_export_functf(f, arg, fp, reent, comp, "%s", name)
#include "encoder.c"
int sim_encoder_main(void);
void load(void) { sim_encoder_main(); num_chan = 1; rtapi_app_main(); }
