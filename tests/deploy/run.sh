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
#    deps), on a copy with loopback names and ports and a private prefix.
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

step "3. nginx -t on the rendered router configs"
module=/usr/lib/nginx/modules/ngx_stream_module.so
for conf in deploy/nginx/compose.conf deploy/k8s/router-nginx.conf; do
    d=$tmp/nginx-$(basename "$conf" .conf)
    mkdir -p "$d/cache"
    ports=($(python3 -c 'import sys; sys.path.insert(0, "tests/cluster"); from cluster import free_ports; print(*free_ports(4))'))
    # Same file, with what only exists in the container made local: shard
    # names to loopback, listeners to free loopback ports, the pid file and
    # temporary paths under a private prefix, Debian's stream module loaded.
    { echo "load_module $module;"
      sed -E -e 's/collisiond(-shard)?-[0-9]+:/127.0.0.1:/g' \
          -e "s#listen 0\\.0\\.0\\.0:7878;#listen 127.0.0.1:${ports[0]};#" \
          -e "s#listen 7879;#listen 127.0.0.1:${ports[1]};#" \
          -e "s#listen 7880;#listen 127.0.0.1:${ports[2]};#" \
          -e "s#listen 7881;#listen 127.0.0.1:${ports[3]};#" \
          -e "s#/var/cache/nginx/#$d/cache/#" \
          -e "s#/tmp/nginx\\.pid#$d/nginx.pid#" "$conf"
    } > "$d/nginx.conf"
    if grep -qE '0\.0\.0\.0|listen 78|/var/cache|/tmp/nginx' "$d/nginx.conf"; then
        bad "$conf: a container path or port was left in the test copy"
    fi
    nginx -t -q -e stderr -p "$d" -c "$d/nginx.conf" || bad "nginx -t $conf"
done

step "4. check_manifests.py"
python3 tests/cluster/check_manifests.py "$daemon" || bad "check_manifests.py"

if [ "$failed" -ne 0 ]; then
    echo "deploy-check: FAILED"
    exit 1
fi
echo "deploy-check: all checks passed"
