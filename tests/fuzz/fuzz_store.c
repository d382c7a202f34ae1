/* Fuzz target: start-up recovery from a data directory (server/store/store.h;
 * docs/FUZZING.md).
 *
 * Input: byte 0 says what the rest is: 0 a journal, 1 a snapshot, 2 a
 * snapshot then a journal split where bytes 1-2 (little-endian, modulo the
 * length) say. Each file is named as the daemon names it, after the
 * sequence number of its first record when it has a whole header (so a
 * real snapshot and journal line up), else 1. Recovery runs twice on a
 * fresh copy, without and with --repair. Either may fail, but cleanly
 * (NULL or -1, no crash, no leak); a recovery that succeeds leaves worlds
 * whose exports are JSON (so no NaN) with finite numbers, and when
 * recovery without repair succeeds, repair has nothing to repair: it
 * recovers the same worlds. */
#define _DEFAULT_SOURCE // mkdtemp
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_TARGET "fuzz_store"
#include "api/request.h"
#include "cqp/journal.h"
#include "cqp/write.h"
#include "fuzz_check.h"
#include "state/registry.h"
#include "state/server.h"
#include "store/store.h"
#include "store/store_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The data directory every run reuses (emptied after each recovery), made
 * on first use and removed at exit. */
static char dir[64];

static void empty_dir(void)
{
    DIR *d = opendir(dir);
    check(d != NULL, "cannot read the data directory");
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

static void remove_dir(void)
{
    empty_dir();
    rmdir(dir);
}

static const char *data_dir(void)
{
    if (dir[0])
        return dir;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cqfuzz-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    check(mkdtemp(dir) != NULL, "cannot make a data directory");
    atexit(remove_dir);
    return dir;
}

/* The sequence number in the first record header of bytes, or 1. */
static uint64_t first_seq(const uint8_t *bytes, size_t len)
{
    if (len < CQP_RECORD_HEADER)
        return 1;
    uint64_t seq = 0;
    for (int i = 7; i >= 0; i--)
        seq = seq << 8 | bytes[8 + i];
    return seq;
}

static void write_file(const char *name, const uint8_t *bytes, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    check(fd >= 0, "cannot write a data file");
    while (len > 0) {
        ssize_t n = write(fd, bytes, len);
        check(n > 0, "cannot write a data file");
        bytes += n;
        len -= (size_t)n;
    }
    close(fd);
}

/* Appends "name export\n" of every world of srv to out, checking each. */
static void export_all(cqd_server *srv, cqp_buf *out)
{
    int count = 0;
    cqd_world_info *worlds;
    check(cqd_registry_list(srv->worlds, &worlds, &count) == 0, "out of memory listing the worlds");
    for (int i = 0; i < count; i++) {
        char path[CQ_WORLD_ID_MAX + 32];
        snprintf(path, sizeof path, "/v1/worlds/%s/export", worlds[i].name);
        cqd_request req = {.transport = "fuzz", .method = "GET", .path = path};
        cqd_response resp;
        cqd_response_init(&resp);
        cqd_handle(srv, &req, &resp);
        check(resp.status == 200, "a recovered world does not export");
        json_error_t err;
        json_t *v = json_loadb(resp.body.data, resp.body.len, 0, &err);
        check(json_is_object(v), "an export that is not a JSON object");
        check_finite(v, "non-finite number in an export");
        json_decref(v);
        cqp_buf_printf(out, "%s ", worlds[i].name);
        cqp_buf_append(out, resp.body.data, resp.body.len);
        cqp_buf_puts(out, "\n");
        cqd_response_free(&resp);
    }
    free(worlds);
}

/* Writes the files the input describes into the empty directory. */
static void lay_out(const uint8_t *data, size_t size)
{
    const uint8_t *rest = data + 1;
    size_t len = size - 1;
    char name[CQD_STORE_NAME_MAX];
    switch (data[0] % 3) {
    case 0:
        cqd_store_journal_name(first_seq(rest, len), name);
        write_file(name, rest, len);
        break;
    case 1:
        cqd_store_snapshot_name(first_seq(rest, len), name);
        write_file(name, rest, len);
        break;
    default: {
        if (len < 2)
            return;
        size_t split = (size_t)(rest[0] | rest[1] << 8) % (len - 1);
        const uint8_t *snap = rest + 2, *journal = snap + split;
        size_t journal_len = len - 2 - split;
        cqd_store_snapshot_name(first_seq(snap, split), name);
        write_file(name, snap, split);
        cqd_store_journal_name(first_seq(journal, journal_len), name);
        write_file(name, journal, journal_len);
    }
    }
}

/* Recovers the directory as start-up would; on success appends the
 * worlds' exports to out and returns 0, else -1. */
static int recover(const uint8_t *data, size_t size, bool repair, cqp_buf *out)
{
    lay_out(data, size);
    char *argv[] = {"collisiond", NULL};
    char *envp[] = {NULL};
    cqd_config cfg;
    check(cqd_config_load(1, argv, envp, &cfg) == CQD_CONFIG_RUN, "no default config");
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", dir);
    cfg.repair = repair;
    cfg.fsync = CQD_FSYNC_NO;
    cfg.snapshot_every = 0;
    cqd_server srv;
    check(cqd_server_init(&srv, &cfg) == 0, "cqd_server_init failed");
    int null_fd = open("/dev/null", O_WRONLY);
    check(null_fd >= 0, "cannot open /dev/null");
    srv.log.fd = null_fd;
    int rc = -1;
    srv.store = cqd_store_open(&srv);
    if (srv.store && cqd_store_recover(srv.store) == 0) {
        atomic_store(&srv.state, CQD_READY);
        export_all(&srv, out);
        rc = 0;
    }
    cqd_store_close(srv.store, false);
    srv.store = NULL;
    cqd_server_destroy(&srv);
    close(null_fd);
    empty_dir();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    data_dir();
    cqp_buf strict = {0}, repaired = {0};
    int strict_rc = recover(data, size, false, &strict);
    int repaired_rc = recover(data, size, true, &repaired);
    check(!strict.oom && !repaired.oom, "out of memory");
    if (strict_rc == 0) {
        check(repaired_rc == 0, "--repair refused what recovery without it accepted");
        check(strict.len == repaired.len && (strict.len == 0 || memcmp(strict.data, repaired.data, strict.len) == 0),
              "--repair recovered other worlds than recovery without it");
    }
    cqp_buf_free(&strict);
    cqp_buf_free(&repaired);
    return 0;
}
