/* The input half of proto (cqp/decode.h): documents that must be refused,
 * each decoded from JSON and from MessagePack (written from the same tree by
 * the test's own msgpuck translator, decode_util.c). Oracles: a hand-written
 * table of bad documents, each with the problem kind and the exact JSON
 * pointer a reader expects (API.md sections 1-3), which both formats must
 * give, with the same detail; a table of what only MessagePack can spell
 * (NaN, Inf, float32, uint64, NUL bytes, repeated keys) with the pointer
 * the field's own rule names; hand-written detail texts (API.md's own
 * example word for word); the hull limit the core imposes (256 points).
 * Every failure is checked to leave nothing allocated: the core's byte
 * counter must not move (hulls and meshes), proto's counted blocks must all
 * be freed, and the asan build checks the rest. Seeded random edits of good
 * documents must be accepted or refused with a 400 / 422 alike in both
 * formats, never crash or leak. Good documents decoded to values:
 * check_proto_values.c. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq/alloc.h"
#include "decode_util.h"

Suite *proto_read_suite(void);

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

typedef struct bad_doc {
    du_which w;
    const char *doc; /* NULL: an absent body */
    cqp_problem_kind kind;
    const char *pointer;
    const cqp_limits *limits; /* NULL: du_small */
} bad_doc;

