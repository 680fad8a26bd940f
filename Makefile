# pinproxy — the README's commands. Every target installs what it needs first,
# so a fresh Debian 12 machine with Swift only needs `make run` or `make test`.

SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
# Debian packages the build and the tests need (checked with dpkg, installed when missing).
# publicsuffix: /usr/share/publicsuffix, read by the daemon (a wildcard never covers a public suffix).
# zlib1g-dev: zlib's header, for `pinproxy tail` on rotated .gz logs.
BUILD_PACKAGES := libevent-dev libssl-dev pkg-config publicsuffix zlib1g-dev
# systemd: systemd-analyze, for the unit checks (Tests/Tools/check-systemd-units.sh).
# golang-go, default-jre-headless: Go's crypto/x509 and Java's PKIX validator, the
# independent checks that the interception CA's name constraints hold; also the Go
# and Java HTTPS clients run through CONNECT (Tests/.../EndToEnd/HTTPSClients).
# python3-requests: Python's most used HTTPS client, run through CONNECT by those suites.
# git: git clone over HTTPS through CONNECT, from a git http-backend origin, in those suites.
# man-db: `man -l`, which the install tests render the man pages with.
TEST_PACKAGES := curl openssl python3 systemd golang-go default-jre-headless python3-requests git man-db
ARGS ?=

.PHONY: all deps build release run test test-sanitizers bench fuzz soak install uninstall clean

all: build

