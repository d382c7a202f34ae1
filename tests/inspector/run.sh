#!/usr/bin/env bash
# make inspector-test: the web inspector's JavaScript through eslint, then
# the page in headless Chromium against the real daemon (browser.mjs), then
# the 10,000-box load and live refresh (perf.mjs, figures reported).
#
#   tests/inspector/run.sh path/to/collisiond OUT_DIR
#
# npm packages are pinned by tests/inspector/package-lock.json (`npm ci`);
# Chromium is Debian's (/usr/bin/chromium, or $CHROMIUM). Screenshots and
# the logs go to OUT_DIR. Ends with "N passed, M failed"; exit 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
daemon=${1:?usage: tests/inspector/run.sh path/to/collisiond OUT_DIR}
out=${2:?usage: tests/inspector/run.sh path/to/collisiond OUT_DIR}
mkdir -p "$out"
passed=0 failed=0

# Installed once per change of the lock file; later runs need no network.
if [ ! tests/inspector/node_modules/.package-lock.json -nt tests/inspector/package-lock.json ]; then
    (cd tests/inspector && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null) || exit 1
fi

echo "== eslint (inspector/www, tests/inspector)"
if tests/inspector/node_modules/.bin/eslint -c tests/inspector/eslint.config.js inspector/www tests/inspector; then
    echo "ok   eslint"; passed=$((passed + 1))
else
    echo "FAIL eslint"; failed=$((failed + 1))
fi

echo "== the page in headless Chromium"
node tests/inspector/browser.mjs "$daemon" "$out" | tee "$out/browser.log"
summary=$(tail -n 1 "$out/browser.log")
if [[ $summary =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
else
    echo "FAIL the browser test did not finish"; failed=$((failed + 1))
fi

echo "== 10,000 boxes: load and live refresh"
if node tests/inspector/perf.mjs "$daemon" 10000 | tee "$out/perf.log"; then
    echo "ok   10,000 boxes drawn, refreshed in place"; passed=$((passed + 1))
else
    echo "FAIL 10,000 boxes"; failed=$((failed + 1))
fi

echo "screenshots: $out/*.png"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
