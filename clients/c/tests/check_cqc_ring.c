/* The shard ring against the router's own model, deploy/nginx/ring.py
 * (nginx's `hash ... consistent`), for 10,000 world names on several
 * shard lists: every owner must be the one ring.py names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

enum { NAMES = 10000 };

static char names[NAMES][40];

/* Names of every shape the id rule allows, from a fixed seed. */
static void make_names(void)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-";
    uint64_t s = 12345;
    for (int i = 0; i < NAMES; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        int n = 1 + (int)((s >> 33) % 30);
        if (i % 3 == 0) {
            snprintf(names[i], sizeof names[i], "world-%d", i);
            continue;
        }
        for (int k = 0; k < n; k++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            names[i][k] = chars[(s >> 33) % (sizeof chars - 1)];
        }
        names[i][n] = '\0';
    }
}

/* ring.py's owner of every name, as an index into servers. */
static void python_owners(const char *const *servers, int n, int *owner)
{
    char in[] = "/tmp/cqc-ring-XXXXXX";
    int fd = mkstemp(in);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? "\t" : "", servers[i]);
    fputc('\n', f);
    for (int i = 0; i < NAMES; i++)
        fprintf(f, "%s\n", names[i]);
    fclose(f);
    const char *ring = getenv("CQC_RING_PY") ? getenv("CQC_RING_PY") : "deploy/nginx/ring.py";
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import sys, importlib.util as u; s = u.spec_from_file_location(\"ring\", sys.argv[1]); "
             "m = u.module_from_spec(s); s.loader.exec_module(m); f = open(sys.argv[2]); sv = f.readline().rstrip(\"\\n\").split(\"\\t\"); "
             "r = m.Ring(sv); [print(sv.index(r.owner(w.rstrip(\"\\n\")))) for w in f]' %s %s",
             ring, in);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    int k = 0;
    while (k < NAMES && fscanf(p, "%d", &owner[k]) == 1)
        k++;
    int rc = pclose(p);
    unlink(in);
    ck_assert_msg(rc == 0 && k == NAMES, "ring.py gave %d owners (exit %d)", k, rc);
}

static const char *const lists[][6] = {
    {"collisiond-0:7878", "collisiond-1:7878", "collisiond-2:7878"},
    {"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003", "127.0.0.1:7004", "127.0.0.1:7005"},
    {"shard-a", "unix:/run/collisiond.sock", "[::1]:7878", "host:"},
    {"only:1"},
};
static const int sizes[] = {3, 5, 4, 1};

START_TEST(matches_ring_py)
{
    make_names();
    static int want[NAMES];
    python_owners(lists[_i], sizes[_i], want);
    cqc_ring *r;
    ck_assert_int_eq(cqc_ring_new(lists[_i], (size_t)sizes[_i], &r), CQC_OK);
    int used[6] = {0};
    for (int i = 0; i < NAMES; i++) {
        size_t got = cqc_ring_owner(r, names[i]);
        ck_assert_msg((int)got == want[i], "%s: C says %s, ring.py %s", names[i], lists[_i][got],
                      lists[_i][want[i]]);
        used[got]++;
    }
    for (int k = 0; k < sizes[_i]; k++)
        ck_assert_int_gt(used[k], 0); /* every shard owns some of 10,000 worlds */
    cqc_ring_free(r);
}
END_TEST

START_TEST(refuses_empty)
{
    cqc_ring *r = (cqc_ring *)1;
    ck_assert_int_eq(cqc_ring_new(lists[0], 0, &r), CQC_EINVAL);
    ck_assert_ptr_null(r);
}
END_TEST

Suite *cqc_ring_suite(void)
{
    Suite *s = suite_create("cqc_ring");
    TCase *tc = tcase_create("ring");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, matches_ring_py, 0, 4);
    tcase_add_test(tc, refuses_empty);
    suite_add_tcase(s, tc);
    return s;
}
