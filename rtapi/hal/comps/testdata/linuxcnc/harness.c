/* A mini HAL that runs LinuxCNC's component code on a script read from
 * stdin, printing the values golden_test.go compares gortapi's with.
 * Script lines: period NS | setp PIN VALUE | link PIN SIG | sets SIG VALUE
 * | run N | show PIN... ; "#" starts a comment, loadrt lines are for Go. */
#include <stdarg.h>
#include <stdlib.h>
#include "shim/hal.h"

enum { REAL, BOOL, S32, U32 };
static struct item { char name[64]; int type; cell **ref; } items[512];
static int nitems;
static struct sig { char name[64]; cell c; } sigs[64];
static int nsigs;
static struct funct { void (*f)(void *, long); void *arg; } functs[64];
static int nfuncts;

int rtapi_print_msg(int level, const char *fmt, ...) { (void)level; (void)fmt; return 0; }
int rtapi_get_msg_level(void) { return 0; }
int rtapi_set_msg_level(int level) { (void)level; return 0; }
int hal_init(const char *name) { (void)name; return 1; }
int hal_ready(int comp) { (void)comp; return 0; }
int hal_exit(int comp) { (void)comp; return 0; }
void *hal_malloc(long size) { return calloc(1, size); }

static cell *newitem(int type, cell **ref, const char *fmt, va_list ap) {
    struct item *it = &items[nitems++];
    vsnprintf(it->name, sizeof it->name, fmt, ap);
    it->type = type;
    it->ref = ref;
    *ref = calloc(1, sizeof(cell));
    return *ref;
}
#define NEW(T, FIELD) { va_list ap; va_start(ap, fmt); newitem(T, ref, fmt, ap)->FIELD = def; va_end(ap); return 0; }
int hal_pin_new_real(int comp, hal_pin_dir_t d, cell **ref, double def, const char *fmt, ...) NEW(REAL, r)
int hal_pin_new_bool(int comp, hal_pin_dir_t d, cell **ref, bool def, const char *fmt, ...) NEW(BOOL, b)
int hal_pin_new_si32(int comp, hal_pin_dir_t d, cell **ref, int32_t def, const char *fmt, ...) NEW(S32, s32)
int hal_pin_new_ui32(int comp, hal_pin_dir_t d, cell **ref, uint32_t def, const char *fmt, ...) NEW(U32, u32)
int hal_param_new_real(int comp, hal_param_dir_t d, cell **ref, double def, const char *fmt, ...) NEW(REAL, r)
int hal_param_new_fake(int comp, hal_refs_u *ref) { (void)comp; ref->r = calloc(1, sizeof(cell)); return 0; }
int hal_export_functf(void (*f)(void *, long), void *arg, int fp, int reent, int comp, const char *fmt, ...) {
    functs[nfuncts].f = f;
    functs[nfuncts++].arg = arg;
    return 0;
}

static struct item *item(const char *name) {
    for (int i = 0; i < nitems; i++)
        if (!strcmp(items[i].name, name)) return &items[i];
    fprintf(stderr, "no pin %s\n", name);
    exit(2);
}

static struct sig *sig(const char *name) {
    for (int i = 0; i < nsigs; i++)
        if (!strcmp(sigs[i].name, name)) return &sigs[i];
    snprintf(sigs[nsigs].name, sizeof sigs[nsigs].name, "%s", name);
    return &sigs[nsigs++];
}

static void set(cell *c, int type, const char *v) {
    switch (type) {
    case REAL: c->r = strtod(v, NULL); break;
    case BOOL: c->b = strtol(v, NULL, 0) != 0; break;
    case S32: c->s32 = strtol(v, NULL, 0); break;
    case U32: c->u32 = strtoul(v, NULL, 0); break;
    }
}

void load(void);

int main(void) {
    char line[1024], a[64], b[64];
    long period = 1000000;
    load();
    while (fgets(line, sizeof line, stdin)) {
        char *p = strchr(line, '#');
        if (p) *p = 0;
        if (sscanf(line, "period %ld", &period) == 1) continue;
        if (sscanf(line, "setp %63s %63s", a, b) == 2) { struct item *it = item(a); set(*it->ref, it->type, b); continue; }
        if (sscanf(line, "link %63s %63s", a, b) == 2) { *item(a)->ref = &sig(b)->c; continue; }
        if (sscanf(line, "sets %63s %63s", a, b) == 2) { struct sig *s = sig(a); s->c.r = strtod(b, NULL); continue; }
        int n;
        if (sscanf(line, "run %d", &n) == 1) {
            for (int k = 0; k < n; k++)
                for (int i = 0; i < nfuncts; i++) functs[i].f(functs[i].arg, period);
            continue;
        }
        if (!strncmp(line, "show", 4)) {
            for (char *tok = strtok(line + 4, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
                struct item *it = item(tok);
                cell *c = *it->ref;
                switch (it->type) {
                case REAL: printf("%s %a\n", tok, c->r); break;
                case BOOL: printf("%s %d\n", tok, c->b); break;
                case S32: printf("%s %d\n", tok, c->s32); break;
                case U32: printf("%s %u\n", tok, c->u32); break;
                }
            }
            continue;
        }
    }
    return 0;
}
