/// @file cqp/api.h
/// CQP_API marks every declaration of libcqp's public API. The library is
/// compiled with -fvisibility=hidden, so a shared build of it exports
/// these and nothing else; internal functions are cqp__-prefixed.
#ifndef CQP_API_H
#define CQP_API_H

#if defined(__GNUC__) || defined(__clang__)
/// Default visibility: the declaration belongs to libcqp's public API.
#define CQP_API __attribute__((visibility("default")))
#else
#define CQP_API
#endif

#endif
