/// @file server/api/openapi.h
/// docs/openapi.json, compiled in by the build (build/gen/openapi.c).
#ifndef CQD_OPENAPI_H
#define CQD_OPENAPI_H

#include <stddef.h>

/// The document, NUL-terminated; cqd_openapi_len bytes without the NUL.
extern const char cqd_openapi_json[];
extern const size_t cqd_openapi_len;

#endif
