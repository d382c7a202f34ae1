#!/usr/bin/env python3
"""Static checks of the deployment files in deploy/ (needs PyYAML: Debian's
python3-yaml; `make cluster-test` does not run this):

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
  every labelled family appears).
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


def check_compose(envs):
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
    prom = services["prometheus"]["volumes"]
    check(any(v.startswith("./prometheus/prometheus.yml:") for v in prom), "compose: Prometheus config")


def check_prometheus(families):
    (conf,) = load_all("deploy/prometheus/prometheus.yml")
    targets = conf["scrape_configs"][0]["static_configs"][0]["targets"]
    check(targets == ["collisiond-%d:7878" % i for i in range(3)], "Prometheus scrapes every shard")
    (rules,) = load_all("deploy/prometheus/alerts.yml")
    for rule in rules["groups"][0]["rules"]:
        for name in re.findall(r"\b(collisiond_[a-z_]+)", rule["expr"]):
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            check(name in families or base in families, "alert %s uses %s, which the daemon does not export"
                  % (rule["alert"], name))


def main(argv):
    if len(argv) != 2:
        print("usage: check_manifests.py path/to/collisiond", file=sys.stderr)
        return 2
    envs = env_names(argv[1])
    check(len(envs) > 10, "could not read the variables from collisiond --help")
    check_k8s(envs)
    check_compose(envs)
    check_prometheus(exported_families(argv[1]))
    print("manifests: %s" % ("%d failures" % len(failures) if failures else "all checks passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
