/* The stream envelope's keys and a few values as MessagePack bytes, for
 * envelopes the stream suites write out by hand: a map of up to 15 members
 * is 0x80 + count, a str of up to 31 bytes 0xa0 + length. */
#ifndef CQ_TEST_STREAM_KEYS_H
#define CQ_TEST_STREAM_KEYS_H

#define M_ID "\xa2id"
#define M_METHOD "\xa6method"
#define M_PATH "\xa4path"
#define M_HEADERS "\xa7headers"
#define M_BODY "\xa4" "body"
#define M_GET "\xa3GET"
#define M_ROOT "\xa1/"

#endif
