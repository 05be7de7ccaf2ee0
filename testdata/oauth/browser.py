#!/usr/bin/env python3
"""A browser for the sign-in tests, started as `$BROWSER URL`: it appends the
URL it was given to the file named by `OAUTH_BROWSER_LOG` (one line per
start), then, unless `OAUTH_BROWSER_FOLLOW` is `0`, GETs the URL and follows
its redirects, as a person's browser would after an instant approval: the
test authorization server approves at once and redirects to the workbench's
loopback listener. Python standard library only; anything that goes wrong
is written to the log as a line starting with `error:`.
"""

import os
import sys
import urllib.request


def main():
    url = sys.argv[-1]
    log = os.environ.get("OAUTH_BROWSER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(url + "\n")
    if os.environ.get("OAUTH_BROWSER_FOLLOW") == "0":
        return
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read()
    except Exception as e:  # noqa: BLE001 - any failure is reported the same way
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write("error: %s\n" % e)


if __name__ == "__main__":
    main()
