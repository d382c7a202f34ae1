#!/usr/bin/env python3
"""The daemon's MessagePack answer to one POST /v1/pair, for run.sh.

  fetch_answer.py PORT REQUEST_FILE ANSWER_FILE

Sends REQUEST_FILE as a MessagePack body asking for a MessagePack answer,
writes the answer to ANSWER_FILE when it is a 200 in MessagePack, and
prints the status (200-not-msgpack for a 200 in another format), so that
run.sh can tell a daemon without MessagePack from one with it.
"""
import sys
import urllib.error
import urllib.request


def main():
    port, request, answer = sys.argv[1:]
    with open(request, "rb") as f:
        body = f.read()
    req = urllib.request.Request("http://127.0.0.1:%s/v1/pair" % port, data=body,
                                 headers={"Content-Type": "application/msgpack", "Accept": "application/msgpack"})
    try:
        with urllib.request.urlopen(req) as r:
            status, kind, data = r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        status, kind, data = e.code, e.headers.get("Content-Type", ""), e.read()
    if status == 200 and "msgpack" in kind:
        with open(answer, "wb") as f:
            f.write(data)
        print(200)
    else:
        print("200-not-msgpack" if status == 200 else status)


if __name__ == "__main__":
    main()
