/* What http.c and stream.c share of conn.c beyond tick.h. */
#ifndef CQ_TICK_CONN_H
#define CQ_TICK_CONN_H

#include "tick.h"

/// Receives what the socket has (at least one byte) after the buffered
/// bytes, first dropping consumed ones; false on error or end of stream.
bool tk_fill(tk_conn *c);
/// Receives until n unconsumed bytes are buffered.
bool tk_need(tk_conn *c, size_t n);

#endif
