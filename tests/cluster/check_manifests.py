#!/usr/bin/env python3
"""Static checks of the deployment files in deploy/ (needs PyYAML: Debian's
python3-yaml; `make deploy-check` runs it, `make cluster-test` does not):

    check_manifests.py path/to/collisiond

- Kubernetes (deploy/k8s): the StatefulSet has volumeClaimTemplates mounted
  where the image keeps its data, readiness on /readyz, liveness on
  /healthz, a grace period, requests and limits, Prometheus annotations; the
  headless Service (clusterIP: None) is its serviceName; a PodDisruptionBudget
  selects its pods; one Service per shard selects pod collisiond-<i>, and the
  router's nginx.conf hashes exactly those; every port the router's
  nginx.conf listens on is a container port and a Service port; the flags
  ConfigMap holds only variables `collisiond --help` lists.
- Compose (deploy/compose.yml): three shards with their own volumes, the
  router mounting deploy/nginx/compose.conf, whose upstreams are those shards.
- Prometheus (deploy/prometheus): every collisiond_* name an alert uses is a
  family the daemon exports (its /metrics, with a world and a request so
  every labelled family appears); the alerts API.md asks for exist, each
  with a `for:` and a summary; both scrape configs send a bearer token
  from a file, and the Kubernetes one selects exactly the shards' pods.
- Memory: the flags ConfigMap's worst case (buffered bytes, decoded JSON of
  every running request, answers in flight) leaves the container limit
  room for the worlds (docs/DEPLOY.md, "Memory limits").
- Hardening: both containers non-root with numeric ids, read-only root
  filesystem, no privilege escalation, no capabilities, RuntimeDefault
  seccomp; the router's nginx.conf writes only under its emptyDir mounts.
- Images: pinned by digest (tag kept) in the Dockerfile, compose and the
  router; the Dockerfile's OCI labels, and its build stage installing the
  Makefile's DEB_PKGS; compose health checks on /readyz and a router that
  waits for service_healthy.
Exit status 0 when all hold, 1 otherwise.
"""
import os
import re
import subprocess
import sys

import yaml

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
from cluster import REPO, free_ports, request, wait_until

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: %s" % what)


