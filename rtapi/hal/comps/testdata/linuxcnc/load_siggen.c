#include "siggen.c"
void load(void) { num_chan = 1; rtapi_app_main(); }
