/// @file server/api/inspector.h
/// The web inspector's files (inspector/www and three.js from the
/// libjs-three package), compiled in by the build (build/gen/inspector.c),
/// as the OpenAPI document is: the binary serves the page it was built with.
#ifndef CQD_INSPECTOR_H
#define CQD_INSPECTOR_H

#include <stddef.h>

/// One file under /inspect/.
typedef struct cqd_asset {
    const char *name;          ///< the last path segment ("index.html", "three.min.js")
    const unsigned char *data; ///< static storage
    size_t len;
} cqd_asset;

/// The files, in the generator's order; cqd_inspector_asset_count of them.
extern const cqd_asset cqd_inspector_assets[];
extern const int cqd_inspector_asset_count;

#endif
