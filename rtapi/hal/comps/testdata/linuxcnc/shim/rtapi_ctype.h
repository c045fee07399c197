#include <ctype.h>
