/// @file cq/api.h
/// CQ_API marks every declaration of libcq's public API. The library is
/// compiled with -fvisibility=hidden, so a shared build of it exports
/// these and nothing else; internal functions are cq__-prefixed.
#ifndef CQ_API_H
#define CQ_API_H

#if defined(__GNUC__) || defined(__clang__)
/// Default visibility: the declaration belongs to libcq's public API.
#define CQ_API __attribute__((visibility("default")))
#else
#define CQ_API
#endif

#endif
