#!/usr/bin/env bash
# make deploy-check: the deployment files against real validators.
#
#   tests/deploy/run.sh path/to/collisiond
#
# 1. Kubernetes manifests (and the kustomize-generated ConfigMap) against the
#    Kubernetes OpenAPI schemas, compose.yml against the compose-spec schema
#    (validate.mjs; npm packages pinned by package-lock.json, `npm ci`).
# 2. The Prometheus configs and alert rules with promtool (Debian's
#    prometheus package, unpacked into build/, never installed or started),
#    and the alert rules' unit tests (alerts_test.yml) with promtool test rules.
# 3. The rendered router configs with `nginx -t` (Debian's nginx, from make
#    deps), on a copy with loopback names and ports and a private prefix;
#    then each runs unprivileged with only its pid and temporary paths
#    writable, answers its probe and buffers a body to its temporary path.
# 4. tests/cluster/check_manifests.py against the built daemon.
# Exit status 0 when all pass, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
daemon=${1:?usage: tests/deploy/run.sh path/to/collisiond}
tools=$(realpath -m "${DEPLOY_TOOLS:-build/deploy-tools}")
failed=0
step() { printf '== %s\n' "$*"; }
bad() { printf 'FAIL: %s\n' "$*"; failed=1; }

step "npm ci (tests/deploy/package-lock.json)"
# Installed once per change of the lock file; later runs need no network.
if [ ! tests/deploy/node_modules/.package-lock.json -nt tests/deploy/package-lock.json ]; then
    (cd tests/deploy && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
fi

step "promtool from Debian's prometheus package"
promtool=$tools/usr/bin/promtool
if [ ! -x "$promtool" ]; then
    mkdir -p "$tools"
    # Into a folder of its own; as root, apt runs the download as root
    # (its _apt user cannot write there), which is all its warning says.
    # A machine whose package lists were never fetched learns them first.
    download() { (cd "$tools" && apt-get download -qq -o APT::Sandbox::User=root prometheus); }
    if ! download; then
        sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
        $sudo apt-get update -qq && download
    fi
    dpkg-deb --fsys-tarfile "$tools"/prometheus_*.deb | tar -x -C "$tools" ./usr/bin/promtool
    rm -f "$tools"/prometheus_*.deb
fi
"$promtool" --version | head -n 1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step "1. Kubernetes and compose schemas"
node tests/deploy/validate.mjs || bad "schema validation"

step "2. promtool check config / check rules / test rules"
# The configs name their rule file and token file relative to themselves.
cp deploy/prometheus/*.yml tests/deploy/alerts_test.yml "$tmp/"
echo placeholder-token > "$tmp/collisiond-token"
mkdir "$tmp/collisiond" && echo placeholder-token > "$tmp/collisiond/token"
"$promtool" check config "$tmp/prometheus.yml" || bad "promtool check config prometheus.yml"
# Debian builds Prometheus without Kubernetes service discovery, so its
# promtool cannot parse kubernetes_sd_configs: check the rest of that job
# with the discovery block replaced by a static target (check_manifests.py
# checks the block itself against the manifests' labels and ports).
python3 - "$tmp/prometheus-k8s.yml" <<'EOF'
import sys, yaml
path = sys.argv[1]
conf = yaml.safe_load(open(path))
for job in conf["scrape_configs"]:
    assert job.pop("kubernetes_sd_configs"), "no kubernetes_sd_configs"
    job["static_configs"] = [{"targets": ["collisiond-0:7878"]}]
yaml.safe_dump(conf, open(path, "w"))
EOF
"$promtool" check config "$tmp/prometheus-k8s.yml" || bad "promtool check config prometheus-k8s.yml (without its discovery)"
"$promtool" check rules deploy/prometheus/alerts.yml || bad "promtool check rules"
(cd "$tmp" && "$promtool" test rules alerts_test.yml) || bad "promtool test rules"

step "3. nginx -t on the rendered router configs, then each run with only its pid and temp paths writable"
module=/usr/lib/nginx/modules/ngx_stream_module.so
# Run unprivileged like the container (uid 101 there): as nobody when root.
as_user=()
[ "$(id -u)" -ne 0 ] || as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
for conf in deploy/nginx/compose.conf deploy/k8s/router-nginx.conf; do
    d=$tmp/nginx-$(basename "$conf" .conf)
    mkdir -p "$d/cache" "$d/run"
    ports=($(python3 -c 'import sys; sys.path.insert(0, "tests/cluster"); from cluster import free_ports; print(*free_ports(5))'))
    # Same file, with what only exists in the container made local: the
    # shards to a loopback port where nothing listens, the listeners to free
    # loopback ports, the two writable paths (/var/cache/nginx and /tmp)
    # to cache/ and run/ under a private prefix, Debian's stream module loaded.
    { echo "load_module $module;"
      sed -E -e "s/collisiond(-shard)?-[0-9]+:[0-9]+/127.0.0.1:${ports[4]}/g" \
          -e "s#listen 0\\.0\\.0\\.0:7878;#listen 127.0.0.1:${ports[0]};#" \
          -e "s#listen 7879;#listen 127.0.0.1:${ports[1]};#" \
          -e "s#listen 7880;#listen 127.0.0.1:${ports[2]};#" \
          -e "s#listen 7881;#listen 127.0.0.1:${ports[3]};#" \
          -e "s#pid /tmp/#pid $d/run/#" \
          -e "s# /var/cache/nginx/# $d/cache/#" "$conf"
    } > "$d/nginx.conf"
    if grep -qE '0\.0\.0\.0|listen 78| /var/cache/|pid /tmp/nginx|collisiond-[0-9a-z-]*:' "$d/nginx.conf"; then
        bad "$conf: a container path, port or name was left in the test copy"
    fi
    nginx -t -q -e stderr -p "$d" -c "$d/nginx.conf" || bad "nginx -t $conf"
    # The read-only root filesystem: everything but cache/ and run/ is
    # read-only to the user nginx runs as (the container's /var/cache/nginx
    # and /tmp volumes).
    rm -rf "${d:?}/cache/"* "${d:?}/run/nginx.pid"
    chmod 0755 "$d" "$tmp" && chmod 0644 "$d/nginx.conf" && chmod 0777 "$d/cache" "$d/run"
    # Its access log is /dev/stdout, which nginx opens again: a log file the
    # unprivileged user may write, as a container's stdout would be.
    : > "$d/out.log" && chmod 0666 "$d/out.log"
    # In the foreground, as in a container (daemonizing opens /dev/null,
    # which some sandboxes do not let an unprivileged user open).
    "${as_user[@]}" nginx -e stderr -p "$d" -c "$d/nginx.conf" -g 'daemon off;' > "$d/out.log" 2>&1 &
    for _ in $(seq 50); do [ -s "$d/run/nginx.pid" ] && break; sleep 0.1; done
    if [ ! -s "$d/run/nginx.pid" ]; then
        cat "$d/out.log"
        bad "nginx $conf did not start (or wrote no pid file in its pid path)"
        continue
    fi
    # The router's own probe, then a 1 MiB body: nginx buffers it to
    # client_body_temp_path before proxying, and the unreachable shard
    # makes it the router's 503 problem.
    python3 - "${ports[0]}" <<'EOF' || bad "nginx $conf: /readyz or the buffered PUT did not answer as expected"
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
c.request("GET", "/readyz")
r = c.getresponse()
assert r.status == 200 and r.read() == b'{"status":"ready"}', r.status
c.request("PUT", "/v1/worlds/arena", body=b" " * (1 << 20), headers={"Content-Type": "application/json"})
r = c.getresponse()
body = r.read()
assert r.status == 503 and b"urn:collisiond:problem:unavailable" in body, (r.status, body[:200])
EOF
    [ "$failed" -eq 0 ] || cat "$d/out.log"
    [ -d "$d/cache/client_temp" ] || bad "nginx $conf: client_body_temp_path was not created"
    kill -QUIT "$(cat "$d/run/nginx.pid")"
    wait
done

step "4. check_manifests.py"
python3 tests/cluster/check_manifests.py "$daemon" || bad "check_manifests.py"

if [ "$failed" -ne 0 ]; then
    echo "deploy-check: FAILED"
    exit 1
fi
echo "deploy-check: all checks passed"
