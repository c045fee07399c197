/* A stand-in for LinuxCNC's rtapi.h and hal.h: just enough for
 * stepgen.c to compile unchanged. A pin or parameter is a reference to
 * a cell; setp writes the cell. */
#ifndef SHIM_HAL_H
#define SHIM_HAL_H
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef union cell {
    double r;
    int32_t s32;
    uint32_t u32;
    bool b;
} cell;
typedef cell *hal_real_t, *hal_bool_t, *hal_sint_t, *hal_uint_t;
typedef union { cell *b, *s, *u, *r; } hal_refs_u;
typedef double rtapi_real;
typedef uint32_t rtapi_u32;
typedef enum { HAL_IN = 16, HAL_OUT = 32, HAL_IO = 48 } hal_pin_dir_t;
typedef enum { HAL_RO = 64, HAL_RW = 192 } hal_param_dir_t;
#define RTAPI_MSG_ERR 1
#define RTAPI_MSG_WARN 2
#define RTAPI_MSG_INFO 3
#define MODULE_AUTHOR(x)
#define MODULE_DESCRIPTION(x)
#define MODULE_LICENSE(x)
#define RTAPI_MP_ARRAY_STRING(v, n, d)
#define RTAPI_MP_ARRAY_INT(v, n, d)

static inline double hal_get_real(cell *c) { return c->r; }
static inline double hal_set_real(cell *c, double v) { c->r = v; return v; }
static inline bool hal_get_bool(cell *c) { return c->b; }
static inline bool hal_set_bool(cell *c, bool v) { c->b = v; return v; }
static inline int32_t hal_get_si32(cell *c) { return c->s32; }
static inline int32_t hal_set_si32(cell *c, int32_t v) { c->s32 = v; return v; }
static inline uint32_t hal_get_ui32(cell *c) { return c->u32; }
static inline uint32_t hal_set_ui32(cell *c, uint32_t v) { c->u32 = v; return v; }

int rtapi_print_msg(int level, const char *fmt, ...);
int rtapi_get_msg_level(void);
int rtapi_set_msg_level(int level);
int hal_init(const char *name);
int hal_ready(int comp);
int hal_exit(int comp);
void *hal_malloc(long size);
int hal_pin_new_real(int comp, hal_pin_dir_t d, cell **ref, double def, const char *fmt, ...);
int hal_pin_new_bool(int comp, hal_pin_dir_t d, cell **ref, bool def, const char *fmt, ...);
int hal_pin_new_si32(int comp, hal_pin_dir_t d, cell **ref, int32_t def, const char *fmt, ...);
int hal_param_new_real(int comp, hal_param_dir_t d, cell **ref, double def, const char *fmt, ...);
int hal_param_new_si32(int comp, hal_param_dir_t d, cell **ref, int32_t def, const char *fmt, ...);
int hal_param_new_ui32(int comp, hal_param_dir_t d, cell **ref, uint32_t def, const char *fmt, ...);
int hal_param_new_fake(int comp, hal_refs_u *ref);
int hal_export_funct(const char *name, void (*f)(void *, long), void *arg, int fp, int reent, int comp);
#endif