static const bad_doc bad[] = {
    /* Malformed JSON, duplicate keys, overflowing numbers, NUL. */
    {D_PAIR, "{'a': 1e999}", CQP_P_BAD_JSON, "", NULL},
    {D_PAIR, "{'a': -1e400}", CQP_P_BAD_JSON, "", NULL},
    {D_WORLD, "{'capacity': 99999999999999999999}", CQP_P_BAD_JSON, "", NULL},
    {D_PAIR, "{'a':1,'a':2}", CQP_P_BAD_JSON, "", NULL},
    {D_PAIR, "{'a':{'shape':" SPH ",'shape':" SPH "}}", CQP_P_BAD_JSON, "", NULL},
    {D_PAIR, "{'a': ", CQP_P_BAD_JSON, "", NULL},
    {D_PAIR, "{'a': 1} x", CQP_P_BAD_JSON, "", NULL},
    {D_PAIR, "", CQP_P_BAD_JSON, "", NULL},
    {D_BATCH, "{'remove':['a\\u0000b']}", CQP_P_BAD_JSON, "", NULL},
    /* Finite numbers beyond +-1e50, whose squares and products would
     * overflow in the queries (issue 8): refused at the number. */
    {D_PAIR, PAIR_A("{'type':'sphere','radius':1.0000000001e50}"), CQP_P_BAD_VALUE, "/a/shape/radius", NULL},
    {D_PAIR, POSE_A("{'position':[0,-1e300,0]}"), CQP_P_BAD_VALUE, "/a/pose/position/1", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,1,1.7976931348623157e308]}"), CQP_P_BAD_VALUE,
     "/a/shape/half_extents/2", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':2e50}", CQP_P_BAD_VALUE, "/skin", NULL},
    {D_SWEEP, "{'shape':" SPH ",'translation':[-1e51,0,0]}", CQP_P_BAD_VALUE, "/translation/0", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,1e51,0],'direction':[1,0,0]}]}", CQP_P_BAD_VALUE, "/rays/0/origin/1", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0],'max_distance':-1e308}]}", CQP_P_BAD_VALUE,
     "/rays/0/max_distance", NULL},
    {D_CONTACTS, "{'dt':1e60}", CQP_P_BAD_VALUE, "/dt", NULL},
    /* Pair request. */
    {D_PAIR, "[]", CQP_P_BAD_TYPE, "", NULL},
    {D_PAIR, "7", CQP_P_BAD_TYPE, "", NULL},
    {D_PAIR, "{}", CQP_P_MISSING_FIELD, "/a", NULL},
    {D_PAIR, NULL, CQP_P_MISSING_FIELD, "/a", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "}}", CQP_P_MISSING_FIELD, "/b", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'c':1}", CQP_P_UNKNOWN_FIELD, "/c", NULL},
    {D_PAIR, "{'a':1,'b':{'shape':" SPH "}}", CQP_P_BAD_TYPE, "/a", NULL},
    {D_PAIR, "{'a':{'pose':null},'b':{'shape':" SPH "}}", CQP_P_MISSING_FIELD, "/a/shape", NULL},
    {D_PAIR, "{'a':{'shape':" SPH ",'extra':1},'b':{'shape':" SPH "}}", CQP_P_UNKNOWN_FIELD, "/a/extra", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':-1}", CQP_P_BAD_VALUE, "/skin", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':'0'}", CQP_P_BAD_TYPE, "/skin", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':true}", CQP_P_BAD_TYPE, "/skin", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'explain':1}", CQP_P_BAD_TYPE, "/explain", NULL},
    {D_PAIR, "{'a~b/c':1}", CQP_P_UNKNOWN_FIELD, "/a~0b~1c", NULL},
    /* Shape type. */
    {D_PAIR, PAIR_A("5"), CQP_P_BAD_TYPE, "/a/shape", NULL},
    {D_PAIR, PAIR_A("{'radius':1}"), CQP_P_MISSING_FIELD, "/a/shape/type", NULL},
    {D_PAIR, PAIR_A("{'type':1,'radius':1}"), CQP_P_BAD_TYPE, "/a/shape/type", NULL},
    {D_PAIR, PAIR_A("{'type':'cube','radius':1}"), CQP_P_BAD_VALUE, "/a/shape/type", NULL},
    /* Sphere. */
    {D_PAIR, PAIR_A("{'type':'sphere'}"), CQP_P_MISSING_FIELD, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'sphere','radius':'1'}"), CQP_P_BAD_TYPE, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'sphere','radius':false}"), CQP_P_BAD_TYPE, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'sphere','radius':-1}"), CQP_P_BAD_VALUE, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'sphere','radius':1,'half_height':1}"), CQP_P_UNKNOWN_FIELD, "/a/shape/half_height",
     NULL},
    /* Capsule. */
    {D_PAIR, PAIR_A("{'type':'capsule','radius':1}"), CQP_P_MISSING_FIELD, "/a/shape/half_height", NULL},
    {D_PAIR, PAIR_A("{'type':'capsule','half_height':1}"), CQP_P_MISSING_FIELD, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'capsule','radius':-0.5,'half_height':1}"), CQP_P_BAD_VALUE, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'capsule','radius':1,'half_height':-1}"), CQP_P_BAD_VALUE, "/a/shape/half_height",
     NULL},
    {D_PAIR, PAIR_A("{'type':'capsule','radius':1,'half_height':[1]}"), CQP_P_BAD_TYPE, "/a/shape/half_height", NULL},
    {D_PAIR, PAIR_A("{'type':'capsule','radius':1,'half_height':1,'height':2}"), CQP_P_UNKNOWN_FIELD,
     "/a/shape/height", NULL},
    /* Box. */
    {D_PAIR, PAIR_A("{'type':'box'}"), CQP_P_MISSING_FIELD, "/a/shape/half_extents", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,-1,1]}"), CQP_P_BAD_VALUE, "/a/shape/half_extents/1", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,1,-0.1]}"), CQP_P_BAD_VALUE, "/a/shape/half_extents/2", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,1]}"), CQP_P_BAD_VALUE, "/a/shape/half_extents", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,1,1,1]}"), CQP_P_BAD_VALUE, "/a/shape/half_extents", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,'x',1]}"), CQP_P_BAD_TYPE, "/a/shape/half_extents/1", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':1}"), CQP_P_BAD_TYPE, "/a/shape/half_extents", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,1,1],'radius':1}"), CQP_P_UNKNOWN_FIELD, "/a/shape/radius",
     NULL},
    /* Convex. */
    {D_PAIR, PAIR_A("{'type':'convex'}"), CQP_P_MISSING_FIELD, "/a/shape/points", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':[]}"), CQP_P_BAD_VALUE, "/a/shape/points", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':'x'}"), CQP_P_BAD_TYPE, "/a/shape/points", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':[[0,0,0],[1,'a',0]]}"), CQP_P_BAD_TYPE, "/a/shape/points/1/1", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':[[0,0,0],[1,0]]}"), CQP_P_BAD_VALUE, "/a/shape/points/1", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':[[0,0,0],3]}"), CQP_P_BAD_TYPE, "/a/shape/points/1", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':" CUBE ",'radius':-1}"), CQP_P_BAD_VALUE, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':" CUBE ",'radius':'1'}"), CQP_P_BAD_TYPE, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':" CUBE ",'normal':[0,0,1]}"), CQP_P_UNKNOWN_FIELD, "/a/shape/normal",
     NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':[[0,0,0]," CUBE "]}"), CQP_P_BAD_VALUE, "/a/shape/points/1", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':[[0,0,0],[-1,-1,-1],[1,-1,-1],[-1,1,-1],[1,1,-1],[-1,-1,1],"
                    "[1,-1,1],[-1,1,1],[1,1,1]]}"),
     CQP_P_OVER_LIMIT, "/a/shape/points", NULL},
    /* Triangle. */
    {D_PAIR, PAIR_A("{'type':'triangle'}"), CQP_P_MISSING_FIELD, "/a/shape/vertices", NULL},
    {D_PAIR, PAIR_A("{'type':'triangle','vertices':[[0,0,0],[1,0,0]]}"), CQP_P_BAD_VALUE, "/a/shape/vertices", NULL},
    {D_PAIR, PAIR_A("{'type':'triangle','vertices':[[0,0,0],[1,0,0],[0,1,0],[0,0,1]]}"), CQP_P_BAD_VALUE,
     "/a/shape/vertices", NULL},
    {D_PAIR, PAIR_A("{'type':'triangle','vertices':{}}"), CQP_P_BAD_TYPE, "/a/shape/vertices", NULL},
    {D_PAIR, PAIR_A("{'type':'triangle','vertices':[[0,0,0],[1,0,0],[0,1]]}"), CQP_P_BAD_VALUE, "/a/shape/vertices/2",
     NULL},
    {D_PAIR, PAIR_A("{'type':'triangle','vertices':[[0,0,0],[1,0,'z'],[0,1,0]]}"), CQP_P_BAD_TYPE,
     "/a/shape/vertices/1/2", NULL},
    {D_PAIR, PAIR_A("{'type':'triangle','vertices':[[0,0,0],[1,0,0],[0,1,0]],'radius':1}"), CQP_P_UNKNOWN_FIELD,
     "/a/shape/radius", NULL},
    /* Plane. */
    {D_PAIR, PAIR_A("{'type':'plane','offset':0}"), CQP_P_MISSING_FIELD, "/a/shape/normal", NULL},
    {D_PAIR, PAIR_A("{'type':'plane','normal':[0,0,1]}"), CQP_P_MISSING_FIELD, "/a/shape/offset", NULL},
    {D_PAIR, PAIR_A("{'type':'plane','normal':[0,0,2],'offset':0}"), CQP_P_BAD_VALUE, "/a/shape/normal", NULL},
    {D_PAIR, PAIR_A("{'type':'plane','normal':[0,0,1.001],'offset':0}"), CQP_P_BAD_VALUE, "/a/shape/normal", NULL},
    {D_PAIR, PAIR_A("{'type':'plane','normal':[0,0,0],'offset':0}"), CQP_P_BAD_VALUE, "/a/shape/normal", NULL},
    {D_PAIR, PAIR_A("{'type':'plane','normal':[0,0,1],'offset':'1'}"), CQP_P_BAD_TYPE, "/a/shape/offset", NULL},
    {D_PAIR, PAIR_A("{'type':'plane','normal':[0,'0',1],'offset':1}"), CQP_P_BAD_TYPE, "/a/shape/normal/1", NULL},
    {D_PAIR, PAIR_A("{'type':'plane','normal':[0,0,1],'offset':1,'d':1}"), CQP_P_UNKNOWN_FIELD, "/a/shape/d", NULL},
    /* Mesh. */
    {D_PAIR, PAIR_A("{'type':'mesh','triangles':[[0,1,2]]}"), CQP_P_MISSING_FIELD, "/a/shape/vertices", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]]}"), CQP_P_MISSING_FIELD,
     "/a/shape/triangles", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[],'triangles':[[0,1,2]]}"), CQP_P_BAD_VALUE, "/a/shape/vertices",
     NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[]}"), CQP_P_BAD_VALUE,
     "/a/shape/triangles", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[[0,1,3]]}"), CQP_P_BAD_VALUE,
     "/a/shape/triangles/0/2", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[[0,1,2],[-1,1,2]]}"),
     CQP_P_BAD_VALUE, "/a/shape/triangles/1/0", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[[0,1.5,2]]}"), CQP_P_BAD_TYPE,
     "/a/shape/triangles/0/1", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[[0,1]]}"), CQP_P_BAD_VALUE,
     "/a/shape/triangles/0", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[7]}"), CQP_P_BAD_TYPE,
     "/a/shape/triangles/0", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0],[0,1,0]],'triangles':[[0,1,2]]}"), CQP_P_BAD_VALUE,
     "/a/shape/vertices/1", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0],[1,1,0],[2,2,0]],'triangles':[[0,1,2]]}"),
     CQP_P_OVER_LIMIT, "/a/shape/vertices", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],"
                    "'triangles':[[0,1,2],[0,1,2],[0,1,2],[0,1,2],[0,1,2]]}"),
     CQP_P_OVER_LIMIT, "/a/shape/triangles", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[[0,1,2]],'normals':[]}"),
     CQP_P_UNKNOWN_FIELD, "/a/shape/normals", NULL},
    /* Pose. */
    {D_PAIR, POSE_A("1"), CQP_P_BAD_TYPE, "/a/pose", NULL},
    {D_PAIR, POSE_A("{'scale':2}"), CQP_P_UNKNOWN_FIELD, "/a/pose/scale", NULL},
    {D_PAIR, POSE_A("{'position':[0,0]}"), CQP_P_BAD_VALUE, "/a/pose/position", NULL},
    {D_PAIR, POSE_A("{'position':[0,true,0]}"), CQP_P_BAD_TYPE, "/a/pose/position/1", NULL},
    {D_PAIR, POSE_A("{'rotation':[0,0,0,1.002]}"), CQP_P_BAD_VALUE, "/a/pose/rotation", NULL},
    {D_PAIR, POSE_A("{'rotation':[0,0,0,0.998]}"), CQP_P_BAD_VALUE, "/a/pose/rotation", NULL},
    {D_PAIR, POSE_A("{'rotation':[0,0,0,0]}"), CQP_P_BAD_VALUE, "/a/pose/rotation", NULL},
    {D_PAIR, POSE_A("{'rotation':[0,0,1]}"), CQP_P_BAD_VALUE, "/a/pose/rotation", NULL},
    {D_PAIR, POSE_A("{'rotation':[0,0,'0',1]}"), CQP_P_BAD_TYPE, "/a/pose/rotation/2", NULL},
    {D_PAIR, POSE_A("{'rotation':'identity'}"), CQP_P_BAD_TYPE, "/a/pose/rotation", NULL},
    {D_PAIR, POSE_A("{'rotation':[0,0,0,1],'axes':[[1,0,0],[0,1,0],[0,0,1]]}"), CQP_P_BAD_VALUE, "/a/pose", NULL},
    {D_PAIR, POSE_A("{'axes':[[1,0,0],[0,1,0],[0,0,-1]]}"), CQP_P_BAD_VALUE, "/a/pose/axes", NULL},
    {D_PAIR, POSE_A("{'axes':[[0,1,0],[1,0,0],[0,0,1]]}"), CQP_P_BAD_VALUE, "/a/pose/axes", NULL},
    {D_PAIR, POSE_A("{'axes':[[1,0,0],[0.6,0.8,0],[0,0,1]]}"), CQP_P_BAD_VALUE, "/a/pose/axes/1", NULL},
    {D_PAIR, POSE_A("{'axes':[[1,0,0],[0,1,0],[0,0.6,0.8]]}"), CQP_P_BAD_VALUE, "/a/pose/axes/2", NULL},
    {D_PAIR, POSE_A("{'axes':[[1,0,0],[0,2,0],[0,0,1]]}"), CQP_P_BAD_VALUE, "/a/pose/axes/1", NULL},
    {D_PAIR, POSE_A("{'axes':[[1,0,0],[0,1,0]]}"), CQP_P_BAD_VALUE, "/a/pose/axes", NULL},
    {D_PAIR, POSE_A("{'axes':[[1,0,0],[0,1,0],[0,0]]}"), CQP_P_BAD_VALUE, "/a/pose/axes/2", NULL},
    {D_PAIR, POSE_A("{'axes':[[1,0,0],[0,1,0],[0,0,'1']]}"), CQP_P_BAD_TYPE, "/a/pose/axes/2/2", NULL},
    {D_PAIR, POSE_A("{'axes':{}}"), CQP_P_BAD_TYPE, "/a/pose/axes", NULL},
    /* Pairs. */
    {D_PAIRS, "{}", CQP_P_MISSING_FIELD, "/pairs", NULL},
    {D_PAIRS, "{'pairs':{}}", CQP_P_BAD_TYPE, "/pairs", NULL},
    {D_PAIRS, "{'pairs':[],'x':1}", CQP_P_UNKNOWN_FIELD, "/x", NULL},
    {D_PAIRS, "{'pairs':[1]}", CQP_P_BAD_TYPE, "/pairs/0", NULL},
    {D_PAIRS, "{'pairs':[" PAIR_A(SPH) "," PAIR_A(SPH) "," PAIR_A(SPH) "," PAIR_A(SPH) "]}", CQP_P_OVER_LIMIT,
     "/pairs", NULL},
    {D_PAIRS, "{'pairs':[" PAIR_A(HULL) "," PAIR_A("{'type':'box','half_extents':[1,-1,1]}") "]}", CQP_P_BAD_VALUE,
     "/pairs/1/a/shape/half_extents/1", NULL},
    {D_PAIRS, "{'pairs':[" PAIR_A(HULL) ",{'a':{'shape':" HULL "}}]}", CQP_P_MISSING_FIELD, "/pairs/1/b", NULL},
    /* Shape PUT. */
    {D_PUT, "{}", CQP_P_MISSING_FIELD, "/shape", NULL},
    {D_PUT, NULL, CQP_P_MISSING_FIELD, "/shape", NULL},
    {D_PUT, "[]", CQP_P_BAD_TYPE, "", NULL},
    {D_PUT, "{'shape':" SPH ",'id':'x'}", CQP_P_UNKNOWN_FIELD, "/id", NULL},
    {D_PUT, "{'shape':" HULL ",'layer':-1}", CQP_P_BAD_VALUE, "/layer", NULL},
    {D_PUT, "{'shape':" HULL ",'layer':4294967296}", CQP_P_BAD_VALUE, "/layer", NULL},
    {D_PUT, "{'shape':" SPH ",'mask':1.5}", CQP_P_BAD_TYPE, "/mask", NULL},
    {D_PUT, "{'shape':" SPH ",'mask':'all'}", CQP_P_BAD_TYPE, "/mask", NULL},
    {D_PUT, "{'shape':" HULL ",'velocity':[1,2]}", CQP_P_BAD_VALUE, "/velocity", NULL},
    {D_PUT, "{'shape':" SPH ",'velocity':[1,2,null]}", CQP_P_BAD_TYPE, "/velocity/2", NULL},
    {D_PUT, "{'shape':" PLANE ",'velocity':[0,0,1]}", CQP_P_BAD_VALUE, "/velocity", NULL},
    {D_PUT, "{'shape':" MESH ",'velocity':[1,0,0]}", CQP_P_BAD_VALUE, "/velocity", NULL},
    {D_PUT, "{'shape':" HULL ",'pose':{'rotation':[0,0,0,0.5]}}", CQP_P_BAD_VALUE, "/pose/rotation", NULL},
    {D_PUT, "{'shape':" MESH ",'pose':{'position':[0,0,'x']}}", CQP_P_BAD_TYPE, "/pose/position/2", NULL},
    /* Batch. */
    {D_BATCH, "[]", CQP_P_BAD_TYPE, "", NULL},
    {D_BATCH, "{'delete':[]}", CQP_P_UNKNOWN_FIELD, "/delete", NULL},
    {D_BATCH, "{'upsert':{}}", CQP_P_BAD_TYPE, "/upsert", NULL},
    {D_BATCH, "{'move':'a'}", CQP_P_BAD_TYPE, "/move", NULL},
    {D_BATCH, "{'remove':1}", CQP_P_BAD_TYPE, "/remove", NULL},
    {D_BATCH, "{'upsert':[{'shape':" SPH "}]}", CQP_P_MISSING_FIELD, "/upsert/0/id", NULL},
    {D_BATCH, "{'upsert':[{'id':'a'}]}", CQP_P_MISSING_FIELD, "/upsert/0/shape", NULL},
    {D_BATCH, "{'upsert':[{'id':'a b','shape':" SPH "}]}", CQP_P_BAD_VALUE, "/upsert/0/id", NULL},
    {D_BATCH, "{'upsert':[{'id':'','shape':" SPH "}]}", CQP_P_BAD_VALUE, "/upsert/0/id", NULL},
    {D_BATCH, "{'upsert':[{'id':'" ID65 "','shape':" SPH "}]}", CQP_P_BAD_VALUE, "/upsert/0/id", NULL},
    {D_BATCH, "{'upsert':[{'id':'caf\\u00e9','shape':" SPH "}]}", CQP_P_BAD_VALUE, "/upsert/0/id", NULL},
    {D_BATCH, "{'upsert':[{'id':-1,'shape':" SPH "}]}", CQP_P_BAD_VALUE, "/upsert/0/id", NULL},
    {D_BATCH, "{'upsert':[{'id':1.5,'shape':" SPH "}]}", CQP_P_BAD_TYPE, "/upsert/0/id", NULL},
    {D_BATCH, "{'upsert':[{'id':true,'shape':" SPH "}]}", CQP_P_BAD_TYPE, "/upsert/0/id", NULL},
    {D_BATCH, "{'upsert':[{'id':'a','shape':" HULL "},{'id':'b','shape':" HULL ",'layer':'x'}]}", CQP_P_BAD_TYPE,
     "/upsert/1/layer", NULL},
    {D_BATCH, "{'upsert':[{'id':'a','shape':" MESH "}],'remove':['b',{}]}", CQP_P_BAD_TYPE, "/remove/1", NULL},
    {D_BATCH, "{'upsert':[{'id':'a','shape':" HULL ",'pose':{'axes':[[1,0,0],[0,1,0],[0,0,-1]]}}]}", CQP_P_BAD_VALUE,
     "/upsert/0/pose/axes", NULL},
    {D_BATCH, "{'move':[{'id':'a'}]}", CQP_P_MISSING_FIELD, "/move/0/pose", NULL},
    {D_BATCH, "{'move':[{'pose':{}}]}", CQP_P_MISSING_FIELD, "/move/0/id", NULL},
    {D_BATCH, "{'move':[{'id':'a','pose':{},'shape':" SPH "}]}", CQP_P_UNKNOWN_FIELD, "/move/0/shape", NULL},
    {D_BATCH, "{'move':[{'id':'a','pose':{},'velocity':[0,0,'x']}]}", CQP_P_BAD_TYPE, "/move/0/velocity/2", NULL},
    {D_BATCH, "{'move':[{'id':'a','pose':{'rotation':[0,0,0,2]}}]}", CQP_P_BAD_VALUE, "/move/0/pose/rotation", NULL},
    {D_BATCH, "{'remove':['a/b']}", CQP_P_BAD_VALUE, "/remove/0", NULL},
    {D_BATCH, "{'upsert':[{'id':'a','shape':" SPH "},{'id':'b','shape':" SPH "}],'move':[{'id':'a','pose':{}}],"
              "'remove':['c','d']}",
     CQP_P_OVER_LIMIT, "", NULL},
    /* World settings and import. */
    {D_WORLD, "5", CQP_P_BAD_TYPE, "", NULL},
    {D_WORLD, "{'skin':-1}", CQP_P_BAD_VALUE, "/skin", NULL},
    {D_WORLD, "{'skin':'x'}", CQP_P_BAD_TYPE, "/skin", NULL},
    {D_WORLD, "{'capacity':16777217}", CQP_P_BAD_VALUE, "/capacity", NULL},
    {D_WORLD, "{'capacity':-1}", CQP_P_BAD_VALUE, "/capacity", NULL},
    {D_WORLD, "{'capacity':1.5}", CQP_P_BAD_TYPE, "/capacity", NULL},
    {D_WORLD, "{'gjk_max_iterations':-1}", CQP_P_BAD_VALUE, "/gjk_max_iterations", NULL},
    {D_WORLD, "{'epa_max_iterations':'x'}", CQP_P_BAD_TYPE, "/epa_max_iterations", NULL},
    {D_WORLD, "{'sweep_max_iterations':2147483648}", CQP_P_BAD_VALUE, "/sweep_max_iterations", NULL},
    {D_WORLD, "{'gjk_max_iterations':1001}", CQP_P_BAD_VALUE, "/gjk_max_iterations", NULL},
    {D_WORLD, "{'capacity':101}", CQP_P_OVER_LIMIT, "/capacity", NULL},
    {D_WORLD, "{'settings':{'capacity':101},'shapes':[]}", CQP_P_OVER_LIMIT, "/settings/capacity", NULL},
    {D_WORLD, "{'name':'x'}", CQP_P_UNKNOWN_FIELD, "/name", NULL},
    {D_WORLD, "{'settings':{'skin':-1},'shapes':[]}", CQP_P_BAD_VALUE, "/settings/skin", NULL},
    {D_WORLD, "{'settings':{'foo':1}}", CQP_P_UNKNOWN_FIELD, "/settings/foo", NULL},
    {D_WORLD, "{'settings':[]}", CQP_P_BAD_TYPE, "/settings", NULL},
    {D_WORLD, "{'durability':'forever'}", CQP_P_BAD_VALUE, "/durability", NULL},
    {D_WORLD, "{'durability':'Full'}", CQP_P_BAD_VALUE, "/durability", NULL},
    {D_WORLD, "{'durability':'fulll'}", CQP_P_BAD_VALUE, "/durability", NULL},
    {D_WORLD, "{'durability':''}", CQP_P_BAD_VALUE, "/durability", NULL},
    {D_WORLD, "{'durability':0}", CQP_P_BAD_TYPE, "/durability", NULL},
    {D_WORLD, "{'durability':null}", CQP_P_BAD_TYPE, "/durability", NULL},
    {D_WORLD, "{'durability':['none']}", CQP_P_BAD_TYPE, "/durability", NULL},
    {D_WORLD, "{'settings':{'durability':'ephemeral'},'shapes':[]}", CQP_P_BAD_VALUE, "/settings/durability", NULL},
    {D_WORLD, "{'settings':{'durability':'none'},'durability':'none'}", CQP_P_UNKNOWN_FIELD, "/durability", NULL},
    {D_WORLD, "{'settings':{},'shapes':[],'skin':1}", CQP_P_UNKNOWN_FIELD, "/skin", NULL},
    {D_WORLD, "{'shapes':{}}", CQP_P_BAD_TYPE, "/shapes", NULL},
    {D_WORLD, "{'shapes':[{'id':'a','shape':" HULL "},{'shape':" SPH "}]}", CQP_P_MISSING_FIELD, "/shapes/1/id",
     NULL},
    {D_WORLD, "{'shapes':[{'id':'a','shape':" MESH "},{'id':'b','shape':" PLANE ",'velocity':[1,0,0]}]}",
     CQP_P_BAD_VALUE, "/shapes/1/velocity", NULL},
    {D_WORLD, "{'shapes':[{'id':1,'shape':" SPH "},{'id':2,'shape':" SPH "},{'id':3,'shape':" SPH "},"
              "{'id':4,'shape':" SPH "},{'id':5,'shape':" SPH "}]}",
     CQP_P_OVER_LIMIT, "/shapes", NULL},
    /* Contacts. */
    {D_CONTACTS, "[]", CQP_P_BAD_TYPE, "", NULL},
    {D_CONTACTS, "{'ids':'a'}", CQP_P_BAD_TYPE, "/ids", NULL},
    {D_CONTACTS, "{'ids':['a',{}]}", CQP_P_BAD_TYPE, "/ids/1", NULL},
    {D_CONTACTS, "{'ids':['a','" ID65 "']}", CQP_P_BAD_VALUE, "/ids/1", NULL},
    /* A filter holds at most --max-batch ids (du_small: 4), refused before they are stored. */
    {D_CONTACTS, "{'ids':['a','b','c','d','e']}", CQP_P_OVER_LIMIT, "/ids", NULL},
    {D_CONTACTS, "{'dt':-0.1}", CQP_P_BAD_VALUE, "/dt", NULL},
    {D_CONTACTS, "{'dt':null}", CQP_P_BAD_TYPE, "/dt", NULL},
    {D_CONTACTS, "{'ids':['a'],'dt':'x'}", CQP_P_BAD_TYPE, "/dt", NULL},
    {D_CONTACTS, "{'x':1}", CQP_P_UNKNOWN_FIELD, "/x", NULL},
    /* Raycast. */
    {D_RAYCAST, "{}", CQP_P_MISSING_FIELD, "/rays", NULL},
    {D_RAYCAST, "{'rays':{}}", CQP_P_BAD_TYPE, "/rays", NULL},
    {D_RAYCAST, "{'rays':[1]}", CQP_P_BAD_TYPE, "/rays/0", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0]}]}", CQP_P_MISSING_FIELD, "/rays/0/direction", NULL},
    {D_RAYCAST, "{'rays':[{'direction':[1,0,0]}]}", CQP_P_MISSING_FIELD, "/rays/0/origin", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[0,0,0]}]}", CQP_P_BAD_VALUE, "/rays/0/direction", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0]},{'origin':[0,0,0],'direction':[1,0]}]}",
     CQP_P_BAD_VALUE, "/rays/1/direction", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0],'direction':[1,0,0]}]}", CQP_P_BAD_VALUE, "/rays/0/origin", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0],'max_distance':-1}]}", CQP_P_BAD_VALUE,
     "/rays/0/max_distance", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0],'max_distance':'far'}]}", CQP_P_BAD_TYPE,
     "/rays/0/max_distance", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0],'mask':-1}]}", CQP_P_BAD_VALUE, "/rays/0/mask", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0],'length':1}]}", CQP_P_UNKNOWN_FIELD,
     "/rays/0/length", NULL},
    {D_RAYCAST, "{'rays':[],'all':'yes'}", CQP_P_BAD_TYPE, "/all", NULL},
    {D_RAYCAST, "{'rays':[],'closest':true}", CQP_P_UNKNOWN_FIELD, "/closest", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0]},{'origin':[0,0,0],'direction':[1,0,0]},"
                "{'origin':[0,0,0],'direction':[1,0,0]}]}",
     CQP_P_OVER_LIMIT, "/rays", NULL},
    /* Sweep. */
    {D_SWEEP, "{'translation':[1,0,0]}", CQP_P_MISSING_FIELD, "/shape", NULL},
    {D_SWEEP, "{'shape':" PLANE ",'translation':[1,0,0]}", CQP_P_BAD_VALUE, "/shape/type", NULL},
    {D_SWEEP, "{'shape':" HULL "}", CQP_P_MISSING_FIELD, "/translation", NULL},
    {D_SWEEP, "{'shape':" HULL ",'translation':[1,2]}", CQP_P_BAD_VALUE, "/translation", NULL},
    {D_SWEEP, "{'shape':" HULL ",'translation':[1,0,0],'mask':'x'}", CQP_P_BAD_TYPE, "/mask", NULL},
    {D_SWEEP, "{'shape':" MESH ",'translation':[1,0,0],'pose':{'rotation':[0,0,0]}}", CQP_P_BAD_VALUE,
     "/pose/rotation", NULL},
    {D_SWEEP, "{'shape':" SPH ",'translation':[1,0,0],'ids':[]}", CQP_P_UNKNOWN_FIELD, "/ids", NULL},
    {D_SWEEP, "{'shape':{'type':'sphere','radius':-2},'translation':[1,0,0]}", CQP_P_BAD_VALUE, "/shape/radius", NULL},
    /* Overlap. */
    {D_OVERLAP, "{}", CQP_P_MISSING_FIELD, "/shape", NULL},
    {D_OVERLAP, "{'shape':" SPH ",'translation':[1,0,0]}", CQP_P_UNKNOWN_FIELD, "/translation", NULL},
    {D_OVERLAP, "{'shape':" HULL ",'pose':{'axes':[[1,0,0],[0,1,0],[0,0,-1]]}}", CQP_P_BAD_VALUE, "/pose/axes", NULL},
    {D_OVERLAP, "{'shape':" HULL ",'mask':4294967296}", CQP_P_BAD_VALUE, "/mask", NULL},
};

