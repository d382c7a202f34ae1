/* The shared helpers of the config-loading suites (config_util.h). */
#include "config_util.h"

#include <check.h>
#include <stdio.h>
#include <unistd.h>

void cu_capture(int fd, cu_capture_fn fn, void *arg, cu_captured *out)
{
    fflush(stdout);
    fflush(stderr);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    int saved = dup(fd);
    dup2(fileno(tmp), fd);
    out->result = fn(arg);
    fflush(stdout);
    fflush(stderr);
    dup2(saved, fd);
    close(saved);
    rewind(tmp);
    size_t n = fread(out->text, 1, sizeof out->text - 1, tmp);
    out->text[n] = '\0';
    fclose(tmp);
}

int cu_run_load(void *arg)
{
    cu_load_args *a = arg;
    int argc = 0;
    while (a->argv[argc])
        argc++;
    return (int)cqd_config_load(argc, a->argv, a->envp, a->cfg);
}

cqd_config_result cu_load_err(char **argv, char **envp, cqd_config *cfg, cu_captured *err)
{
    cu_load_args a = {argv, envp, cfg};
    cu_capture(2, cu_run_load, &a, err);
    return (cqd_config_result)err->result;
}

cqd_config_result cu_load(char **argv, char **envp, cqd_config *cfg)
{
    cu_captured err;
    return cu_load_err(argv, envp, cfg, &err);
}

cqd_config cu_default_config(void)
{
    char *argv[] = {"collisiond", NULL};
    char *envp[] = {NULL};
    cqd_config cfg;
    ck_assert_int_eq(cu_load(argv, envp, &cfg), CQD_CONFIG_RUN);
    return cfg;
}
