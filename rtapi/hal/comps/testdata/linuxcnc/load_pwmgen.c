/* pwmgen.c unchanged; it exports with hal_export_funct, which the shim
 * lacks, so it is defined here on top of hal_export_functf. */
#include "hal.h"
int hal_export_funct(const char *name, void (*f)(void *, long), void *arg, int fp, int reent, int comp) {
    return hal_export_functf(f, arg, fp, reent, comp, "%s", name);
}
#include "pwmgen.c"
void load(void) { output_type[0] = 0; output_type[1] = 1; output_type[2] = 2; rtapi_app_main(); }