def load_all(rel):
    with open(os.path.join(REPO, rel)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def env_names(daemon):
    out = subprocess.run([daemon, "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"env (COLLISIOND_[A-Z_]+)", out))


def exported_families(daemon):
    http_port, stream_port = free_ports(2)
    p = subprocess.Popen([daemon, "--listen", "127.0.0.1:%d" % http_port, "--stream-listen",
                          "127.0.0.1:%d" % stream_port, "--data-dir", "", "--log-level", "error"])
    try:
        wait_until("daemon", lambda: request(http_port, "GET", "/readyz").status == 200, proc=p)
        request(http_port, "PUT", "/v1/worlds/w", {})
        text = request(http_port, "GET", "/metrics").body.decode()
    finally:
        p.terminate()
        p.wait()
    return set(re.findall(r"^# TYPE (\S+)", text, re.M))


PINNED = re.compile(r"^[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$")
MIB = 1 << 20
# Measured (docs/DEPLOY.md, "Memory limits"): the bytes of one answer item.
PAIR_ANSWER, HIT_ANSWER = 370, 70
ANSWER_BUDGET = 8 * MIB
# API.md, "Answers too large to send": a query listing a world's items holds
# an array of at most this many times --max-response while it runs (3.7 for
# MessagePack contacts, the largest).
ITEM_ROOM = 4
FIXED = 32 * MIB  # the process, per-thread arenas, connection pools


def size_bytes(text):
    """A daemon byte size (64M) or a Kubernetes quantity (2Gi) in bytes."""
    m = re.fullmatch(r"(\d+)(K|M|G|Ki|Mi|Gi)?", str(text))
    if not m:
        raise ValueError("not a size: %r" % text)
    shift = {None: 0, "K": 10, "M": 20, "G": 30, "Ki": 10, "Mi": 20, "Gi": 30}[m.group(2)]
    return int(m.group(1)) << shift


def check_hardened(c, pod, what):
    sc, psc = c.get("securityContext", {}), pod.get("securityContext", {})
    get = lambda k: sc.get(k, psc.get(k))  # noqa: E731  (the container's wins)
    check(get("runAsNonRoot") is True, "%s: runAsNonRoot" % what)
    check(isinstance(get("runAsUser"), int) and get("runAsUser") > 0, "%s: a numeric non-root runAsUser" % what)
    check(sc.get("readOnlyRootFilesystem") is True, "%s: readOnlyRootFilesystem" % what)
    check(sc.get("allowPrivilegeEscalation") is False, "%s: allowPrivilegeEscalation false" % what)
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], "%s: capabilities drop ALL" % what)
    check((get("seccompProfile") or {}).get("type") == "RuntimeDefault", "%s: seccompProfile RuntimeDefault" % what)


def check_memory(cm, c):
    """The worst case the flags allow, against the container's memory limit."""
    d = cm["data"]
    threads = int(d["COLLISIOND_THREADS"])
    workers = int(d["COLLISIOND_WORKERS"])
    buffered = size_bytes(d["COLLISIOND_MAX_BUFFERED"])
    per_request = size_bytes(d["COLLISIOND_MAX_REQUEST_MEMORY"])
    inflight = int(d["COLLISIOND_MAX_INFLIGHT"])
    answer = size_bytes(d["COLLISIOND_MAX_RESPONSE"])
    check("COLLISIOND_MAX_WORLD_PAIRS" in d, "MAX_WORLD_PAIRS set (a world's pairs are part of its memory)")
    limit = size_bytes(c["resources"]["limits"]["memory"])
    check(c["resources"]["requests"]["memory"] == c["resources"]["limits"]["memory"], "memory request = limit")
    check(size_bytes(d["COLLISIOND_MAX_BODY"]) <= buffered, "MAX_BODY fits in MAX_BUFFERED")
    check(answer <= ANSWER_BUDGET, "MAX_RESPONSE keeps an answer under 8 MiB")
    check(int(d["COLLISIOND_MAX_PAIRS"]) * PAIR_ANSWER <= ANSWER_BUDGET, "MAX_PAIRS keeps an answer under 8 MiB")
    for k in ("COLLISIOND_MAX_RAYS", "COLLISIOND_MAX_HITS"):
        check(int(d[k]) * HIT_ANSWER <= ANSWER_BUDGET, "%s keeps an answer under 8 MiB" % k)
    # Requests run on the HTTP handler pool (workers) and on the stream pool
    # (threads), each with its decoded JSON and its answer's item array;
    # every admitted request holds one answer until it is sent.
    transient = FIXED + buffered + (workers + threads) * (per_request + ITEM_ROOM * answer) + inflight * answer
    worlds = int(d["COLLISIOND_MAX_WORLDS"]) * 1024 * 600  # empty worlds at the default capacity
    headroom = limit * 15 // 100
    check(transient + worlds + headroom <= limit // 100 * 70,
          "requests (%d MiB) + empty worlds (%d MiB) + 15%% headroom must leave at least 30%% of the "
          "%d MiB limit for shapes" % (transient // MIB, worlds // MIB, limit // MIB))
    print("memory: requests %d MiB, empty worlds %d MiB, headroom %d MiB; %d MiB left for shapes of the %d MiB limit"
          % (transient // MIB, worlds // MIB, headroom // MIB, (limit - transient - worlds - headroom) // MIB,
             limit // MIB))


def nginx_conf(rel):
    with open(os.path.join(REPO, rel)) as f:
        text = f.read()
    upstreams = re.findall(r"^\s*server (\S+) max_fails=0;", text, re.M)
    listens = [int(x.rsplit(":", 1)[-1]) for x in re.findall(r"^\s*listen (\S+);", text, re.M)]
    return upstreams, listens


def check_k8s(envs):
    docs = load_all("deploy/k8s/collisiond.yaml")
    router_docs = load_all("deploy/k8s/router.yaml")
    kust = load_all("deploy/k8s/kustomization.yaml")[0]
    check(set(kust["resources"]) == {"collisiond.yaml", "router.yaml"}, "kustomization resources")
    gen = kust["configMapGenerator"][0]
    check(gen["files"] == ["nginx.conf=router-nginx.conf"], "the router ConfigMap is generated from router-nginx.conf")

    (sts,) = by_kind(docs, "StatefulSet")
    spec, pod = sts["spec"], sts["spec"]["template"]["spec"]
    labels = sts["spec"]["template"]["metadata"]["labels"]
    check(spec["selector"]["matchLabels"].items() <= labels.items(), "StatefulSet selector matches its pods")
    (c,) = pod["containers"]
    check(c["readinessProbe"]["httpGet"]["path"] == "/readyz", "readiness probe on /readyz")
    check(c["livenessProbe"]["httpGet"]["path"] == "/healthz", "liveness probe on /healthz")
    check(pod.get("terminationGracePeriodSeconds", 30) >= 30, "grace period of at least 30 s")
    for kind in ("requests", "limits"):
        check({"cpu", "memory"} <= set(c["resources"].get(kind, {})), "resources.%s has cpu and memory" % kind)
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    check(ports == {"http": 7878, "stream": 7879}, "container ports http 7878, stream 7879")
    claims = [t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    check(claims == ["data"] and mounts.get("data") == "/var/lib/collisiond",
          "a volumeClaimTemplate mounted at /var/lib/collisiond (the image's volume)")
    ann = sts["spec"]["template"]["metadata"].get("annotations", {})
    check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == "7878"
          and ann.get("prometheus.io/path") == "/metrics", "Prometheus scrape annotations")
    check(pod["securityContext"].get("runAsNonRoot") is True and pod["securityContext"].get("fsGroup") == 10001,
          "non-root, volume group 10001 (the image's user)")
    check_hardened(c, pod, "collisiond container")

    headless = [s for s in by_kind(docs, "Service") if s["spec"].get("clusterIP") == "None"]
    check([s["metadata"]["name"] for s in headless] == [spec["serviceName"]], "headless Service is the serviceName")
    (pdb,) = by_kind(docs, "PodDisruptionBudget")
    check(pdb["spec"]["selector"]["matchLabels"].items() <= labels.items(), "the PDB selects the shards")

    (cm,) = [d for d in by_kind(docs, "ConfigMap") if d["metadata"]["name"] == "collisiond-flags"]
    check(c["envFrom"][0]["configMapRef"]["name"] == "collisiond-flags", "the shards read the flags ConfigMap")
    unknown = set(cm["data"]) - envs
    check(not unknown, "ConfigMap variables the daemon does not know: %s" % sorted(unknown))
    check(all(isinstance(v, str) for v in cm["data"].values()), "ConfigMap values are strings")
    for e in c.get("env", []):
        check(e["name"] in envs, "env %s is not a daemon variable" % e["name"])
    check_memory(cm, c)

    shard_svcs = {s["metadata"]["name"]: s for s in by_kind(docs, "Service") if s["spec"].get("clusterIP") != "None"}
    want = {"collisiond-shard-%d" % i: "collisiond-%d" % i for i in range(spec["replicas"])}
    check(set(shard_svcs) == set(want), "one Service per shard: %s" % sorted(shard_svcs))
    for name, podname in want.items():
        if name in shard_svcs:
            check(shard_svcs[name]["spec"]["selector"] == {"statefulset.kubernetes.io/pod-name": podname},
                  "%s selects pod %s" % (name, podname))
    upstreams, listens = nginx_conf("deploy/k8s/router-nginx.conf")
    check(upstreams == ["%s:7878" % n for n in sorted(want)], "router-nginx.conf hashes the shard Services")

    (dep,) = by_kind(router_docs, "Deployment")
    rpod = dep["spec"]["template"]["spec"]
    (rc,) = rpod["containers"]
    cports = {p["containerPort"] for p in rc["ports"]}
    check(set(listens) == cports, "router container ports %s = nginx.conf listens %s" % (sorted(cports), listens))
    (svc,) = by_kind(router_docs, "Service")
    check({p["port"] for p in svc["spec"]["ports"]} == set(listens), "router Service ports = nginx.conf listens")
    vols = {v["name"]: v for v in rpod["volumes"]}
    mount = next(m for m in rc["volumeMounts"] if m["mountPath"] == "/etc/nginx/nginx.conf")
    check(vols[mount["name"]]["configMap"]["name"] == gen["name"], "the router mounts the generated ConfigMap")
    check(rc["readinessProbe"]["httpGet"]["path"] == "/readyz" and rc["livenessProbe"]["httpGet"]["path"] == "/healthz",
          "router probes")
    for kind in ("requests", "limits"):
        check({"cpu", "memory"} <= set(rc["resources"].get(kind, {})), "router resources.%s" % kind)
    check(len(by_kind(router_docs, "PodDisruptionBudget")) == 1, "router PodDisruptionBudget")

    check_hardened(rc, rpod, "router container")
    check(all(p > 1024 for p in listens), "the router listens above 1024 only: %s" % listens)
    check(PINNED.match(rc["image"]) is not None, "router image pinned by digest: %s" % rc["image"])
    writable = [m["mountPath"] for m in rc["volumeMounts"]
                if "emptyDir" in vols.get(m["name"], {}) and not m.get("readOnly")]
    check(sorted(writable) == ["/tmp", "/var/cache/nginx"], "router emptyDir mounts: %s" % writable)
    with open(os.path.join(REPO, "deploy/k8s/router-nginx.conf")) as f:
        conf = f.read()
    paths = re.findall(r"^\s*(?:pid|\w+_temp_path)\s+(\S+);", conf, re.M)
    check(len(paths) == 6, "router-nginx.conf sets the pid file and the five temporary paths")
    for path in paths:
        check(any(path.startswith(w + "/") for w in writable), "router-nginx.conf writes %s outside its volumes" % path)
    return labels, rc["image"]


def check_compose(envs, router_image):
    (doc,) = load_all("deploy/compose.yml")
    services = doc["services"]
    shards = sorted(s for s in services if s.startswith("collisiond-"))
    check(shards == ["collisiond-0", "collisiond-1", "collisiond-2"], "compose: three shards")
    vols = [services[s]["volumes"][0] for s in shards]
    check(vols == ["%s:/var/lib/collisiond" % s for s in shards], "compose: one volume per shard")
    check(set(doc["volumes"]) == set(shards), "compose: the volumes are declared")
    for s in shards:
        check(set(services[s].get("environment", {})) <= envs, "compose: %s environment" % s)
    check("./nginx/compose.conf:/etc/nginx/nginx.conf:ro" in services["router"]["volumes"],
          "compose: the router mounts nginx/compose.conf")
    upstreams, listens = nginx_conf("deploy/nginx/compose.conf")
    check(upstreams == ["%s:7878" % s for s in shards], "compose.conf hashes the compose shards")
    check(listens == [7878, 7879, 7880, 7881], "compose.conf listens on 7878-7881")
    check(set(services["router"]["depends_on"]) == set(shards), "compose: the router waits for the shards")
    for s_ in shards:
        hc = services[s_].get("healthcheck", {})
        check(hc.get("test", [])[-1:] == ["/readyz"], "compose: %s's health check is /readyz" % s_)
        check(services["router"]["depends_on"][s_].get("condition") == "service_healthy",
              "compose: the router waits until %s is healthy" % s_)
    check(services["router"]["image"] == router_image, "compose and Kubernetes run the same router image")
    check(services["router"].get("read_only") is True and services["router"].get("cap_drop") == ["ALL"]
          and services["router"].get("user") == "101:101", "compose: the router is hardened")
    check(PINNED.match(services["prometheus"]["image"]) is not None, "compose: Prometheus pinned by digest")
    version_file = os.path.join(REPO, "VERSION")
    if os.path.exists(version_file):
        with open(version_file) as f:
            version = f.read().strip()
        for s_ in shards:
            check(services[s_]["build"]["args"]["VERSION"] == version, "compose: build arg VERSION = the VERSION file")
    prom = services["prometheus"]["volumes"]
    check(any(v.startswith("./prometheus/prometheus.yml:") for v in prom), "compose: Prometheus config")


def check_dockerfile():
    with open(os.path.join(REPO, "Dockerfile")) as f:
        text = f.read()
    image = re.search(r"^ARG DEBIAN_IMAGE=(\S+)$", text, re.M)
    check(image and PINNED.match(image.group(1)) and image.group(1).startswith("debian:bookworm-slim@"),
          "Dockerfile: debian:bookworm-slim pinned by digest")
    froms = re.findall(r"^FROM (\S+)", text, re.M)
    check(froms and all(f == "${DEBIAN_IMAGE}" for f in froms), "Dockerfile: every stage FROM the pinned image")
    for key in ("title", "description", "version", "revision", "created", "source", "licenses"):
        check(re.search(r"org\.opencontainers\.image\.%s=" % key, text), "Dockerfile: label %s" % key)
    check('org.opencontainers.image.licenses="MIT"' in text, "Dockerfile: licenses MIT")
    check('org.opencontainers.image.version="${VERSION}"' in text and "ARG VERSION" in text,
          "Dockerfile: the version label from the VERSION build arg")
    check(re.search(r"^COPY Makefile VERSION ", text, re.M), "Dockerfile: the build stage copies VERSION")
    check(build_packages(text) == make_deb_pkgs(), "Dockerfile: the build stage installs the Makefile's DEB_PKGS")
    check_build_context(text)


def build_packages(dockerfile):
    """The packages the build stage's first apt-get install names."""
    stage = dockerfile.split(" AS build", 1)[-1]
    m = re.search(r"apt-get install -y --no-install-recommends((?:[^&]|\\\n)*)&&", stage)
    return set(m.group(1).replace("\\", " ").split()) if m else set()


def make_deb_pkgs():
    """`DEB_PKGS` of the Makefile: what `make deps` installs to build and run."""
    with open(os.path.join(REPO, "Makefile")) as f:
        m = re.search(r"^DEB_PKGS := ((?:.*\\\n)*.*)$", f.read(), re.M)
    return set(m.group(1).replace("\\", " ").split()) if m else {"(no DEB_PKGS)"}


def check_build_context(dockerfile):
    """Every file a COPY takes from the build context exists and is one
    .dockerignore lets in. The file is a whitelist (`*`, then `!path` for
    each path let in), the form this repository keeps it in."""
    with open(os.path.join(REPO, ".dockerignore")) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    check(lines[:1] == ["*"], ".dockerignore: a whitelist that starts with *")
    admitted = [l[1:].rstrip("/") for l in lines if l.startswith("!")]
    for line in re.findall(r"^COPY (?!--from)(.+)$", dockerfile, re.M):
        for src in line.split()[:-1]:
            src = src.rstrip("/")
            check(os.path.exists(os.path.join(REPO, src)), "Dockerfile: COPY %s exists" % src)
            check(any(src == a or src.startswith(a + "/") for a in admitted),
                  "Dockerfile: COPY %s is in the build context (.dockerignore)" % src)


def check_prometheus(families, shard_labels):
    (conf,) = load_all("deploy/prometheus/prometheus.yml")
    job = conf["scrape_configs"][0]
    targets = job["static_configs"][0]["targets"]
    check(targets == ["collisiond-%d:7878" % i for i in range(3)], "Prometheus scrapes every shard")
    (k8s,) = load_all("deploy/prometheus/prometheus-k8s.yml")
    kjob = k8s["scrape_configs"][0]
    for name, j in (("prometheus.yml", job), ("prometheus-k8s.yml", kjob)):
        auth = j.get("authorization", {})
        check(auth.get("type") == "Bearer" and auth.get("credentials_file"), "%s: a bearer token from a file" % name)
    (sd,) = kjob["kubernetes_sd_configs"]
    check(sd["role"] == "pod", "prometheus-k8s.yml: pod discovery")
    (sel,) = sd["selectors"]
    want = dict(kv.split("=") for kv in sel["label"].split(","))
    check(sel["role"] == "pod" and want.items() <= shard_labels.items() and want.get("app.kubernetes.io/component")
          == "shard", "prometheus-k8s.yml selects the shards' pods by their labels: %s" % sel["label"])
    keep = [r for r in kjob["relabel_configs"] if r.get("action") == "keep"]
    check([r["source_labels"] for r in keep] == [["__meta_kubernetes_pod_container_port_name"]]
          and keep[0]["regex"] == "http", "prometheus-k8s.yml keeps the http port only")
    (rules,) = load_all("deploy/prometheus/alerts.yml")
    used = set()
    for rule in rules["groups"][0]["rules"]:
        check("for" in rule and rule.get("annotations", {}).get("summary"), "alert %s: for and summary" % rule["alert"])
        for name in re.findall(r"\b(collisiond_[a-z_]+)", rule["expr"]):
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            used.add(base)
            check(name in families or base in families, "alert %s uses %s, which the daemon does not export"
                  % (rule["alert"], name))
        if "collisiond_requests_total" in rule["expr"] or "collisiond_request_duration" in rule["expr"]:
            check("sum by (" in rule["expr"], "alert %s sums the request series over their labels" % rule["alert"])
    # What docs/API.md, section 12, says to alert on.
    for family in ("collisiond_journal_failed", "collisiond_gjk_iteration_limit_total",
                   "collisiond_requests_shed_total", "collisiond_fallback_actions_total"):
        check(family in used, "an alert on %s" % family)
    check(any('reason="epa_iteration_limit"' in r["expr"] for r in rules["groups"][0]["rules"]),
          "an alert on the EPA iteration limit")


def main(argv):
    if len(argv) != 2:
        print("usage: check_manifests.py path/to/collisiond", file=sys.stderr)
        return 2
    envs = env_names(argv[1])
    check(len(envs) > 10, "could not read the variables from collisiond --help")
    shard_labels, router_image = check_k8s(envs)
    check_compose(envs, router_image)
    check_dockerfile()
    check_prometheus(exported_families(argv[1]), shard_labels)
    print("manifests: %s" % ("%d failures" % len(failures) if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
