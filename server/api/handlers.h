/// @file server/api/handlers.h
/// Every endpoint's handler (see cqd_handler in request.h). The route
/// table in router.c maps API.md's paths to these.
#ifndef CQD_HANDLERS_H
#define CQD_HANDLERS_H

#include "request.h"

/* h_pair.c: stateless pair tests */
int cqd_h_pair(cqd_call *c);          ///< POST /v1/pair
int cqd_h_pairs(cqd_call *c);         ///< POST /v1/pairs

/* h_world.c: worlds */
int cqd_h_world_list(cqd_call *c);    ///< GET /v1/worlds
int cqd_h_world_put(cqd_call *c);     ///< PUT /v1/worlds/{world} (settings or import)
int cqd_h_world_get(cqd_call *c);     ///< GET /v1/worlds/{world}
int cqd_h_world_delete(cqd_call *c);  ///< DELETE /v1/worlds/{world}
int cqd_h_world_export(cqd_call *c);  ///< GET /v1/worlds/{world}/export

/* h_shape.c: shapes */
int cqd_h_shape_put(cqd_call *c);     ///< PUT /v1/worlds/{world}/shapes/{id}
int cqd_h_shape_get(cqd_call *c);     ///< GET /v1/worlds/{world}/shapes/{id}
int cqd_h_shape_delete(cqd_call *c);  ///< DELETE /v1/worlds/{world}/shapes/{id}
int cqd_h_batch(cqd_call *c);         ///< POST /v1/worlds/{world}/batch

/* h_query.c: world queries */
int cqd_h_broadphase(cqd_call *c);    ///< GET /v1/worlds/{world}/pairs
int cqd_h_contacts(cqd_call *c);      ///< POST /v1/worlds/{world}/contacts
int cqd_h_raycast(cqd_call *c);       ///< POST /v1/worlds/{world}/raycast
int cqd_h_sweep(cqd_call *c);         ///< POST /v1/worlds/{world}/sweep
int cqd_h_overlap(cqd_call *c);       ///< POST /v1/worlds/{world}/overlap

/* h_ops.c: operations */
int cqd_h_metrics(cqd_call *c);       ///< GET /metrics (text exposition)
int cqd_h_fallbacks(cqd_call *c);     ///< GET /metrics/fallbacks?limit=N
int cqd_h_healthz(cqd_call *c);       ///< GET /healthz
int cqd_h_readyz(cqd_call *c);        ///< GET /readyz
int cqd_h_openapi(cqd_call *c);       ///< GET /v1/openapi.json

/* h_inspector.c: the web inspector's files (open routes) */
int cqd_h_inspector_redirect(cqd_call *c); ///< GET /inspect (301 to /inspect/)
int cqd_h_inspector_index(cqd_call *c);    ///< GET /inspect/
int cqd_h_inspector_asset(cqd_call *c);    ///< GET /inspect/{file}: a file by name (404 for any other)

#endif