/* A failed decoder leaves its output zeroed (and so owning nothing). */
static bool output_zeroed(du_which w, const du_decoded *o)
{
    switch (w) {
    case D_PAIR:
        return all_zero(&o->pair, sizeof o->pair);
    case D_PAIRS:
        return all_zero(&o->pairs, sizeof o->pairs);
    case D_PUT:
    case D_BATCH:
        return all_zero(&o->batch, sizeof o->batch);
    case D_WORLD:
        return all_zero(&o->world, sizeof o->world);
    case D_CONTACTS:
        return all_zero(&o->contacts, sizeof o->contacts);
    case D_RAYCAST:
        return all_zero(&o->raycast, sizeof o->raycast);
    case D_SWEEP:
    case D_OVERLAP:
        return all_zero(&o->shape, sizeof o->shape);
    }
    return false;
}

static const char *format_name(cqp_format f) { return f == CQP_JSON ? "JSON" : "MessagePack"; }

/* Decodes row's document in format f into *p and checks what every refused
 * document must give: the row's kind and pointer, a detail, the path back
 * at the root, the output zeroed, and nothing left allocated (the core's
 * bytes, proto's blocks). */
static void refused_in(const bad_doc *row, int i, cqp_format f, du_body *b, cqp_problem *p)
{
    size_t before = cq_alloc_bytes();
    cqp_decoder d;
    cqp_decoder_init(&d, row->limits ? row->limits : &du_small, p);
    du_decoded o;
    memset(&o, 0x55, sizeof o);
    du_count_allocs(false);
    int rc = du_run(row->w, &d, b->root, &o);
    long live = du_live_allocs();
    du_uncount_allocs();
    const char *fmt = format_name(f);
    ck_assert_msg(rc == -1, "row %d (%s): accepted %s", i, fmt, row->doc);
    ck_assert_msg(p->kind == row->kind, "row %d (%s): kind %s, detail %s", i, fmt, cqp_problem_slug(p->kind),
                  p->detail);
    ck_assert_msg(strcmp(p->pointer, row->pointer) == 0, "row %d (%s): pointer '%s', want '%s' (%s)", i, fmt,
                  p->pointer, row->pointer, p->detail);
    ck_assert_int_eq(cqp_problem_status(p->kind), row->kind == CQP_P_OVER_LIMIT ? 422 : 400);
    ck_assert_msg(strlen(p->detail) > 0, "row %d: no detail", i);
    ck_assert_str_eq(d.path, "");
    ck_assert_msg(output_zeroed(row->w, &o), "row %d (%s): output not zeroed", i, fmt);
    ck_assert_msg(live == 0, "row %d (%s): %ld blocks left", i, fmt, live);
    ck_assert(cq_alloc_bytes() == before);
}

