# The web inspector in headless Chromium (tests/inspector/run.sh; docs/INSPECTOR.md):
# Debian's chromium (and its driver), playwright-core and eslint from npm,
# pinned by tests/inspector/package-lock.json.
INSPECTOR_DEB_PKGS := chromium chromium-driver
.PHONY: inspector-test
inspector-test: deps
	@$(MAKE) --no-print-directory deps DEB_PKGS="$(INSPECTOR_DEB_PKGS)"
	@command -v npm >/dev/null || $(MAKE) --no-print-directory deps DEB_PKGS="nodejs npm"
	@$(MAKE) --no-print-directory -j$(JOBS) $(DAEMON)
	tests/inspector/run.sh $(DAEMON) $(BUILD)/inspector
