#include "pid.c"
void load(void) { num_chan = 1; debug = 1; rtapi_app_main(); }
