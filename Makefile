# pinproxy — the README's commands. Every target installs what it needs first,
# so a fresh Debian 12 machine with Swift only needs `make run` or `make test`.

SWIFT ?= swift
PREFIX ?= /usr/local
DESTDIR ?=
# Debian packages the build and the tests need (checked with dpkg, installed when missing).
BUILD_PACKAGES := libevent-dev libssl-dev pkg-config
TEST_PACKAGES := curl openssl python3
ARGS ?=

.PHONY: all deps build release run test bench fuzz soak clean

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

# Everything `make test` runs: unit tests, real-handshake tests and loopback end-to-end tests.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Benchmarks against haproxy, nginx and stunnel on loopback (bounded; not part of `make test`).
bench: release
	bench/run.sh

# libFuzzer harnesses over the parsers (bounded; not part of `make test`).
fuzz: deps
	Fuzz/run.sh

# Mixed load for up to 10 minutes, sampling RSS and descriptors (not part of `make test`).
soak: release
	bench/soak.sh

clean:
	rm -rf .build
