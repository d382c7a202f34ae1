/// @file server/ops/failpoint.c
/// The failure-injection test hook of failpoint.h.
#include "failpoint.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

int cqd_failpoint_init(cqd_failpoint *fp, const char *spec)
{
    fp->name[0] = '\0';
    fp->at = 1;
    fp->every = false;
    atomic_init(&fp->passes, 0);
    if (!spec || !*spec)
        return 0;
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (n == 0 || n >= sizeof fp->name)
        return -1;
    long at = 1;
    bool every = false;
    if (colon) {
        char *end;
        at = strtol(colon + 1, &end, 10);
        every = *end == '+';
        if (end == colon + 1 || end[every] || at < 1)
            return -1;
    }
    memcpy(fp->name, spec, n);
    fp->name[n] = '\0';
    fp->at = at;
    fp->every = every;
    return 0;
}

bool cqd_failpoint_hit(cqd_failpoint *fp, const char *name)
{
    if (!fp->name[0] || strcmp(fp->name, name) != 0)
        return false;
    long pass = atomic_fetch_add(&fp->passes, 1) + 1;
    return fp->every ? pass >= fp->at : pass == fp->at;
}

void cqd_failpoint_crash(cqd_failpoint *fp, const char *name)
{
    if (cqd_failpoint_hit(fp, name))
        raise(SIGKILL);
}