/* Every row through both formats: the same kind and pointer, and the same
 * detail word for word (one decoder wrote both). */
START_TEST(test_bad_documents)
{
    const bad_doc *row = &bad[_i];
    cqp_problem p[DU_FORMATS];
    for (int f = 0; f < DU_FORMATS; f++) {
        du_body b;
        memset(&p[f], 0x55, sizeof p[f]);
        if (du_open_in(&b, (cqp_format)f, row->doc, &p[f]) != 0) {
            ck_assert_msg(row->kind == CQP_P_BAD_JSON, "row %d: parse failed: %s", _i, p[f].detail);
            ck_assert_int_eq(cqp_problem_status(p[f].kind), 400);
            ck_assert_int_eq(p[f].kind, CQP_P_BAD_JSON);
            ck_assert_str_eq(p[f].pointer, "");
            ck_assert_ptr_nonnull(strstr(p[f].detail, " at line 1 column "));
            return;
        }
        ck_assert_msg(row->kind != CQP_P_BAD_JSON, "row %d parsed", _i);
        refused_in(row, _i, (cqp_format)f, &b, &p[f]);
        du_close(&b);
    }
    ck_assert_str_eq(p[CQP_MSGPACK].detail, p[CQP_JSON].detail);
}
END_TEST

/* What only MessagePack can spell (du_mp_of's markers): NaN and the
 * infinities, float32, a uint64 beyond int64, a NUL inside a string or a
 * key, a key given twice. Each is refused where its JSON counterpart is, or
 * where the field's own check puts it (a NaN is not a finite number). */
