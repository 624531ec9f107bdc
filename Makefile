# Fulcrum: `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY := .venv/bin/python
PYTEST := .venv/bin/pytest
export FULCRUM_DEBUG ?= 1

.PHONY: help deps deps-image deps-test db migrate openapi build build-agents build-console demo \
        test check lint-python lint-django lint-go lint-console test-unit test-api test-netns test-browser test-vm test-compose lint bench bench-l4 bench-dllc bench-failover bench-console bench-api image debs test-packaging test-image clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  make %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

deps: ## install what the appliance needs to run here (apt, venv, npm: appliance/dev/packages.txt)
	@appliance/dev/deps.sh demo

deps-image: ## make deps, plus what building the packages and images needs (mmdebstrap, GRUB, Packer, lintian)
	@appliance/dev/deps.sh demo image

deps-test: ## make deps-image, plus what every test tier needs (Chromium, QEMU, socat, wrk, httperf, ...)
	@appliance/dev/deps.sh demo test image

db: deps ## start the private PostgreSQL cluster under .state/pg
	@$(PY) -m tests.harness.pg start >/dev/null

migrate: db ## apply database migrations
	@cd api && ../$(PY) manage.py migrate --no-input -v 0

openapi: deps ## regenerate api/openapi.yaml, the console's typed client and catalogue of choices, and the Go client, from the code
	@cd api && ../$(PY) manage.py spectacular --file openapi.yaml --validate --fail-on-warn
	@cd api && ../$(PY) -m fulcrum.console_catalog openapi.yaml ../webui/src/lib/api/catalog.gen.ts
	@cd webui && npm run --silent gen:api
	@$(MAKE) -s -C agents generate

build: build-agents build-console ## build the Go binaries and the console

build-agents: ## build the Go binaries into agents/bin
	@$(MAKE) -s -C agents build

build-console: deps ## build the console into webui/dist
	@echo "console: building webui/dist"
	@cd webui && npm run --silent build

demo: deps build ## run the appliance locally on a lab of network namespaces; Ctrl-C stops it
	@$(PY) appliance/dev/demo.py

test: deps-test build ## run every test tier (unit, API, netns, browser, compose, VM, packages, image) in three lanes
	@tests/run-tiers.sh --all

check: deps-test build ## the fast loop: lint then unit, beside the API tier (under 5 min warm)
	@tests/run-tiers.sh lint unit + api

test-unit: deps-test build ## compiler + golden configs checked by haproxy, Go unit tests, console unit tests
	@tests/run-tiers.sh unit

test-api: deps-test ## API tests on the real PostgreSQL, OpenAPI drift, the fulcrum CLI against the real API
	@tests/run-tiers.sh api

test-netns: deps-test build ## REST -> agent -> real HAProxy -> real servers in network namespaces
	@tests/run-tiers.sh netns

test-browser: deps-test build ## the console flow in Debian's Chromium (Playwright) against the real stack
	@tests/run-tiers.sh browser

test-vm: deps-test ## the QEMU tier: IPVS, ip_vs_dllc, keepalived in a guest made from the appliance rootfs
	@tests/run-tiers.sh vm

test-compose: ## docker-compose.yml is valid (compose-spec loader)
	@tests/run-tiers.sh compose

lint: lint-python lint-django lint-go lint-console ## ruff, Django checks, migrations, OpenAPI and the clients generated from it up to date, gofmt/vet, eslint/tsc

lint-python: deps
	@.venv/bin/ruff check . && .venv/bin/ruff format --check .

lint-django: db
	@cd api && ../$(PY) manage.py check --fail-level WARNING && ../$(PY) manage.py makemigrations --check --dry-run >/dev/null

lint-go:
	@$(MAKE) -s -C agents lint

lint-console: deps
	@cd webui && npm run --silent lint && npm run --silent check:api

bench: deps-test build ## WebBench mix: Fulcrum-compiled HAProxy vs the direct path (medians, ratios)
	@$(PY) -m tests.bench.webbench

bench-l4: deps-test ## layer 4 in the QEMU guest: IPVS NAT and DR vs HAProxy vs direct (~11 min, ratios)
	@tests/bench/l4bench.sh

bench-dllc: deps-test build ## seed 002: RR/WRR/LC/WLC/DLLC through HAProxy to two servers of unequal capacity (~20 min)
	@$(PY) -m tests.bench.dllcbench

bench-failover: deps-test build ## HA: failover gap by VRRP advert interval (1 s, 0.2 s, 0.1 s), real API + agents in netns (~15 min)
	@$(PY) -m tests.bench.failover

bench-console: deps-test build-console ## the console with 1,000 services in Chromium: load and filter a page vs a static page (~2 min)
	@$(PY) -m tests.bench.consolebench

bench-api: deps-test build-agents ## the control plane at 100, 1,000 and 10,000 services: single writes, 5,000 rules in one call, apply (~30 min)
	@$(PY) -m tests.bench.apibench

debs: deps-image ## the Debian packages for trixie into images/.build/debs (appliance/debian/build.sh; ~2 min)
	@appliance/debian/build.sh

test-packaging: deps-image ## the .debs: build, lintian, install in a trixie root, run the API there (root; ~5 min)
	@tests/run-tiers.sh packaging

test-image: deps-test ## build the image, boot it, set it up on serial, send traffic, upgrade it (root; ~35 min)
	@tests/run-tiers.sh image

image: debs ## the appliance: .debs, then the live ISO, qcow2 and OVA in images/.build/out (root; ~12 min)
	@images/build.sh

clean: ## remove build outputs and local state (stops the private PostgreSQL)
	-@$(PY) -m tests.harness.pg stop 2>/dev/null
	rm -rf .state agents/bin webui/dist tests/artifacts
