# Shoal: the two set-up commands.
#   make run   installs missing system packages, builds, starts a node with embedded defaults
#   make test  installs missing system packages, builds, runs the whole test suite
SWIFT ?= swift
APT_PACKAGES := libsqlite3-dev libssl-dev zlib1g-dev duktape-dev libavahi-client-dev avahi-daemon dbus-daemon iproute2 nftables util-linux chromium
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
RUN_ARGS ?=

# What `make deb` and packaging/test-deb need besides: dpkg-shlibdeps, a man page, lintian.
DEB_APT_PACKAGES := dpkg-dev help2man lintian curl procps systemd

.PHONY: deps build run test release deb deb-test bench clean

# Installs the apt packages in $(1) that are missing.
define apt_install
	@missing=""; \
	for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:$$missing"; \
		$(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call apt_install,$(APT_PACKAGES))
	@# schemathesis (PyPI) for scripts/api-fuzz; its test skips without it.
	@python3 -c 'import schemathesis' 2>/dev/null || python3 -m pip install -q schemathesis || echo "schemathesis not installed: the api-fuzz test will skip"

build: deps
	$(SWIFT) build

# The release node as users deploy it (scripts/release/README.md): Swift's runtime and
# Foundation linked in (one file to copy to each host), every function in its own section
# so that the linker can place the ones a node runs side by side (link-order.txt,
# text-layout.ld), relative relocations packed, no exported symbols. An idle node maps
# half the code pages it did. Built with other flags, `.build/release` rebuilds in full.
RELEASE_FLAGS := --static-swift-stdlib \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections \
	-Xswiftc -use-ld=lld \
	-Xlinker -z -Xlinker pack-relative-relocs \
	-Xlinker --version-script=$(CURDIR)/scripts/release/exports.map \
	-Xlinker --symbol-ordering-file=$(CURDIR)/scripts/release/link-order.txt \
	-Xlinker --no-warn-symbol-ordering \
	-Xlinker -T -Xlinker $(CURDIR)/scripts/release/text-layout.ld

RELEASE_LINK_INPUTS := scripts/release/link-order.txt scripts/release/text-layout.ld scripts/release/exports.map

# SwiftPM does not see the link inputs above change: an older binary is removed to relink.
release: deps
	@for f in $(RELEASE_LINK_INPUTS); do [ ! -e .build/release/shoal ] || [ ! "$$f" -nt .build/release/shoal ] || rm -f .build/release/shoal; done
	$(SWIFT) build -c release --product shoal $(RELEASE_FLAGS)

# The Debian package (packaging/README.md): dist/shoal_<version>_<arch>.deb from the
# release binary, with the systemd units and the packaged config.
deb: release
	$(call apt_install,$(DEB_APT_PACKAGES))
	packaging/build-deb .build/release/shoal dist

# Inspects the package, installs it on this machine and purges it again.
deb-test: deb
	packaging/test-deb dist/shoal_$$(.build/release/shoal --version)_$$(dpkg --print-architecture).deb

run: build
	$(SWIFT) run --skip-build shoal serve $(RUN_ARGS)

# The suites that drive other processes (shoal nodes in network namespaces with the
# chaos run, schemathesis, Chromium) run after the rest: run beside the several hundred
# in-process nodes on a two-core machine they starved them past their timing bounds.
PROCESS_SUITES := NetnsMeshTests|ChaosHostsTests|APIFuzzScriptTests|BrowserAppTests|AdminUIBrowserTests

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip '$(PROCESS_SUITES)'
	$(SWIFT) test --skip-build --filter '$(PROCESS_SUITES)'

bench: deps
	cd Benchmarks && $(SWIFT) package benchmark

clean:
	rm -rf .build Benchmarks/.build