static const bad_doc mp_bad[] = {
    /* Non-finite numbers, float64 and float32, in every kind of number. */
    {D_PAIR, POSE_A("{'position':[0,'!nan',0]}"), CQP_P_BAD_VALUE, "/a/pose/position/1", NULL},
    {D_PAIR, POSE_A("{'position':['!inf',0,0]}"), CQP_P_BAD_VALUE, "/a/pose/position/0", NULL},
    {D_PAIR, POSE_A("{'position':[0,0,'!-inf']}"), CQP_P_BAD_VALUE, "/a/pose/position/2", NULL},
    {D_PAIR, POSE_A("{'rotation':[0,0,0,'!nan']}"), CQP_P_BAD_VALUE, "/a/pose/rotation/3", NULL},
    {D_PAIR, POSE_A("{'axes':[[1,0,0],[0,'!f32:inf',0],[0,0,1]]}"), CQP_P_BAD_VALUE, "/a/pose/axes/1/1", NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,'!nan',1]}"), CQP_P_BAD_VALUE, "/a/shape/half_extents/1",
     NULL},
    {D_PAIR, PAIR_A("{'type':'box','half_extents':[1,1,'!inf']}"), CQP_P_BAD_VALUE, "/a/shape/half_extents/2",
     NULL},
    {D_PAIR, PAIR_A("{'type':'sphere','radius':'!f32:nan'}"), CQP_P_BAD_VALUE, "/a/shape/radius", NULL},
    {D_PAIR, PAIR_A("{'type':'convex','points':[[0,0,0],[1,1,'!-inf']]}"), CQP_P_BAD_VALUE, "/a/shape/points/1/2",
     NULL},
    {D_PAIR, PAIR_A("{'type':'plane','normal':[0,0,1],'offset':'!inf'}"), CQP_P_BAD_VALUE, "/a/shape/offset", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':'!nan'}", CQP_P_BAD_VALUE, "/skin", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':'!inf'}", CQP_P_BAD_VALUE, "/skin", NULL},
    {D_WORLD, "{'skin':'!-inf'}", CQP_P_BAD_VALUE, "/skin", NULL},
    {D_RAYCAST, "{'rays':[{'origin':['!nan',0,0],'direction':[1,0,0]}]}", CQP_P_BAD_VALUE, "/rays/0/origin/0", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,'!inf',0]}]}", CQP_P_BAD_VALUE, "/rays/0/direction/1",
     NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0],'max_distance':'!inf'}]}", CQP_P_BAD_VALUE,
     "/rays/0/max_distance", NULL},
    {D_SWEEP, "{'shape':" SPH ",'translation':[0,'!f32:-inf',0]}", CQP_P_BAD_VALUE, "/translation/1", NULL},
    {D_PUT, "{'shape':" SPH ",'velocity':['!nan',0,0]}", CQP_P_BAD_VALUE, "/velocity/0", NULL},
    {D_CONTACTS, "{'dt':'!nan'}", CQP_P_BAD_VALUE, "/dt", NULL},
    /* A uint64 beyond int64 reads as INT64_MAX, which no integer field takes. */
    {D_PUT, "{'shape':" SPH ",'layer':'!u64max'}", CQP_P_BAD_VALUE, "/layer", NULL},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0],'mask':'!u64max'}]}", CQP_P_BAD_VALUE,
     "/rays/0/mask", NULL},
    {D_WORLD, "{'capacity':'!u64max'}", CQP_P_BAD_VALUE, "/capacity", NULL},
    {D_WORLD, "{'epa_max_iterations':'!u64max'}", CQP_P_BAD_VALUE, "/epa_max_iterations", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[[0,'!u64max',2]]}"),
     CQP_P_BAD_VALUE, "/a/shape/triangles/0/1", NULL},
    {D_BATCH, "{'remove':['!u64max']}", CQP_P_BAD_VALUE, "/remove/0", NULL},
    /* A float, even a whole one, is no integer (as JSON's 1.5 and 2.0). */
    {D_PUT, "{'shape':" SPH ",'layer':'!f32:2'}", CQP_P_BAD_TYPE, "/layer", NULL},
    {D_WORLD, "{'capacity':'!f32:8'}", CQP_P_BAD_TYPE, "/capacity", NULL},
    {D_PAIR, PAIR_A("{'type':'mesh','vertices':[[0,0,0],[1,0,0],[0,1,0]],'triangles':[[0,'!f32:1',2]]}"),
     CQP_P_BAD_TYPE, "/a/shape/triangles/0/1", NULL},
    {D_BATCH, "{'remove':['!f32:3']}", CQP_P_BAD_TYPE, "/remove/0", NULL},
    /* A NUL inside a string is one of its bytes, not its end. */
    {D_BATCH, "{'remove':['a\\u0000b']}", CQP_P_BAD_VALUE, "/remove/0", NULL},
    {D_BATCH, "{'upsert':[{'id':'a\\u0000','shape':" SPH "}]}", CQP_P_BAD_VALUE, "/upsert/0/id", NULL},
    {D_CONTACTS, "{'ids':['\\u0000']}", CQP_P_BAD_VALUE, "/ids/0", NULL},
    {D_PAIR, PAIR_A("{'type':'sphere\\u0000','radius':1}"), CQP_P_BAD_VALUE, "/a/shape/type", NULL},
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin\\u0001':1}", CQP_P_UNKNOWN_FIELD,
     "/skin\xef\xbf\xbd", NULL},
    /* A key given twice reaching the decoder (cqp_mp_check refuses it
     * first): refused at the second, whichever value the first had. */
    {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':1,'skin!dup':1}", CQP_P_BAD_VALUE, "/skin", NULL},
    {D_PAIR, PAIR_A("{'type':'sphere','radius':1,'type!dup':'box'}"), CQP_P_BAD_VALUE, "/a/shape/type", NULL},
    {D_BATCH, "{'move':[{'id':'a','pose':{},'pose!dup':{}}]}", CQP_P_BAD_VALUE, "/move/0/pose", NULL},
    {D_WORLD, "{'shapes':[],'shapes!dup':[]}", CQP_P_BAD_VALUE, "/shapes", NULL},
    {D_PAIR, "{'x':1,'x!dup':1}", CQP_P_UNKNOWN_FIELD, "/x", NULL},
};

