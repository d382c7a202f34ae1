/* Content-Type and Accept parsing (server/net/media.c). Oracle: for each
 * header, the format RFC 9110 (sections 8.3, 12.4.2 and 12.5.1) and the
 * aliases media.h lists give, worked out by hand; one loop cell per
 * header, so a failure names the header. */
#include <check.h>
#include <stddef.h>

#include "net/media.h"

Suite *media_suite(void);

typedef struct media_case {
    const char *header; /* NULL: the header is absent */
    cqp_format want;
} media_case;

#define J CQP_JSON
#define M CQP_MSGPACK

static const media_case content_types[] = {
    {NULL, J},
    {"", J},
    {"application/json", J},
    {"application/json; charset=utf-8", J},
    {"application/msgpack", M},
    {"application/x-msgpack", M},
    {"application/vnd.msgpack", M},
    {"Application/MsgPack", M},           /* media types are case-insensitive */
    {"APPLICATION/X-MSGPACK", M},
    {"application/msgpack;charset=binary", M},
    {"application/msgpack ; foo=bar", M}, /* whitespace before ';' */
    {"  application/msgpack  ", M},
    {"\tapplication/msgpack", M},
    {"application/x-www-form-urlencoded", J}, /* curl -d's default */
    {"multipart/form-data; boundary=x", J},
    {"text/plain", J},
    {"application/msgpack2", J},           /* a longer name is another type */
    {"application/msgpac", J},
    {"application/problem+msgpack", J},    /* an answer's type, not a body's */
    {"application/msgpack+json", J},
    {"msgpack", J},
    {";application/msgpack", J},
};

static const media_case accepts[] = {
    {NULL, J},
    {"", J},
    {"*/*", J},
    {"application/*", J},
    {"application/json", J},
    {"application/msgpack", M},
    {"application/x-msgpack", M},
    {"application/vnd.msgpack", M},
    {"application/problem+msgpack", M},
    {"application/problem+json", J},
    {"APPLICATION/MSGPACK", M},
    {"text/html", J},                       /* only unknown types: no 406 */
    {"text/html, image/png;q=0.9", J},
    {"text/*, application/msgpack", M},
    {"application/msgpack, application/json", J},       /* a tie */
    {"application/json, application/msgpack", J},
    {"application/json;q=0.5, application/msgpack", M},
    {"application/msgpack;q=0.9, application/json;q=0.8", M},
    {"application/msgpack;q=0.8, application/json;q=0.9", J},
    {"application/msgpack;q=0.5, application/json;q=0.5", J},
    {"application/msgpack;q=0.501, application/json;q=0.5", M}, /* thousandths compare */
    {"application/msgpack;q=0", J},
    {"application/msgpack;q=0.000", J},
    {"application/msgpack;q=0, */*", J},    /* named and refused beats the wildcard */
    {"application/msgpack, */*;q=0.1", M},
    {"application/msgpack;q=0.5, */*", J},  /* json's 1 comes from the wildcard */
    {"application/msgpack;q=0.5, application/*;q=0.4", M},
    {"application/json;q=0, */*", M},       /* json refused, msgpack matched by the wildcard */
    {"application/json;q=0, application/*", M},
    {"application/json;q=0, application/msgpack;q=0", J}, /* nothing acceptable */
    {"application/json;q=0.1, application/x-msgpack;q=0.2", M},
    {"application/msgpack;Q=0.5, application/json;q=0.4", M}, /* Q is q */
    {"application/msgpack; q=0.5 , application/json ;q=0.4", M},
    {"application/msgpack\t;\tq=1", M},
    {"application/msgpack;q=1.0", M},
    {"application/msgpack;q=1.000", M},
    {"application/msgpack;q=1., application/json;q=0.9", M},
    /* Malformed members are ignored, not read as q=1 or as the end. */
    {"application/msgpack;q=1.5", J},
    {"application/msgpack;q=2", J},
    {"application/msgpack;q=0.0001", J},
    {"application/msgpack;q=.5", J},
    {"application/msgpack;q=", J},
    {"application/msgpack;q=\"1\"", J},
    {"application/msgpack;q=0.5x", J},
    {"application/msgpack;q", J},
    {"application/msgpack junk", J},
    {"application/", J},
    {"/msgpack", J},
    {"application/json;q=bad, application/msgpack", M},
    {"application/msgpack;q=0.5;q=0.1, application/json;q=0.4", M}, /* the first q is the weight */
    {"application/msgpack;v=\"a,b;q=0\", application/json;q=0.9", M}, /* quoted ',' and ';' are text */
    {"application/msgpack;v=\"a\\\"b\", application/json;q=0.9", M},  /* an escaped quote */
    {"application/json;q=0.9, application/msgpack;v=\"open", J},     /* unterminated: ignored */
    {"application/msgpack;;q=0.5, application/json;q=0.4", M},       /* an empty parameter */
    {",, application/msgpack ,", M},          /* empty list members */
    {"application/msgpack, application/msgpack;q=0.2", M}, /* equally specific: the higher */
    {"application/x-msgpack;q=0, application/msgpack", M},
};

START_TEST(body_format)
{
    const media_case *t = &content_types[_i];
    ck_assert_msg(cqd_media_body_format(t->header) == t->want, "Content-Type \"%s\": want %s",
                  t->header ? t->header : "(absent)", t->want == M ? "msgpack" : "json");
}
END_TEST

START_TEST(accept)
{
    const media_case *t = &accepts[_i];
    ck_assert_msg(cqd_media_accept(t->header) == t->want, "Accept \"%s\": want %s",
                  t->header ? t->header : "(absent)", t->want == M ? "msgpack" : "json");
}
END_TEST

Suite *media_suite(void)
{
    Suite *s = suite_create("media");
    TCase *tc = tcase_create("media");
    tcase_add_loop_test(tc, body_format, 0, (int)(sizeof content_types / sizeof content_types[0]));
    tcase_add_loop_test(tc, accept, 0, (int)(sizeof accepts / sizeof accepts[0]));
    suite_add_tcase(s, tc);
    return s;
}
