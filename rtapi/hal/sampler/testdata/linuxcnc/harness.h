/* The few HAL declarations the extracted halsampler and halstreamer code
 * uses, with LinuxCNC's values (src/hal/hal.h). */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { HAL_BIT = 1, HAL_FLOAT = 2, HAL_S32 = 3, HAL_U32 = 4, HAL_S64 = 6, HAL_U64 = 7 } hal_type_t;
#define HAL_BOOL HAL_BIT
#define HAL_REAL HAL_FLOAT
#define HAL_SINT HAL_S64
#define HAL_UINT HAL_U64
union hal_stream_data {
	double f;
	bool b;
	int32_t s;
	uint32_t u;
	int64_t l;
	uint64_t k;
};
static hal_type_t types[64];
#define hal_stream_element_type(stream, n) types[n]

static int parse_type(char c)
{
	switch (c | 0x20) {
	case 'f': case 'r': return HAL_FLOAT;
	case 'b': return HAL_BIT;
	case 's': return HAL_S32;
	case 'u': return HAL_U32;
	case 'l': return HAL_S64;
	case 'k': return HAL_U64;
	}
	fprintf(stderr, "bad type %c\n", c);
	exit(2);
}
