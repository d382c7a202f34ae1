/* Shared by the server suites that load a config (check_config.c,
 * check_server_unit.c): capture of what a call prints on stdout or stderr,
 * and cqd_config_load driven from NULL-terminated argv/envp arrays, in
 * config_util.c. */
#ifndef CQ_CONFIG_UTIL_H
#define CQ_CONFIG_UTIL_H

#include "ops/config.h"

/* Text written to fd (1 or 2) while a call ran, and what it returned. */
typedef struct cu_captured {
    char text[16384];
    int result;
} cu_captured;

typedef int (*cu_capture_fn)(void *arg);

/* Runs fn(arg) with fd redirected to a temporary file; out gets the text
 * (cut to fit) and fn's result. */
void cu_capture(int fd, cu_capture_fn fn, void *arg, cu_captured *out);

/* cqd_config_load's arguments, NULL-terminated arrays. */
typedef struct cu_load_args {
    char **argv;
    char **envp;
    cqd_config *cfg;
} cu_load_args;

/* A cu_capture_fn: cqd_config_load of a cu_load_args. */
int cu_run_load(void *arg);

/* Loads argv/envp (NULL-terminated) and keeps what was printed on stderr. */
cqd_config_result cu_load_err(char **argv, char **envp, cqd_config *cfg, cu_captured *err);

/* Loads argv/envp, dropping what was printed. */
cqd_config_result cu_load(char **argv, char **envp, cqd_config *cfg);

/* The config of a bare command line and an empty environment. */
cqd_config cu_default_config(void);

#endif
