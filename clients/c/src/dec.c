/* Reply bodies of the world and shape calls, and problems. Members the
 * client does not know are skipped, so a newer daemon's additions do not
 * break it; a known member of the wrong type is CQC_EPROTO. */
#include "cqc_int.h"

static bool problem_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_problem *p = out;
    if (CQC_KEY(k, kn, "type"))
        return cqc__rd_strcut(r, p->type, sizeof p->type);
    if (CQC_KEY(k, kn, "title"))
        return cqc__rd_strcut(r, p->title, sizeof p->title);
    if (CQC_KEY(k, kn, "detail"))
        return cqc__rd_strcut(r, p->detail, sizeof p->detail);
    if (CQC_KEY(k, kn, "pointer"))
        return cqc__rd_strcut(r, p->pointer, sizeof p->pointer);
    return cqc__rd_skip(r);
}

cqc_status cqc__problem(cqc_conn *c, cqc_rd *r, int http)
{
    /* The status stands whatever the body holds: a problem is for people. */
    if (r->p && r->p < r->end && (unsigned char)*r->p >= 0x80 && (unsigned char)*r->p <= 0x8f)
        cqc__rd_each(r, problem_member, &c->problem);
    else if (r->p && r->p < r->end)
        cqc__rd_strcut(r, c->problem.detail, sizeof c->problem.detail);
    c->problem.status = http;
    return cqc__status_of_http(http);
}

/* A durability name, as the daemon writes it; an unknown one is a bad reply. */
static bool read_durability(cqc_rd *r, cqc_durability *d)
{
    const char *v;
    uint32_t n;
    if (!cqc__rd_str(r, &v, &n))
        return false;
    for (cqc_durability k = CQC_DURABILITY_FULL; k <= CQC_DURABILITY_NONE; k++) {
        const char *name = cqc__durability_name(k);
        if (n == strlen(name) && memcmp(v, name, n) == 0) {
            *d = k;
            return true;
        }
    }
    return cqc__fail(r);
}

static bool settings_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_world_settings *s = out;
    uint64_t v;
    if (CQC_KEY(k, kn, "skin"))
        return cqc__rd_num(r, &s->skin);
    if (CQC_KEY(k, kn, "capacity"))
        return cqc__rd_uint(r, &s->capacity);
    if (CQC_KEY(k, kn, "durability"))
        return read_durability(r, &s->durability);
    uint32_t *it = CQC_KEY(k, kn, "gjk_max_iterations")     ? &s->gjk_max_iterations
                   : CQC_KEY(k, kn, "epa_max_iterations")   ? &s->epa_max_iterations
                   : CQC_KEY(k, kn, "sweep_max_iterations") ? &s->sweep_max_iterations
                                                            : NULL;
    if (!it)
        return cqc__rd_skip(r);
    if (!cqc__rd_uint(r, &v) || v > UINT32_MAX)
        return cqc__fail(r);
    *it = (uint32_t)v;
    return true;
}

static bool stats_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_world_info *w = out;
    uint64_t *v = CQC_KEY(k, kn, "capacity")     ? &w->capacity
                  : CQC_KEY(k, kn, "grows")      ? &w->grows
                  : CQC_KEY(k, kn, "sap_grows")  ? &w->sap_grows
                  : CQC_KEY(k, kn, "bvh_builds") ? &w->bvh_builds
                  : CQC_KEY(k, kn, "bvh_refits") ? &w->bvh_refits
                                                 : NULL;
    return v ? cqc__rd_uint(r, v) : cqc__rd_skip(r);
}

static bool world_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_world_info *w = out;
    if (CQC_KEY(k, kn, "name"))
        return cqc__rd_strcpy(r, w->name, sizeof w->name);
    if (CQC_KEY(k, kn, "settings"))
        return cqc__rd_each(r, settings_member, &w->settings);
    if (CQC_KEY(k, kn, "shapes"))
        return cqc__rd_uint(r, &w->shapes);
    if (CQC_KEY(k, kn, "broadphase_pairs"))
        return cqc__rd_uint(r, &w->broadphase_pairs);
    if (CQC_KEY(k, kn, "stats"))
        return (w->has_stats = true) && cqc__rd_each(r, stats_member, w);
    return cqc__rd_skip(r);
}

static bool batch_member(cqc_rd *r, const char *k, uint32_t kn, void *out)
{
    cqc_batch_result *b = out;
    uint64_t *v = CQC_KEY(k, kn, "upserted") ? &b->upserted
                  : CQC_KEY(k, kn, "moved")  ? &b->moved
                  : CQC_KEY(k, kn, "removed") ? &b->removed
                  : CQC_KEY(k, kn, "shapes") ? &b->shapes
                                             : NULL;
    return v ? cqc__rd_uint(r, v) : cqc__rd_skip(r);
}

/* The document is handed on as bytes, so it is checked whole first. */
static cqc_status dec_blob(cqc_rd *r, cqc_blob *b)
{
    cqc_rd whole = *r;
    if (!cqc__rd_skip(&whole) || whole.p != whole.end)
        return CQC_EPROTO;
    size_t n = (size_t)(r->end - r->p);
    b->data = cqc__realloc(NULL, n);
    if (!b->data)
        return CQC_ENOMEM;
    memcpy(b->data, r->p, n);
    b->len = n;
    return CQC_OK;
}

bool cqc__dec_stored(cqc_rd *r, cqc_stored *s);

cqc_status cqc__decode(cqc_rd *r, const cqc_call *call, int http)
{
    void *out = call->out;
    if (call->kind == CQC_K_NONE || (call->kind == CQC_K_PUT && !out))
        return CQC_OK;
    if (call->kind == CQC_K_PUT) {
        *(bool *)out = http == 201;
        return CQC_OK;
    }
    if (!r->p)
        return CQC_EPROTO;
    bool ok;
    switch (call->kind) {
    case CQC_K_WORLD:
        if (!out)
            return CQC_OK;
        *(cqc_world_info *)out = (cqc_world_info){.created = http == 201};
        ok = cqc__rd_each(r, world_member, out);
        break;
    case CQC_K_BATCH:
        if (!out)
            return CQC_OK;
        *(cqc_batch_result *)out = (cqc_batch_result){0};
        ok = cqc__rd_each(r, batch_member, out);
        break;
    case CQC_K_BLOB:
        return dec_blob(r, out);
    case CQC_K_STORED:
        ok = cqc__dec_stored(r, out);
        if (ok && r->p != r->end) /* bytes after the body: refused, nothing kept */
            cqc_stored_release(out);
        break;
    default:
        return cqc__dec_query(r, call);
    }
    return ok && r->p == r->end ? CQC_OK : r->oom ? CQC_ENOMEM : CQC_EPROTO;
}