START_TEST(test_msgpack_only)
{
    const bad_doc *row = &mp_bad[_i];
    du_body b;
    du_open_marked(&b, row->doc);
    cqp_problem p;
    /* The server checks every body first: only a repeated key is its to
     * refuse, the rest is the decoders'. */
    bool repeated = strstr(row->doc, "!dup") != NULL;
    ck_assert_int_eq(cqp_mp_check(b.mp, b.mp_len, CQP_MP_MAX_DEPTH, &p), repeated ? -1 : 0);
    if (repeated)
        ck_assert_int_eq(p.kind, CQP_P_BAD_MSGPACK);
    memset(&p, 0x55, sizeof p);
    refused_in(row, _i, CQP_MSGPACK, &b, &p);
    du_close(&b);
}
END_TEST

/* The detail texts of what only MessagePack can spell. */
START_TEST(test_msgpack_details)
{
    static const struct {
        du_which w;
        const char *doc, *detail;
    } rows[] = {
        {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':'!nan'}", "skin must be a finite number"},
        {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0],'max_distance':'!inf'}]}",
         "rays[0].max_distance must be a finite number"},
        {D_PUT, "{'shape':" SPH ",'layer':'!u64max'}", "layer must be <= 4294967295"},
        {D_BATCH, "{'remove':['!u64max']}", "remove[0] must be <= 9223372036854775807 when given as an integer"},
        {D_BATCH, "{'remove':['a\\u0000b']}", "remove[0] must be 1 to 64 characters of [A-Za-z0-9._:-]"},
        {D_PUT, "{'shape':" SPH ",'layer':'!f32:2'}", "layer must be an integer"},
        {D_PAIR, "{'a':{'shape':" SPH "},'b':{'shape':" SPH "},'skin':1,'skin!dup':2}",
         "skin is a duplicate key (each key may appear once)"},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        du_body b;
        du_open_marked(&b, rows[k].doc);
        cqp_problem p;
        cqp_decoder d;
        cqp_decoder_init(&d, &du_small, &p);
        du_decoded o;
        memset(&o, 0, sizeof o);
        ck_assert_int_eq(du_run(rows[k].w, &d, b.root, &o), -1);
        ck_assert_str_eq(p.detail, rows[k].detail);
        du_close(&b);
    }
}
END_TEST