# Install the Debian packages that are missing (apt-get update only when something is).
deps:
	@missing=""; for p in $(BUILD_PACKAGES) $(TEST_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Build (release) and run the daemon in the foreground on its built-in defaults
# (forward proxy on 127.0.0.1:8080) or on ARGS, e.g. make run ARGS="--config my.json".
run: release
	./.build/release/pinproxy run $(ARGS)

# Everything `make test` runs: unit tests, real-handshake tests and loopback
# end-to-end tests, then the same under AddressSanitizer (all but the suites
# that drive the separate daemon binary) and the multi-loop suites under
# ThreadSanitizer. Sanitizer builds live in their own scratch folders.
test: deps
	$(SWIFT) build --build-tests
	$(RUN_TESTS) $(SWIFT) test --skip-build
	$(MAKE) --no-print-directory test-sanitizers

# Repeats a failing run's failures at its end, where CI's tail shows them.
RUN_TESTS := Tests/Tools/run-tests.sh

SANITIZER_SKIP := Service|MakeInstall|SystemdUnitFile
MULTI_LOOP_SUITES := EndToEnd|FaultTests|ViolationLogFile

test-sanitizers:
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build/asan
	# Slow (DWARF) unwinding for allocations: stacks through libcrypto, which
	# has no frame pointers, reach the frames Tests/lsan.supp names; 16 frames
	# (not 30) keep its cost to about 3 more minutes.
	ASAN_OPTIONS=fast_unwind_on_malloc=0:malloc_context_size=16 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan.supp $(RUN_TESTS) $(SWIFT) test --skip-build --sanitize=address \
	  --scratch-path .build/asan --skip '$(SANITIZER_SKIP)|$(MULTI_LOOP_SUITES)'
	# In-process daemons may still hold sockets when the runner exits: leak
	# checking is meaningless there, use-after-free and overflow checks are not.
	ASAN_OPTIONS=detect_leaks=0 $(RUN_TESTS) $(SWIFT) test --skip-build --sanitize=address \
	  --scratch-path .build/asan --filter '$(MULTI_LOOP_SUITES)'
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan
	TSAN_OPTIONS=halt_on_error=1 $(RUN_TESTS) $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build/tsan \
	  --filter '$(MULTI_LOOP_SUITES)'

# Benchmarks against haproxy, nginx and stunnel on loopback (bounded; not part of `make test`);
# the last phase is bench/connect.sh (CONNECT=0 skips it).
bench: release
	bench/run.sh

# Only that phase: HTTPS clients through CONNECT, pinproxy's blind tunnel and interception
# against squid (CONNECT, ssl_bump) and mitmdump.
.PHONY: bench-connect bench-custom
bench-connect: release
	bench/connect.sh

# What policy "custom" adds to a fresh handshake, and a slow checker beside a load.
bench-custom: release
	bench/custom-check.sh

# libFuzzer harnesses over the parsers (bounded; not part of `make test`).
# FUZZ_SECONDS per harness (default 60); each also stops at 10M executions.
# `make fuzz FUZZ_SECONDS=1800` is issue 7's goal: 10M executions or 30 minutes.
FUZZ_SECONDS ?= 60
fuzz: deps
	Fuzz/run.sh $(FUZZ_SECONDS)

# Mixed load for up to 10 minutes, sampling RSS and descriptors (not part of `make test`).
soak: release
	bench/soak.sh

# `make install` builds the release binary and installs it with the units, the
# example config and the logrotate rule; DESTDIR stages into a package root.
#   $(PREFIX)/bin/pinproxy                       0755
#   $(PREFIX)/lib/systemd/system/pinproxy.{service,socket}
#                                                0644, ExecStart= rewritten to $(PREFIX)/bin;
#                                                systemd reads /usr/local/lib/systemd/system
#                                                and /usr/lib/systemd/system, /etc/systemd/system
#                                                stays the administrator's (overrides).
#   $(PREFIX)/share/doc/pinproxy/README.md       0644, the units' Documentation=
#   $(PREFIX)/share/doc/pinproxy/{configuration,http,logs}.md
#                                                0644, the user reference (docs/)
#   $(PREFIX)/share/man/man8/pinproxy.8, pinproxy-ca.8, man5/pinproxy.json.5
#                                                0644, plain man(7) roff, no build step
#   /etc/pinproxy/pinproxy.json                  0644, only when absent: never overwrites a config
#   /etc/logrotate.d/pinproxy                    0644
# BINARY installs a binary built elsewhere (a packaging build; the tests install
# the debug build) and then skips the release build.
RELEASE_BINARY := .build/release/pinproxy
BINARY ?= $(RELEASE_BINARY)
UNIT_DIR = $(PREFIX)/lib/systemd/system
DOC_DIR = $(PREFIX)/share/doc/pinproxy
MAN5_DIR = $(PREFIX)/share/man/man5
MAN8_DIR = $(PREFIX)/share/man/man8
REFERENCE_DOCS := configuration.md http.md logs.md metrics.md
MAN8_PAGES := pinproxy.8 pinproxy-ca.8
MAN5_PAGES := pinproxy.json.5
INSTALLED_FILES = $(DESTDIR)$(PREFIX)/bin/pinproxy \
	$(DESTDIR)$(UNIT_DIR)/pinproxy.service $(DESTDIR)$(UNIT_DIR)/pinproxy.socket \
	$(DESTDIR)$(DOC_DIR)/README.md $(addprefix $(DESTDIR)$(DOC_DIR)/,$(REFERENCE_DOCS)) \
	$(addprefix $(DESTDIR)$(MAN8_DIR)/,$(MAN8_PAGES)) $(addprefix $(DESTDIR)$(MAN5_DIR)/,$(MAN5_PAGES)) \
	$(DESTDIR)/etc/logrotate.d/pinproxy

install: $(if $(filter $(RELEASE_BINARY),$(BINARY)),release)
	install -d -m 0755 $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(UNIT_DIR) $(DESTDIR)$(DOC_DIR) \
	  $(DESTDIR)$(MAN5_DIR) $(DESTDIR)$(MAN8_DIR) $(DESTDIR)/etc/pinproxy $(DESTDIR)/etc/logrotate.d
	install -m 0755 $(BINARY) $(DESTDIR)$(PREFIX)/bin/pinproxy
	for unit in pinproxy.service pinproxy.socket; do \
	  sed -e 's|/usr/local/bin/pinproxy|$(PREFIX)/bin/pinproxy|g' \
	      -e 's|/usr/local/share/doc/pinproxy|$(PREFIX)/share/doc/pinproxy|g' systemd/$$unit > $(DESTDIR)$(UNIT_DIR)/$$unit && \
	  chmod 0644 $(DESTDIR)$(UNIT_DIR)/$$unit || exit 1; \
	done
	install -m 0644 README.md $(DESTDIR)$(DOC_DIR)/README.md
	install -m 0644 $(addprefix docs/,$(REFERENCE_DOCS)) $(DESTDIR)$(DOC_DIR)/
	install -m 0644 $(addprefix docs/,$(MAN8_PAGES)) $(DESTDIR)$(MAN8_DIR)/
	install -m 0644 $(addprefix docs/,$(MAN5_PAGES)) $(DESTDIR)$(MAN5_DIR)/
	install -m 0644 etc/logrotate.d/pinproxy $(DESTDIR)/etc/logrotate.d/pinproxy
	@if [ -e $(DESTDIR)/etc/pinproxy/pinproxy.json ]; then \
	  echo "make: keeping the existing $(DESTDIR)/etc/pinproxy/pinproxy.json (example: etc/pinproxy/pinproxy.json)"; \
	else \
	  echo "install -m 0644 etc/pinproxy/pinproxy.json $(DESTDIR)/etc/pinproxy/pinproxy.json"; \
	  install -m 0644 etc/pinproxy/pinproxy.json $(DESTDIR)/etc/pinproxy/pinproxy.json; \
	fi
	@echo "make: installed. Then: systemctl daemon-reload && systemctl enable --now pinproxy.service"

# Removes what `install` put there, except the configuration (like apt's remove, not purge).
uninstall:
	rm -f $(INSTALLED_FILES)
	rmdir $(DESTDIR)$(DOC_DIR) 2>/dev/null || true
	@if [ -e $(DESTDIR)/etc/pinproxy/pinproxy.json ]; then echo "make: kept $(DESTDIR)/etc/pinproxy/pinproxy.json"; fi

clean:
	rm -rf .build
