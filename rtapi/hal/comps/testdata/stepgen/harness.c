/* Runs LinuxCNC's stepgen.c, unchanged, on a script read from stdin and
 * prints what stepgen_test.go compares gortapi's stepgen with. Script:
 *   loadrt stepgen step_type=.. [ctrl_type=..] [user_step_type=..]
 *   thread NAME NS        (the first is the base thread; at most two)
 *   addf FUNCT THREAD     (in chain order)
 *   trace THREAD ITEM...  (printed after each cycle of THREAD)
 *   setp ITEM VALUE | run N (N base cycles) | show ITEM...
 * Time: base cycle k is at k * base period; a second thread's cycle at
 * the same instant runs after the base thread's (rate-monotonic
 * priority, as gortapi's sim flavor orders them). Output lines:
 *   b K v...  after base cycle K, only when the values changed
 *   s K v...  after every cycle of the second thread (at base cycle K)
 *   ITEM v    for show
 * Values: bits and integers in decimal, floats as their IEEE bits in hex. */
#include <stdarg.h>
#include <stdlib.h>
#include "shim/hal.h"

extern int step_type[], user_step_type[];
extern char *ctrl_type[];
int rtapi_app_main(void);

enum { REAL, BOOL, S32, U32 };
static struct item { char name[64]; int type; cell **ref; } items[512];
static int nitems;
static struct funct { char name[64]; void (*f)(void *, long); void *arg; } functs[8];
static int nfuncts;
static struct thread {
    char name[64];
    long period;
    struct funct *chain[8];
    int nchain;
    struct item *trace[64];
    int ntrace;
    char last[4096];
} threads[2];
static int nthreads;

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
int hal_param_new_real(int comp, hal_param_dir_t d, cell **ref, double def, const char *fmt, ...) NEW(REAL, r)
int hal_param_new_si32(int comp, hal_param_dir_t d, cell **ref, int32_t def, const char *fmt, ...) NEW(S32, s32)
int hal_param_new_ui32(int comp, hal_param_dir_t d, cell **ref, uint32_t def, const char *fmt, ...) NEW(U32, u32)
int hal_param_new_fake(int comp, hal_refs_u *ref) { (void)comp; ref->r = calloc(1, sizeof(cell)); return 0; }
int hal_export_funct(const char *name, void (*f)(void *, long), void *arg, int fp, int reent, int comp) {
    snprintf(functs[nfuncts].name, sizeof functs[nfuncts].name, "%s", name);
    functs[nfuncts].f = f;
    functs[nfuncts++].arg = arg;
    return 0;
}

static struct item *item(const char *name) {
    for (int i = 0; i < nitems; i++)
        if (!strcmp(items[i].name, name)) return &items[i];
    fprintf(stderr, "no item %s\n", name);
    exit(2);
}

static struct thread *thread(const char *name) {
    for (int i = 0; i < nthreads; i++)
        if (!strcmp(threads[i].name, name)) return &threads[i];
    fprintf(stderr, "no thread %s\n", name);
    exit(2);
}

static int value(char *buf, size_t n, struct item *it) {
    cell *c = *it->ref;
    switch (it->type) {
    case REAL: { uint64_t u; memcpy(&u, &c->r, 8); return snprintf(buf, n, " %016llx", (unsigned long long)u); }
    case BOOL: return snprintf(buf, n, " %d", c->b);
    case S32: return snprintf(buf, n, " %d", c->s32);
    default: return snprintf(buf, n, " %u", c->u32);
    }
}

static void set(cell *c, int type, const char *v) {
    switch (type) {
    case REAL: c->r = strtod(v, NULL); break;
    case BOOL: c->b = strtol(v, NULL, 0) != 0; break;
    case S32: c->s32 = strtol(v, NULL, 0); break;
    case U32: c->u32 = strtoul(v, NULL, 0); break;
    }
}

static void cycle(struct thread *t, long k, char tag) {
    char buf[4096];
    int n = 0;
    for (int i = 0; i < t->nchain; i++) t->chain[i]->f(t->chain[i]->arg, t->period);
    for (int i = 0; i < t->ntrace; i++) n += value(buf + n, sizeof buf - n, t->trace[i]);
    if (t->ntrace && (tag == 's' || strcmp(buf, t->last))) printf("%c %ld%s\n", tag, k, buf);
    strcpy(t->last, buf);
}

static void array(char *v, int *ints, char **strs) {
    for (int i = 0; v; i++) {
        char *comma = strchr(v, ',');
        if (comma) *comma = 0;
        if (ints) ints[i] = strtol(v, NULL, 0); else strs[i] = strdup(v);
        v = comma ? comma + 1 : NULL;
    }
}

int main(void) {
    char line[8192];
    long k = 0;
    strcpy(threads[0].last, "-");
    strcpy(threads[1].last, "-");
    while (fgets(line, sizeof line, stdin)) {
        char *p = strchr(line, '#');
        if (p) *p = 0;
        char *tok = strtok(line, " \t\n");
        if (!tok) continue;
        if (!strcmp(tok, "loadrt")) {
            strtok(NULL, " \t\n"); /* stepgen */
            while ((tok = strtok(NULL, " \t\n"))) {
                char *eq = strchr(tok, '=');
                *eq = 0;
                if (!strcmp(tok, "step_type")) array(eq + 1, step_type, NULL);
                else if (!strcmp(tok, "ctrl_type")) array(eq + 1, NULL, ctrl_type);
                else if (!strcmp(tok, "user_step_type")) array(eq + 1, user_step_type, NULL);
            }
            if (rtapi_app_main() != 0) { fprintf(stderr, "rtapi_app_main failed\n"); return 2; }
        } else if (!strcmp(tok, "thread")) {
            struct thread *t = &threads[nthreads++];
            snprintf(t->name, sizeof t->name, "%s", strtok(NULL, " \t\n"));
            t->period = strtol(strtok(NULL, " \t\n"), NULL, 0);
        } else if (!strcmp(tok, "addf")) {
            char *f = strtok(NULL, " \t\n");
            struct thread *t = thread(strtok(NULL, " \t\n"));
            for (int i = 0; i < nfuncts; i++)
                if (!strcmp(functs[i].name, f)) t->chain[t->nchain++] = &functs[i];
        } else if (!strcmp(tok, "trace")) {
            struct thread *t = thread(strtok(NULL, " \t\n"));
            while ((tok = strtok(NULL, " \t\n"))) t->trace[t->ntrace++] = item(tok);
        } else if (!strcmp(tok, "setp")) {
            struct item *it = item(strtok(NULL, " \t\n"));
            set(*it->ref, it->type, strtok(NULL, " \t\n"));
        } else if (!strcmp(tok, "run")) {
            long n = strtol(strtok(NULL, " \t\n"), NULL, 0);
            for (long end = k + n; k < end; k++) {
                cycle(&threads[0], k, 'b');
                if (nthreads > 1 && (k * threads[0].period) % threads[1].period == 0) cycle(&threads[1], k, 's');
            }
        } else if (!strcmp(tok, "show")) {
            while ((tok = strtok(NULL, " \t\n"))) {
                char buf[64];
                value(buf, sizeof buf, item(tok));
                printf("%s%s\n", tok, buf);
            }
        }
    }
    return 0;
}