START_TEST(test_details)
{
    du_format = (cqp_format)_i;
    /* API.md's own example, word for word. */
    cqp_problem p = du_decode_bad(D_PAIR, PAIR_A("{'type':'box','half_extents':[1,-1,1]}"), &du_small);
    ck_assert_str_eq(p.detail, "a.shape.half_extents[1] must be >= 0");
    ck_assert_str_eq(p.pointer, "/a/shape/half_extents/1");
    p = du_decode_bad(D_PAIRS, "{'pairs':[" PAIR_A(SPH) ",{'a':{'shape':" SPH ",'pose':{'rotation':[0,0,0,2]}}}]}",
                   &du_small);
    ck_assert_str_eq(p.detail, "pairs[1].a.pose.rotation must have length 1 (within 0.001)");
    p = du_decode_bad(D_PAIR, PAIR_A("{'type':'sphere','radius':1,'r':1}"), &du_small);
    ck_assert_str_eq(p.detail, "a.shape.r is not a field of a sphere");
    p = du_decode_bad(D_PAIR, "{}", &du_small);
    ck_assert_str_eq(p.detail, "a is required");
    p = du_decode_bad(D_PAIR, "[]", &du_small);
    ck_assert_str_eq(p.detail, "body must be an object");
    p = du_decode_bad(D_RAYCAST, "{'rays':[1,2,3]}", &du_small);
    ck_assert_str_eq(p.detail, "rays has 3 rays; the limit is 2");
    p = du_decode_bad(D_PAIR, "{'a~b/c':1}", &du_small);
    ck_assert_str_eq(p.detail, "a~b/c is not a field of a pair request");
    /* A shape type names the types allowed, in API.md's order; case counts. */
    p = du_decode_bad(D_PAIR, PAIR_A("{'type':'Sphere','radius':1}"), &du_small);
    ck_assert_str_eq(p.detail, "a.shape.type must be one of sphere, capsule, box, convex, triangle, plane, mesh");
    ck_assert_str_eq(p.pointer, "/a/shape/type");
    /* A durability names the values allowed. */
    p = du_decode_bad(D_WORLD, "{'durability':'forever'}", &du_small);
    ck_assert_str_eq(p.detail, "durability must be one of full, shapes, none");
    p = du_decode_bad(D_WORLD, "{'settings':{'durability':true},'shapes':[]}", &du_small);
    ck_assert_str_eq(p.detail, "settings.durability must be a string: one of full, shapes, none");
}
END_TEST

START_TEST(test_parse_errors)
{
    cqp_problem p;
    const char *text = "{\n  \"a\": tru\n}";
    ck_assert_ptr_null(cqp_parse(text, strlen(text), &p));
    ck_assert_int_eq(p.kind, CQP_P_BAD_JSON);
    ck_assert_ptr_nonnull(strstr(p.detail, " at line 2 column "));
    text = "{\"skin\": 1e999}";
    ck_assert_ptr_null(cqp_parse(text, strlen(text), &p));
    ck_assert_ptr_nonnull(strstr(p.detail, "overflow"));
    /* The length is honoured: the text past len is not read. */
    text = "{}garbage";
    json_t *v = cqp_parse(text, 2, &p);
    ck_assert_ptr_nonnull(v);
    json_decref(v);
    ck_assert_ptr_null(cqp_parse(NULL, 0, &p));
    ck_assert_int_eq(p.kind, CQP_P_BAD_JSON);
    /* Invalid UTF-8 is malformed JSON, and the detail stays valid UTF-8. */
    text = "{\"a\xff\": 1}";
    ck_assert_ptr_null(cqp_parse(text, strlen(text), &p));
    for (const unsigned char *c = (const unsigned char *)p.detail; *c; c++)
        ck_assert(*c < 0x80);
}
END_TEST
/* A convex shape of n copies of distinct points, under limits. */
static char *convex_doc(int n)
{
    size_t cap = 64 + (size_t)n * 32;
    char *doc = malloc(cap);
    size_t len = (size_t)snprintf(doc, cap, "{'a':{'shape':{'type':'convex','points':[");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(doc + len, cap - len, "%s[%d,%d,%d]", i ? "," : "", i % 7, i % 11, i % 13);
    snprintf(doc + len, cap - len, "]}},'b':{'shape':" SPH "}}");
    return doc;
}

START_TEST(test_hull_point_limits)
{
    du_format = (cqp_format)_i;
    du_decoded o;
    /* The core's 256 wins over a configured 1000; 256 itself is fine. */
    char *doc = convex_doc(257);
    size_t before = cq_alloc_bytes();
    cqp_problem p = du_decode_bad(D_PAIR, doc, &du_roomy);
    ck_assert_int_eq(p.kind, CQP_P_OVER_LIMIT);
    ck_assert_int_eq(cqp_problem_status(p.kind), 422);
    ck_assert_str_eq(p.pointer, "/a/shape/points");
    ck_assert_str_eq(p.detail, "a.shape.points has 257 points; the limit is 256");
    ck_assert(cq_alloc_bytes() == before);
    free(doc);
    doc = convex_doc(256);
    du_decode_ok(D_PAIR, doc, &du_roomy, &o);
    ck_assert_int_eq(o.pair.a.shape.shape.type, CQ_CONVEX);
    du_release(&o);
    /* No limits at all (zero) still means the core's. */
    du_decode_ok(D_PAIR, doc, &(cqp_limits){0}, &o);
    du_release(&o);
    free(doc);
    ck_assert(cq_alloc_bytes() == before);
}
END_TEST
/* An allocator that fails every request. */
static void *no_alloc(size_t size, void *ctx)
{
    (void)size;
    (void)ctx;
    return NULL;
}

static void no_free(void *ptr, size_t size, void *ctx)
{
    (void)ptr;
    (void)size;
    (void)ctx;
}

START_TEST(test_out_of_memory)
{
    du_format = (cqp_format)_i;
    /* The core cannot build a hull or mesh: a 503 (retry) with nothing kept. */
    static const char *docs[] = {PAIR_A(HULL), PAIR_A(MESH)};
    for (int k = 0; k < 2; k++) {
        cq_set_allocator(&(cq_allocator){no_alloc, no_free, NULL});
        cqp_problem p = du_decode_bad(D_PAIR, docs[k], &du_small);
        cq_set_allocator(NULL);
        ck_assert_int_eq(p.kind, CQP_P_BUSY);
        ck_assert_int_eq(cqp_problem_status(p.kind), 503);
    }
}
END_TEST

/* Every array a decoded request holds, and a mesh's scratch, is proto's
 * (cqp_calloc), so the server's per-request arena serves it and
 * --max-request-memory bounds it for either format: decoded, a request
 * holds blocks until released (a mesh none: its scratch went to the core's
 * mesh); with every proto allocation failing, the decoder answers 503 with
 * nothing kept. */
START_TEST(test_request_memory)
{
    static const struct {
        du_which w;
        const char *doc;
        bool holds;
    } docs[] = {
        {D_PAIRS, "{'pairs':[" PAIR_A(SPH) "]}", true},
        {D_PUT, "{'shape':" SPH "}", true},
        {D_BATCH, "{'upsert':[{'id':'a','shape':" SPH "}],'move':[{'id':'b','pose':{}}],'remove':['c']}", true},
        {D_WORLD, "{'shapes':[{'id':'a','shape':" SPH "}]}", true},
        {D_CONTACTS, "{'ids':['a',2]}", true},
        {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[1,0,0]}]}", true},
        {D_PAIR, PAIR_A(MESH), false},
    };
    du_format = (cqp_format)_i;
    size_t before = cq_alloc_bytes();
    for (size_t k = 0; k < sizeof docs / sizeof docs[0]; k++) {
        du_decoded o;
        du_count_allocs(false);
        du_decode_ok(docs[k].w, docs[k].doc, &du_small, &o);
        ck_assert_msg((du_live_allocs() > 0) == docs[k].holds, "%s: %ld blocks", docs[k].doc, du_live_allocs());
        du_release(&o);
        ck_assert_int_eq(du_live_allocs(), 0);
        du_count_allocs(true);
        cqp_problem p = du_decode_bad(docs[k].w, docs[k].doc, &du_small);
        ck_assert_int_eq(du_live_allocs(), 0);
        du_uncount_allocs();
        ck_assert_msg(p.kind == CQP_P_BUSY, "%s: %s", docs[k].doc, p.detail);
        ck_assert_int_eq(cqp_problem_status(p.kind), 503);
        ck_assert(cq_alloc_bytes() == before);
    }
}
END_TEST

