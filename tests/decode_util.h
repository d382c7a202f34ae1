/* Shared by the decoder suites (check_proto_read.c, check_proto_values.c):
 * the limits they decode under, documents written with ' for " for
 * readability, bodies opened in either wire format from the same document,
 * one entry point that runs any decoder, and the two ways of calling it
 * (must succeed, must fail), in decode_util.c. */
#ifndef CQ_DECODE_UTIL_H
#define CQ_DECODE_UTIL_H

#include "cqp/decode.h"

/* Small limits, so each is easy to cross. */
extern const cqp_limits du_small;
/* A hull limit above the core's own, which must still win. */
extern const cqp_limits du_roomy;

#define SPH "{'type':'sphere','radius':1}"
#define BOX "{'type':'box','half_extents':[1,1,1]}"
#define PLANE "{'type':'plane','normal':[0,0,1],'offset':0}"
#define MESH "{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[[0,1,2]]}"
#define CUBE_POINTS "[-1,-1,-1],[1,-1,-1],[-1,1,-1],[1,1,-1],[-1,-1,1],[1,-1,1],[-1,1,1],[1,1,1]"
#define CUBE "[" CUBE_POINTS "]"
#define HULL "{'type':'convex','points':" CUBE "}"
/* A pair whose A shape is s (B a unit sphere), and one whose A pose is p. */
#define PAIR_A(s) "{'a':{'shape':" s "},'b':{'shape':" SPH "}}"
#define POSE_A(p) "{'a':{'shape':" BOX ",'pose':" p "},'b':{'shape':" SPH "}}"
#define ID65 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* The document with ' turned into ". Caller frees. */
char *du_dq(const char *s);

/* cqp_parse of the document with ' turned into ": a new reference, or
 * NULL with p set. */
json_t *du_parse(const char *doc, cqp_problem *p);

/* The format du_open, du_decode_ok and du_decode_bad decode in. The suites
 * run each test once per format (a loop test over 0..DU_FORMATS, setting
 * it from _i), so every hand-worked value is checked for both. */
extern cqp_format du_format;
#define DU_FORMATS 2

/* The MessagePack encoding of a jansson tree (malloc'd, *len bytes), made
 * here with msgpuck's encoders, independently of the daemon's writer:
 * non-negative integers as the smallest uint, negative ones as the smallest
 * int, reals as float64, strings with their length (a NUL included), members
 * in the tree's order. With markers, a string "!nan", "!inf", "!-inf",
 * "!u64max" or "!f32:<decimal>" becomes that number (a float32 for the last),
 * a key ending in "!dup" is written without that suffix and a \u0001 in a
 * key as a NUL byte: a tree cannot hold what MessagePack can spell but JSON
 * cannot. */
char *du_mp_of(const json_t *v, bool markers, size_t *len);
/* du_mp_of without markers, the bytes then passed by cqp_mp_check, as the
 * view wants of the bytes it reads (the server checks every body so). */
char *du_mp_checked(const json_t *v, size_t *len);

/* A body opened for decoding: the view and what backs it. */
typedef struct du_body {
    json_t *tree; /* the document parsed (both formats start from it) */
    char *mp;     /* MessagePack: the bytes the view reads */
    size_t mp_len;
    cqp_value root;
} du_body;

/* Opens doc (NULL: an absent body) in format f. Returns 0, or -1 with a
 * BAD_JSON problem in *p when the document does not parse. */
int du_open_in(du_body *b, cqp_format f, const char *doc, cqp_problem *p);
/* du_open_in with du_format. */
int du_open(du_body *b, const char *doc, cqp_problem *p);
/* Takes tree (a new reference) as the body, viewed in du_format. */
void du_wrap(du_body *b, json_t *tree);
/* A MessagePack body from doc with markers (du_mp_of), parsed allowing
 * \u0000 in strings; must parse. Unchecked: the bytes may hold a duplicate
 * key, which cqp_mp_check would refuse before any decoder saw it. */
void du_open_marked(du_body *b, const char *doc);
void du_close(du_body *b);

/* Which decoder to run. */
typedef enum du_which {
    D_PAIR, D_PAIRS, D_PUT, D_BATCH, D_WORLD, D_CONTACTS, D_RAYCAST, D_SWEEP, D_OVERLAP
} du_which;

/* Every decoder's output, so one function can run any of them. */
typedef struct du_decoded {
    cqp_pair_req pair;
    cqp_pairs_req pairs;
    cqp_batch batch;
    cqp_world_req world;
    cqp_contacts_req contacts;
    cqp_raycast_req raycast;
    cqp_shape_req shape;
} du_decoded;

/* Runs decoder w on body into its field of o (D_PUT with the path id
 * "s1"); returns what the decoder returns. */
int du_run(du_which w, cqp_decoder *d, cqp_value body, du_decoded *o);

/* Releases every field of o (each must be zeroed or decoded). */
void du_release(du_decoded *o);
/* Decodes a du_open_marked MessagePack document (the limits du_small),
 * which must be accepted, into *o (du_release frees it). */
void du_decode_marked(du_which w, const char *doc, du_decoded *o);

/* Decodes doc in du_format (must succeed; NULL is an absent body) with the
 * given limits. */
void du_decode_ok(du_which w, const char *doc, const cqp_limits *limits, du_decoded *o);

/* The problem of a document that must fail, decoded in du_format. */
cqp_problem du_decode_bad(du_which w, const char *doc, const cqp_limits *limits);

/* proto's allocations (cqp/alloc.h) counted: du_count_allocs installs the
 * counting pair (fail: every allocation fails), du_live_allocs is the
 * blocks made and not yet freed, du_uncount_allocs restores malloc. */
void du_count_allocs(bool fail);
long du_live_allocs(void);
void du_uncount_allocs(void);

#endif
