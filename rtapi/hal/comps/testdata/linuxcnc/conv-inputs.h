/* The inputs conv-gen.sh feeds every conv_IN_OUT, in order. conv.golden
 * shows each, and conv_test.go feeds gortapi the same from there. */
static volatile const bool in_bit[] = {0, 1, 0};
static volatile const double in_float[] = {0, 0.5, -0.5, 1, 1.5, -1, -0.0, 2147483647.0, 2147483647.5, 2147483648.0,
    -2147483648.0, -2147483648.75, -2147483649.0, 4294967295.0, 4294967295.5, 4294967296.0, -4294967296.0,
    9007199254740993.0, 9223372036854775807.0, -9223372036854775808.0, -9223372036854777856.0,
    18446744073709551615.0, 36893488147419103232.0, 1e300, -1e300, 1.0/0.0, -1.0/0.0, 0.0/0.0, 3, 0.25};
static volatile const int32_t in_s32[] = {0, 1, 2, -1, INT32_MAX, INT32_MIN, 0, 7};
static volatile const uint32_t in_u32[] = {0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0, 7};
static volatile const int64_t in_s64[] = {0, 1, 2, -1, INT32_MAX, (int64_t)INT32_MAX + 1, INT32_MIN, (int64_t)INT32_MIN - 1,
    0xffffffff, 0x100000000, 9007199254740993, INT64_MAX, INT64_MIN, -4294967296, 0, 7};
static volatile const uint64_t in_u64[] = {0, 1, UINT64_MAX, 0xffffffff80000000, 2, 0x7fffffff, 0x80000000, 0xffffffff,
    0x100000000, 9007199254740993, INT64_MAX, (uint64_t)1 << 63, UINT64_MAX, 0xffffffff80000000, 0xffffffff7fffffff,
    0, 7};
static void show_bit(bool v) { printf("%d", v); }
static void show_float(double v) { printf("%a", v); }
static void show_s32(int32_t v) { printf("%d", v); }
static void show_u32(uint32_t v) { printf("%u", v); }
static void show_s64(int64_t v) { printf("%lld", (long long)v); }
static void show_u64(uint64_t v) { printf("%llu", (unsigned long long)v); }