START_TEST(test_pointer_bounds)
{
    du_format = (cqp_format)_i;
    /* An unknown key longer than a pointer holds is cut, never mid-character. */
    char doc[700];
    int n = snprintf(doc, sizeof doc, "{'");
    for (int i = 0; i < 150; i++)
        n += snprintf(doc + n, sizeof doc - (size_t)n, "\xc3\xa9");
    snprintf(doc + n, sizeof doc - (size_t)n, "':1}");
    cqp_problem p = du_decode_bad(D_PAIR, doc, &du_small);
    ck_assert_int_eq(p.kind, CQP_P_UNKNOWN_FIELD);
    size_t len = strlen(p.pointer);
    ck_assert_uint_gt(len, 200);
    ck_assert_uint_eq(len % 2, 1); /* "/" and whole two-byte characters */
    ck_assert_uint_eq((unsigned char)p.pointer[len - 1], 0xa9);
    size_t dlen = strlen(p.detail);
    ck_assert_uint_lt(dlen, sizeof p.detail);
    for (size_t i = 0; i + 1 < dlen; i++)
        if ((unsigned char)p.detail[i] == 0xc3)
            ck_assert_uint_eq((unsigned char)p.detail[i + 1], 0xa9);
    ck_assert_uint_ne((unsigned char)p.detail[dlen - 1], 0xc3);
}
END_TEST

/* Good documents of every decoder, the seeds of the mutation test. */
static const struct {
    du_which w;
    const char *doc;
} seeds[] = {
    {D_PAIR, "{'a':{'shape':" HULL ",'pose':{'position':[1,2,3],'rotation':[0,0,0.6,0.8]}},"
             "'b':{'shape':" MESH ",'pose':{'axes':[[0,1,0],[-1,0,0],[0,0,1]]}},'skin':0.5,'explain':true}"},
    {D_PAIRS, "{'pairs':[" PAIR_A(BOX) ",{'a':{'shape':{'type':'capsule','radius':1,'half_height':2}},"
              "'b':{'shape':{'type':'triangle','vertices':[[0,0,0],[1,0,0],[0,1,0]]}}}]}"},
    {D_PUT, "{'shape':" PLANE ",'pose':{'position':[0,0,1]},'velocity':[0,0,0],'layer':1,'mask':2}"},
    {D_BATCH, "{'upsert':[{'id':'a','shape':" HULL "}],'move':[{'id':3,'pose':{},'velocity':[1,0,0]}],"
              "'remove':['b']}"},
    {D_WORLD, "{'settings':{'skin':0.1,'capacity':8},'shapes':[{'id':'m','shape':" MESH "}]}"},
    {D_CONTACTS, "{'ids':['a',3],'dt':0.0166}"},
    {D_RAYCAST, "{'rays':[{'origin':[0,0,0],'direction':[0,3,4],'max_distance':5,'mask':6}],'all':true}"},
    {D_SWEEP, "{'shape':" SPH ",'pose':{'position':[1,1,1]},'translation':[1,0,0],'mask':9}"},
    {D_OVERLAP, "{'shape':" BOX ",'mask':1}"},
};

/* Decoder w on body: 0, or -1 with *p a 400 / 422 problem whose pointer is
 * "" or starts with '/', the output zeroed and nothing of proto's left. */
static int mutant_in(du_which w, cqp_value body, const char *text, cqp_problem *p)
{
    cqp_decoder d;
    cqp_decoder_init(&d, &du_small, p);
    du_decoded o;
    memset(&o, 0, sizeof o);
    du_count_allocs(false);
    int rc = du_run(w, &d, body, &o);
    if (rc == 0) {
        du_release(&o);
    } else {
        int status = cqp_problem_status(p->kind);
        ck_assert_msg(status == 400 || status == 422, "%s: %s", text, p->detail);
        ck_assert(p->pointer[0] == '\0' || p->pointer[0] == '/');
        ck_assert_str_eq(d.path, "");
        ck_assert(output_zeroed(w, &o));
    }
    ck_assert_int_eq(du_live_allocs(), 0);
    du_uncount_allocs();
    return rc;
}

/* A parsed mutant (body, taken) through every decoder from JSON and from
 * MessagePack: the same answer, the same problem. */
static void mutant_both_ways(const char *text, json_t *body)
{
    size_t len;
    char *mp = du_mp_checked(body, &len);
    for (int w = 0; w <= D_OVERLAP; w++) {
        cqp_problem pj, pm;
        int rj = mutant_in((du_which)w, cqp_value_json(body), text, &pj);
        int rm = mutant_in((du_which)w, cqp_value_mp(mp), text, &pm);
        ck_assert_msg(rj == rm, "%s: decoder %d, JSON %d, MessagePack %d", text, w, rj, rm);
        if (rj) {
            ck_assert_msg(pj.kind == pm.kind, "%s: JSON %s, MessagePack %s", text, pj.detail, pm.detail);
            ck_assert_str_eq(pm.pointer, pj.pointer);
            ck_assert_str_eq(pm.detail, pj.detail);
        }
    }
    free(mp);
    json_decref(body);
}

/* Random edits of good documents, through every decoder and both formats:
 * none may crash or leak, each answer is a success or a 400 / 422 problem
 * whose pointer is "" or starts with '/', and the two formats answer alike.
 * Seeded, so a failure reproduces. */
START_TEST(test_mutations)
{
    static const char alphabet[] = "0123456789-.eE+\"'[]{},: tfnlrua\\";
    uint64_t state = 0x9E3779B97F4A7C15u;
    size_t before = cq_alloc_bytes();
    for (int round = 0; round < 4000; round++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        uint64_t r = state >> 11;
        int k = (int)(r % (sizeof seeds / sizeof seeds[0]));
        char *text = du_dq(seeds[k].doc);
        size_t len = strlen(text);
        for (int edits = 1 + (int)(r >> 8) % 3; edits > 0; edits--) {
            state = state * 6364136223846793005u + 1442695040888963407u;
            uint64_t e = state >> 11;
            size_t at = (size_t)(e % len);
            if ((e >> 32) % 4 == 0 && len > 1) {
                memmove(text + at, text + at + 1, len - at);
                len--;
            } else {
                text[at] = alphabet[(e >> 40) % (sizeof alphabet - 1)];
            }
        }
        cqp_problem p = {0};
        json_t *body = cqp_parse(text, len, &p);
        if (body)
            mutant_both_ways(text, body);
        else
            ck_assert_int_eq(p.kind, CQP_P_BAD_JSON);
        free(text);
        ck_assert(cq_alloc_bytes() == before);
    }
}
END_TEST

START_TEST(test_seeds_decode)
{
    du_format = (cqp_format)_i;
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        du_decoded o;
        du_decode_ok(seeds[k].w, seeds[k].doc, &du_small, &o);
        du_release(&o);
    }
}
END_TEST

Suite *proto_read_suite(void)
{
    Suite *s = suite_create("proto_read");
    TCase *tc = tcase_create("decode");
    tcase_add_loop_test(tc, test_bad_documents, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_loop_test(tc, test_msgpack_only, 0, (int)(sizeof mp_bad / sizeof mp_bad[0]));
    tcase_add_test(tc, test_msgpack_details);
    tcase_add_loop_test(tc, test_details, 0, DU_FORMATS);
    tcase_add_test(tc, test_parse_errors);
    tcase_add_loop_test(tc, test_hull_point_limits, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_out_of_memory, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_request_memory, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_pointer_bounds, 0, DU_FORMATS);
    tcase_add_loop_test(tc, test_seeds_decode, 0, DU_FORMATS);
    tcase_add_test(tc, test_mutations);
    suite_add_tcase(s, tc);
    return s;
}
