/* The shared helpers of the decoder suites (decode_util.h). */
#include "decode_util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

const cqp_limits du_small = {
    .pairs = 3, .rays = 2, .hull_points = 8, .mesh_triangles = 4, .batch_items = 4, .world_capacity = 100};
const cqp_limits du_roomy = {.hull_points = 1000};

char *du_dq(const char *s)
{
    char *out = strdup(s);
    for (char *p = out; *p; p++)
        if (*p == '\'')
            *p = '"';
    return out;
}

json_t *du_parse(const char *doc, cqp_problem *p)
{
    char *text = du_dq(doc);
    json_t *v = cqp_parse(text, strlen(text), p);
    free(text);
    return v;
}

int du_run(du_which w, cqp_decoder *d, cqp_value body, du_decoded *o)
{
    switch (w) {
    case D_PAIR:
        return cqp_decode_pair(d, body, &o->pair);
    case D_PAIRS:
        return cqp_decode_pairs(d, body, &o->pairs);
    case D_PUT:
        return cqp_decode_shape_put(d, body, "s1", &o->batch);
    case D_BATCH:
        return cqp_decode_batch(d, body, &o->batch);
    case D_WORLD:
        return cqp_decode_world(d, body, &o->world);
    case D_CONTACTS:
        return cqp_decode_contacts(d, body, &o->contacts);
    case D_RAYCAST:
        return cqp_decode_raycast(d, body, &o->raycast);
    case D_SWEEP:
        return cqp_decode_sweep(d, body, &o->shape);
    case D_OVERLAP:
        return cqp_decode_overlap(d, body, &o->shape);
    }
    return 0;
}

void du_release(du_decoded *o)
{
    cqp_pair_req_release(&o->pair);
    cqp_pairs_req_release(&o->pairs);
    cqp_batch_release(&o->batch);
    cqp_world_req_release(&o->world);
    cqp_contacts_req_release(&o->contacts);
    cqp_raycast_req_release(&o->raycast);
    cqp_shape_req_release(&o->shape);
}

void du_decode_ok(du_which w, const char *doc, const cqp_limits *limits, du_decoded *o)
{
    cqp_problem p = {0};
    json_t *body = doc ? du_parse(doc, &p) : NULL;
    ck_assert_msg(!doc || body, "parse: %s", p.detail);
    cqp_decoder d;
    cqp_decoder_init(&d, limits, &p);
    memset(o, 0, sizeof *o);
    int rc = du_run(w, &d, cqp_value_json(body), o);
    ck_assert_msg(rc == 0, "rejected: %s at %s", p.detail, p.pointer);
    ck_assert_str_eq(d.path, "");
    json_decref(body);
}

cqp_problem du_decode_bad(du_which w, const char *doc, const cqp_limits *limits)
{
    cqp_problem p = {0};
    json_t *body = du_parse(doc, &p);
    ck_assert_ptr_nonnull(body);
    cqp_decoder d;
    cqp_decoder_init(&d, limits, &p);
    du_decoded o;
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(du_run(w, &d, cqp_value_json(body), &o), -1);
    json_decref(body);
    return p;
}
