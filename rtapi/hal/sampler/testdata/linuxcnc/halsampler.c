/* Prints what LinuxCNC's halsampler prints for each input line "T HEX":
 * the value of type letter T whose HAL word (as gortapi's sampler ring
 * holds it) is HEX, as a one-pin sample with -t. The printing code is
 * sampler_usr.c's, extracted by gen.sh into build/print.body. */
#include "harness.h"

int main(void)
{
	char t;
	unsigned long long w;
	unsigned this_sample = 0;
	int tag = 1, num_pins = 1, n;
	union hal_stream_data buf[1];
	while (scanf(" %c %llx", &t, &w) == 2) {
		types[0] = parse_type(t);
		memset(buf, 0, sizeof buf);
		switch (types[0]) {
		case HAL_FLOAT: memcpy(&buf[0].f, &w, 8); break;
		case HAL_BIT: buf[0].b = w != 0; break;
		case HAL_S32: buf[0].s = (int32_t)w; break;
		case HAL_U32: buf[0].u = (uint32_t)w; break;
		case HAL_S64: buf[0].l = (int64_t)w; break;
		case HAL_U64: buf[0].k = w; break;
		}
		this_sample++;
#include "build/print.body"
	}
	return 0;
out:
	return 1;
}
