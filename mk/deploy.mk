# The deployment (deploy/, docs/DEPLOY.md): the files against their
# validators, and the cluster behind the router, run for real.

# Three daemons and the nginx router of deploy/nginx on loopback, run for real
# (tests/cluster/run.py; docs/DEPLOY.md).
# nginx and its stream module for the router (Debian starts nginx on port 80
# once installed: `systemctl disable --now nginx` on a machine that should not).
CLUSTER_DEB_PKGS := nginx libnginx-mod-stream

.PHONY: cluster-test
cluster-test: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(CLUSTER_DEB_PKGS)"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	$(PYTHON) tests/cluster/run.py $(DAEMON)

# The deployment files against the Kubernetes OpenAPI and compose-spec
# schemas (npm, pinned in tests/deploy/package-lock.json), promtool, nginx -t
# and tests/cluster/check_manifests.py (tests/deploy/run.sh; docs/DEPLOY.md).
.PHONY: deploy-check
deploy-check: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(CLUSTER_DEB_PKGS) python3-yaml"
	@# A machine's own node (nodesource's nodejs bundles npm) is used as it is.
	@command -v npm >/dev/null || $(MAKE) --no-print-directory deps DEB_PKGS="nodejs npm"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	tests/deploy/run.sh $(DAEMON)
