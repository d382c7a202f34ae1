/* The status table's texts and the HTTP statuses it maps. */
#include "cqc_int.h"

static const char *const texts[] = {
#define CQC_STATUS_TEXT(name, http, text) text,
    CQC_STATUS_TABLE(CQC_STATUS_TEXT)
#undef CQC_STATUS_TEXT
};

static const int https[] = {
#define CQC_STATUS_HTTP(name, http, text) http,
    CQC_STATUS_TABLE(CQC_STATUS_HTTP)
#undef CQC_STATUS_HTTP
};

const char *cqc_strerror(cqc_status s)
{
    return (unsigned)s < CQC_STATUS_COUNT ? texts[s] : "unknown status";
}

cqc_status cqc__status_of_http(int http)
{
    if (http >= 200 && http < 300)
        return CQC_OK;
    for (int s = 0; s < CQC_STATUS_COUNT; s++)
        if (https[s] == http)
            return (cqc_status)s;
    return CQC_EHTTP;
}
