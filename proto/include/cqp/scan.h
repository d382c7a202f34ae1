/// @file cqp/scan.h
/// Locating the members of a JSON object in its text, without building a
/// tree: for values that must keep their exact bytes (a stream request's
/// id and body, a recorded body), which a tree would rewrite.
#ifndef CQP_SCAN_H
#define CQP_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "cqp/api.h"

/// One member of an object's text. Both spans point into the scanned text.
typedef struct cqp_member {
    const char *key; ///< the key token, quotes included, escapes as written (see cqp_key_is)
    size_t key_len;
    const char *value; ///< the value's text, blanks around it trimmed
    size_t value_len;
} cqp_member;

/// Calls each(m, arg) for every member of the object text s[0..n), in
/// order; a non-zero return stops the walk and is returned. Returns 0 when
/// the object was walked to its closing brace with only blanks after it,
/// else -1 with *at (may be NULL) the offset where the text stops being an
/// object at this level. Nested values are only bracket-matched, not
/// validated: scan text that jansson accepted, or check the values.
CQP_API int cqp_scan_object(const char *s, size_t n, int (*each)(const cqp_member *m, void *arg), void *arg,
                            size_t *at);

/// cqp_scan_object over the text of an object that holds exactly `members`
/// members (as a parse that refuses duplicate keys counted them; 0: not
/// known): the last member's value is taken up to the closing brace, not
/// walked, so a large value sent last (a stream request's body) costs
/// nothing to locate. Same calls and result as cqp_scan_object on such text.
CQP_API int cqp_scan_object_counted(const char *s, size_t n, size_t members,
                                    int (*each)(const cqp_member *m, void *arg), void *arg, size_t *at);

/// True when the key token (quotes included) names want; an escaped key
/// ("\u0069d") is decoded first.
CQP_API bool cqp_key_is(const char *token, size_t n, const char *want);

#endif
