#include "hal.h"
