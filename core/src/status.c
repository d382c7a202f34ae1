#include "cq/status.h"

const char *cq_strerror(int status)
{
    switch (status) {
    case CQ_OK:
        return "ok";
#define CQ_STATUS_MSG_(name, code, msg)                                        \
    case code:                                                                 \
        return msg;
        CQ_STATUS_TABLE(CQ_STATUS_MSG_)
#undef CQ_STATUS_MSG_
    }
    return "unknown status";
}

const char *cq_err_name(int status)
{
    switch (status) {
    case CQ_OK:
        return "OK";
#define CQ_STATUS_NAME_(name, code, msg)                                       \
    case code:                                                                 \
        return #name;
        CQ_STATUS_TABLE(CQ_STATUS_NAME_)
#undef CQ_STATUS_NAME_
    }
    return "UNKNOWN";
}
