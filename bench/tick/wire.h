/* `cq-tick wire`'s settings (wire.c; main.c parses them). */
#ifndef CQ_TICK_WIRE_H
#define CQ_TICK_WIRE_H

#include "tick.h"

/// The four ways a tick goes over the wire.
typedef enum tk_mode { TK_STREAM_MSGPACK, TK_STREAM_JSON, TK_HTTP_MSGPACK, TK_HTTP_JSON } tk_mode;

/// The mode's name in the printed keys: stream_msgpack, stream_json,
/// http_msgpack, http_json.
const char *tk_mode_name(tk_mode m);
/// The mode of a name; false when it names none.
bool tk_mode_parse(const char *name, tk_mode *m);

/// A run against one daemon.
typedef struct tk_wire {
    tk_scene *scene;
    int ticks, warmup;
    int http_port, stream_port;
    pid_t pid;              ///< the daemon, for its CPU time
    const char *world;      ///< the world's name
    tk_format load;         ///< the import's format
    tk_mode modes[8];
    int mode_count;
    char world_path[128], batch_path[160], contacts_path[160];
} tk_wire;

/// Imports the scene, then runs each mode in order; prints its `key value`
/// lines. 0, or 1 on any failure (a message on stderr).
int tk_wire_run(tk_wire *w);

#endif
