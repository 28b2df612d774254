# actfuzz — build, run and test. Needs only Go (and gcc/apt-get for the ns-3 subject).
GO      ?= go
# The recipes use bash (arrays in test's list of failed steps).
SHELL   := /bin/bash
BIN     ?= bin/actfuzz
PKGS    := ./...
# RACE_PKGS: the concurrent packages (coordinator, executors, worker
# supervision, the cluster coordinator and worker hosts), tested again
# under the race detector by `make test`. With the oracles on by default
# ./act took 584 s of race-detected tests on an idle 2-core machine, near
# go test's default 10 minutes: hence -timeout.
RACE_PKGS := ./act ./act/cluster ./cli
# REVISION stamps seeds with the commit that wrote them (corpus.ProgramVersion).
REVISION ?= $(shell git describe --always --dirty 2>/dev/null)
LDFLAGS := -X github.com/actfuzz/actfuzz/corpus.buildRevision=$(REVISION)
# TALK runs a go build, vet or test and says what it does at least every
# 10 s: modules downloaded, packages compiled, the package being tested
# (a first build on empty caches takes minutes; issue 51).
TALK    := internal/tools/talk.sh

.PHONY: all build install run test test-under-load vet fmt-check bench clean custom-ccai-test e2e linux-test nats toxiproxy cluster-test usecase-test

all: build

build:
	@$(TALK) "make build" $(GO) build -v -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/actfuzz

## install: actfuzz by name: go install (stamped with REVISION, as build)
## into $(go env GOBIN), else the first $(go env GOPATH)/bin, with the ns-3
## driver beside it when `make ns3` built one; says where it went and
## whether that directory is on PATH. Without it, run bin/actfuzz (make
## build): the commands actfuzz prints start with the name that works.
install:
	$(GO) install -ldflags "$(LDFLAGS)" ./cmd/actfuzz
	@dir=$$($(GO) env GOBIN); if [ -z "$$dir" ]; then gp=$$($(GO) env GOPATH); dir=$${gp%%:*}/bin; fi; \
	if [ -x $(NS3_DRIVER) ]; then install -m 0755 $(NS3_DRIVER) "$$dir/" && echo "make install: $$dir/$(notdir $(NS3_DRIVER))"; fi; \
	echo "make install: $$dir/actfuzz"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "make install: $$dir is not on PATH: add it (export PATH=\"$$dir:\$$PATH\") or run $$dir/actfuzz";; esac

## run: the main job: a short ACT campaign (CUBIC and Reno, the paper's
## default P and S and its use-case conditions) on the native simulator,
## RUN_BUDGET simulations (empty: the campaign's budget, 2,000) into a new
## out/make-run-<UTC time>. A budget, not a duration: the same simulations
## and findings on every machine (a slower one takes longer; the status
## line says how long). RUN_MAX_DURATION is only a safety bound: a run it
## ends says so ("capped") and how to resume. Findings are not a failure
## of `make run`: exit 1 only means "found"; 2 (bad input), 3 (I/O) and
## 130 (interrupted) are. docs/first-run.md: times measured.
RUN_BUDGET ?=
RUN_MAX_DURATION ?= 30m
run:
	@echo "make run: building $(BIN) (on empty caches a first build takes minutes: docs/first-run.md)"
	@$(MAKE) --no-print-directory build
	@out=out/make-run-$$(date -u +%Y%m%dT%H%M%SZ); \
	echo "make run: an ACT campaign of $(or $(RUN_BUDGET),$$(sed -n 's/^budget: *//p' examples/make-run.yaml)) simulations (examples/make-run.yaml; at most $(RUN_MAX_DURATION)) into $$out"; \
	s=0; $(BIN) run examples/make-run.yaml $(if $(RUN_BUDGET),--budget $(RUN_BUDGET)) --duration $(RUN_MAX_DURATION) --out $$out || s=$$?; \
	if [ $$s -le 1 ]; then echo "make run: done (exit $$s); findings: $$out/findings.md, coverage: $$out/coverage/table.md"; \
	  echo "make run: report: $$out/report/index.html"; fi; \
	[ $$s -le 1 ]

## test: static checks and every test (what CI runs). Every step runs,
## even after one fails, and the failures are listed at the end; each
## `go test` has a -timeout that fits CI's limit.
TEST_TIMEOUT ?= 30m
# UNDER_LOAD_LATER=1 (.ci/run, which runs make test-under-load next): the
# plain step leaves the under-load selections to test-under-load, so that
# CI runs no test twice: the tests of ./act and ./act/cluster that
# UNDER_LOAD_ACT and UNDER_LOAD_CLUSTER select (by exact name, so that a
# test of the same words in another package still runs) and ./netenv/linux.
# Except UNDER_LOAD_SHORT_DIFFERS: run with -short under load (one worker
# count), their full run stays here. Without it (a developer's make test)
# every test runs here.
UNDER_LOAD_LATER ?=
UNDER_LOAD_SHORT_DIFFERS ?= TestIsolatedFaults
# under_load_names DIR,PATTERN: DIR's top-level tests that PATTERN selects, joined by |.
under_load_names = $(shell grep -ho '^func Test[A-Za-z0-9_]*' $(1)/*_test.go | sed 's/^func //' | grep -E '$(2)' | grep -vxE '$(UNDER_LOAD_SHORT_DIFFERS)' | sort -u | paste -sd'|')
PLAIN_PKGS  = $(if $(UNDER_LOAD_LATER),$(shell $(GO) list $(PKGS) | grep -v '/netenv/linux$$'),$(PKGS))
PLAIN_FLAGS = $(if $(UNDER_LOAD_LATER),-skip '^($(call under_load_names,act,$(UNDER_LOAD_ACT))|$(call under_load_names,act/cluster,$(UNDER_LOAD_CLUSTER)))$$')
test:
	@failed=(); step() { echo "make test: $$*"; "$$@" || failed+=("$$*"); }; \
	step $(MAKE) --no-print-directory vet; \
	step $(MAKE) --no-print-directory fmt-check; \
	step $(TALK) "make test" $(GO) test -json -count=1 -timeout $(TEST_TIMEOUT) $(PLAIN_FLAGS) $(PLAIN_PKGS); \
	step $(TALK) "make test (race)" $(GO) test -json -race -short -count=1 -timeout 25m $(RACE_PKGS); \
	step $(TALK) "make test (race)" $(GO) test -json -race -short -count=1 -timeout 10m -run 'AddBatches|Coarsen|Merge' ./coverage; \
	step bash -c 'cd examples/custom-ccai && $(GO) build -o /dev/null . && $(GO) vet . && $(GO) test -count=1 .'; \
	step $(MAKE) --no-print-directory custom-ccai-test; \
	if [ $${#failed[@]} -gt 0 ]; then echo "make test: $${#failed[@]} step(s) failed:"; printf '  %s\n' "$${failed[@]}"; exit 1; fi; \
	echo "make test: every step passed"

## test-under-load: the timing-sensitive tests (isolated faults and
## watchdogs, the cluster's leases, store parts and restarts, the kernel
## subject's, which skip without root) while bench/load.sh keeps
## LOAD_PER_CORE busy processes per core (ended by PID when the tests end,
## and by itself after LOAD_SECONDS). They must pass as they do idle: a
## result never depends on timing (issue 47). ./act with -short: one worker count per
## fault case (`make test` runs 1, 2 and 3), as a spinning hang costs its
## watchdog in CPU time, not wall time: at load 40 on 2 cores the three
## counts of TestIsolatedFaults/hang took 23 min.
LOAD_PER_CORE ?= 8
LOAD_SECONDS  ?= 2400
UNDER_LOAD_ACT     ?= TestIsolatedFaults|TestIsolatedResume|Watchdog|Duration
UNDER_LOAD_CLUSTER ?= Lease|TestStorePart|TestServerRestart|TestCoordinatorKilled|TestWorkerHostKilledMidChunk
test-under-load:
	@n=$$(( $(LOAD_PER_CORE) * $$(nproc) )); echo "make test-under-load: $$n busy processes for at most $(LOAD_SECONDS) s"; \
	bench/load.sh $$n $(LOAD_SECONDS) & lp=$$!; trap 'kill $$lp 2>/dev/null' EXIT; \
	failed=(); step() { echo "make test-under-load: $$*"; "$$@" || failed+=("$$*"); }; \
	step $(GO) test -short -count=1 -timeout 30m -run '$(UNDER_LOAD_ACT)' ./act; \
	step $(GO) test -count=1 -timeout 30m -run '$(UNDER_LOAD_CLUSTER)' ./act/cluster; \
	step $(GO) test -count=1 -timeout 10m ./netenv/linux; \
	kill $$lp 2>/dev/null; \
	if [ $${#failed[@]} -gt 0 ]; then echo "make test-under-load: $${#failed[@]} step(s) failed:"; printf '  %s\n' "$${failed[@]}"; exit 1; fi; \
	echo "make test-under-load: every step passed under load"

## custom-ccai-test: examples/custom-ccai as a user's module outside this
## tree (a copy whose go.mod replaces actfuzz with this checkout, stamped
## with its REVISION as docs/custom-ccai.md says): it builds, `list` shows
## its CCAI, a short campaign in isolated workers (the program itself as
## `worker`) writes seeds naming it as their program and this checkout's
## revision, never its path, it replays them, and the stock binary refuses
## them (exit 2) naming that program.
custom-ccai-test: build
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cp examples/custom-ccai/*.go examples/custom-ccai/*.yaml examples/custom-ccai/go.mod examples/custom-ccai/go.sum "$$tmp"/; \
	cd "$$tmp"; \
	$(GO) mod edit -replace github.com/actfuzz/actfuzz=$(CURDIR); \
	GOFLAGS=-mod=mod $(GO) build -ldflags "$(LDFLAGS)" -o custom-ccai .; \
	./custom-ccai list | grep -q '^  gentle '; \
	s=0; ./custom-ccai run gentle.yaml --budget 64 --out o --quiet >run.log 2>&1 || s=$$?; \
	[ $$s -eq 1 ] || { echo "custom-ccai run: exit $$s, want 1"; cat run.log; exit 1; }; \
	seed=$$(ls o/findings/*/*.json | head -1); \
	grep -q '"program": "example.com/custom-ccai' "$$seed"; \
	if grep '"program"' "$$seed" | grep -qF -e '$(CURDIR)' -e '=>'; then echo "custom-ccai: the seed names the machine's checkout: $$(grep '"program"' "$$seed")"; exit 1; fi; \
	./custom-ccai replay "$$seed" >/dev/null; \
	s=0; $(CURDIR)/$(BIN) replay "$$seed" >/dev/null 2>err.log || s=$$?; \
	[ $$s -eq 2 ] && grep -q 'written by example.com/custom-ccai' err.log || { echo "stock replay: exit $$s, want 2 naming the program"; cat err.log; exit 1; }; \
	echo "custom-ccai-test: out-of-tree build, list, run (isolated workers), replay: ok"

## nats: the NATS server (with JetStream) that a cluster campaign runs on,
## installed into $(go env GOPATH)/bin (docs/cluster.md).
NATS_SERVER_VERSION ?= v2.15.2
nats:
	$(GO) install github.com/nats-io/nats-server/v2@$(NATS_SERVER_VERSION)
	@echo "make nats: $$($(GO) env GOPATH)/bin/nats-server $$($$($(GO) env GOPATH)/bin/nats-server --version)"

## toxiproxy: Shopify's toxiproxy (a TCP proxy that adds latency), for
## bench/cluster-latency.sh: the cluster's processes as if on other
## machines. Installed as bin/toxiproxy/server.
TOXIPROXY_VERSION ?= v2.5.0
toxiproxy:
	GOBIN=$(CURDIR)/bin/toxiproxy $(GO) install github.com/Shopify/toxiproxy/v2/cmd/server@$(TOXIPROXY_VERSION)

## cluster-test: the cluster tests (embedded JetStream server) with the
## race detector and without -short (make test runs them without it).
cluster-test:
	$(GO) test -race -count=1 -timeout 600s ./act/cluster
	$(GO) test -race -count=1 -timeout 600s -run Cluster ./cli

## usecase-test: the paper's huge-cwnd use case found within 3,000
## simulations on at least 4 of 5 seeds (act's TestHugeCwndFoundSoon; minutes)
usecase-test:
	ACTFUZZ_USECASES=1 $(GO) test -count=1 -run TestHugeCwndFoundSoon -v -timeout 30m ./act

## e2e: the HTML report in a real browser. Installs Debian's chromium with
## apt-get when it is missing, runs a short campaign (E2E_BUDGET simulations
## of examples/make-run.yaml) into E2E_DIR, and loads its report/index.html
## in headless Chromium from a Go test (package report/e2e, chromedp): it
## fails on a console error, a broken image or link, or a missing section,
## and saves E2E_DIR/report/screenshot.png (the whole page) and
## screenshot-top.png (the first screenful).
E2E_DIR    ?= out/e2e
E2E_BUDGET ?= 200
E2E_SUDO    = $(shell [ "$$(id -u)" = 0 ] || echo sudo)
e2e: build
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
		echo "make e2e: installing chromium with apt-get"; \
		$(E2E_SUDO) apt-get update && \
		DEBIAN_FRONTEND=noninteractive $(E2E_SUDO) apt-get install -y --no-install-recommends chromium fonts-liberation || exit 1; }
	@rm -rf $(E2E_DIR); mkdir -p $(dir $(E2E_DIR)); s=0; \
	echo "make e2e: a campaign of $(E2E_BUDGET) simulations into $(E2E_DIR)"; \
	$(BIN) run examples/make-run.yaml --budget $(E2E_BUDGET) --out $(E2E_DIR) --quiet >$(E2E_DIR).log 2>&1 || s=$$?; \
	[ $$s -le 1 ] || { echo "make e2e: run: exit $$s"; cat $(E2E_DIR).log; exit 1; }
	ACTFUZZ_E2E_DIR=$(abspath $(E2E_DIR)) $(GO) test -count=1 -v -run E2E ./report/e2e
	@echo "make e2e: screenshot: $(E2E_DIR)/report/screenshot.png"

vet:
	@$(TALK) "make vet" $(GO) vet -v $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## bench: simulator benchmarks (see bench/ for scripts)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./netenv/...

clean:
	rm -rf bin .build

## ns3: the ns-3 subject's driver, bin/actfuzz-ns3, built against Debian's
## libns3-dev 3.37 (apt-get installs it when its headers are missing).
## Debian's pkg-config files for ns-3 are broken: plain -l flags are used.
NS3_DRIVER  ?= bin/actfuzz-ns3
NS3_CXX     ?= g++
NS3_CXXFLAGS ?= -std=c++17 -O2
NS3_HDR     = $(shell for d in /usr/include /usr/include/ns3* /usr/local/include /usr/local/include/ns3*; do \
                [ -f $$d/ns3/core-module.h ] && echo "$$d" && break; done)
NS3_INC     = $(if $(filter /usr/include,$(NS3_HDR)),,$(addprefix -I,$(NS3_HDR)))
NS3_LIBS    = -lns3-core -lns3-network -lns3-internet -lns3-point-to-point -lns3-applications -lns3-traffic-control
NS3_SUDO    = $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: ns3 ns3-findings
ns3:
	@if [ -z "$(NS3_HDR)" ]; then \
		echo "make ns3: installing libns3-dev (ns-3.37) with apt-get"; \
		$(NS3_SUDO) apt-get update && \
		DEBIAN_FRONTEND=noninteractive $(NS3_SUDO) apt-get install -y --no-install-recommends libns3-dev g++ || exit 1; \
	fi
	@$(MAKE) --no-print-directory $(NS3_DRIVER)

## ns3-findings: actfuzz's standalone ns-3 reproducers (testdata/ns3/findings,
## docs/bugs/ns3-*.md), built against the installed ns-3 and run: whether
## each still shows its finding.
ns3-findings: ns3
	NS3_INC="$(NS3_INC)" CXX=$(NS3_CXX) bench/ns3-findings.sh

$(NS3_DRIVER): netenv/ns3/driver/driver.cc
	@mkdir -p $(dir $@)
	$(NS3_CXX) $(NS3_CXXFLAGS) $(NS3_INC) -o $@ $< $(NS3_LIBS)

## packetdrill: Google's packetdrill (the tool Linux's TCP developers test
## TCP with, issue 49) built as bin/packetdrill from PACKETDRILL_SRC, a
## read-only build input we never modify: the tool's source is copied into
## PACKETDRILL_BUILD (gitignored) and built there with its own
## `./configure && make`. apt-get installs flex and bison (the build's) and
## ethtool (the suite's scripts run it) when missing.
## Fast when nothing changed: bin/packetdrill depends on the source files.
## packetdrill-baseline: bench/packetdrill-baseline.sh, the suite on the
## running kernel, each script in its own network namespace (docs/packetdrill.md).
PACKETDRILL_SRC   ?= ../shared/packetdrill
PACKETDRILL_BUILD ?= .build/packetdrill
PACKETDRILL       ?= bin/packetdrill
PACKETDRILL_TOOL  = $(PACKETDRILL_SRC)/gtests/net/packetdrill
PACKETDRILL_DEPS  = $(wildcard $(PACKETDRILL_TOOL)/*.[chly] $(PACKETDRILL_TOOL)/Makefile.* $(PACKETDRILL_TOOL)/configure)
PACKETDRILL_SUDO  = $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: packetdrill packetdrill-baseline pkt-findings
packetdrill:
	@[ -x $(PACKETDRILL_TOOL)/configure ] || [ -x $(PACKETDRILL) ] || { \
		echo "make packetdrill: no packetdrill source at $(PACKETDRILL_TOOL) (set PACKETDRILL_SRC)"; exit 2; }
	@missing=; for t in flex bison ethtool; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
		echo "make packetdrill: installing$$missing with apt-get"; \
		$(PACKETDRILL_SUDO) apt-get update && \
		DEBIAN_FRONTEND=noninteractive $(PACKETDRILL_SUDO) apt-get install -y --no-install-recommends $$missing || exit 1; \
	fi
	@$(MAKE) --no-print-directory $(PACKETDRILL)
	@echo "make packetdrill: $(PACKETDRILL) (from $(PACKETDRILL_SRC))"

# cp keeps the source's timestamps so the build directory's make rebuilds
# only what changed; chmod because the shared source is read-only.
$(PACKETDRILL): $(PACKETDRILL_DEPS)
	@[ -x $(PACKETDRILL_TOOL)/configure ] || { echo "make packetdrill: no packetdrill source at $(PACKETDRILL_TOOL)"; exit 2; }
	@mkdir -p $(PACKETDRILL_BUILD) $(dir $@)
	cp -R --preserve=timestamps $(PACKETDRILL_TOOL)/. $(PACKETDRILL_BUILD)/
	chmod -R u+w $(PACKETDRILL_BUILD)
	cd $(PACKETDRILL_BUILD) && ./configure && $(MAKE) --no-print-directory packetdrill
	install -m 0755 $(PACKETDRILL_BUILD)/packetdrill $@

packetdrill-baseline:
	PACKETDRILL=$(PACKETDRILL) PACKETDRILL_SRC=$(PACKETDRILL_SRC) bench/packetdrill-baseline.sh

## pkt-findings: the kernel findings' packetdrill reproducers
## (testdata/packetdrill/findings, docs/bugs/linux-*.md) on the running
## kernel, PKT_RUNS times each: how often each held. Needs root and
## `make packetdrill`.
PKT_RUNS ?= 20
pkt-findings:
	PACKETDRILL=$(PACKETDRILL) PACKETDRILL_SRC=$(PACKETDRILL_SRC) bench/pkt-kernel.sh $(PKT_RUNS)

## quic-findings: the quic subject's finding reproducers (Go tests under
## netenv/quicgo gated by ACTFUZZ_QUIC_FINDINGS, docs/bugs/quicgo-*.md),
## QUIC_RUNS times each: quic-go runs in real time, so each run is
## reported (go test -count, -v: the measured values of every run).
QUIC_RUNS ?= 1
.PHONY: quic-findings
quic-findings:
	ACTFUZZ_QUIC_FINDINGS=1 $(GO) test -count=$(QUIC_RUNS) -v -run 'TestNoPersistentCongestion' ./netenv/quicgo

## gofuzz: go-fuzz over fuzz.Fuzz for GOFUZZ_TIME seconds: region feedback
## (Fuzz returns 1 on a new region at k=16), condition hits and subject faults
## panic, so GOFUZZ_DIR/crashers holds reproducers. The corpus, the crashers
## and the shared region store (regions.bin) live in GOFUZZ_DIR. Seed it from
## a campaign's output with GOFUZZ_SEEDS=out/make-run; pick the campaign with
## ACTFUZZ_CAMPAIGN=file.yaml. GOFUZZ_BYTES (default 1 MB per flow, empty for
## the campaign's own) keeps executions fast.
GOFUZZ_DIR   ?= out/gofuzz
GOFUZZ_TIME  ?= 60
GOFUZZ_PROCS ?= 2
GOFUZZ_SEEDS ?=
GOFUZZ_BYTES ?= 1000000

.PHONY: gofuzz
gofuzz:
	@mkdir -p $(GOFUZZ_DIR)
	ACTFUZZ_BYTES=$(GOFUZZ_BYTES) $(GO) run ./fuzz/cmd/fuzzseeds -gofuzz $(GOFUZZ_DIR)/corpus $(GOFUZZ_SEEDS)
	$(GO) tool go-fuzz-build -o $(GOFUZZ_DIR)/fuzz-fuzz.zip ./fuzz
	@gofuzz=$$($(GO) tool -n go-fuzz) || exit 1; \
	ACTFUZZ_REGIONS=$(abspath $(GOFUZZ_DIR))/regions.bin ACTFUZZ_BYTES=$(GOFUZZ_BYTES) \
	  timeout -s INT $(GOFUZZ_TIME) $$gofuzz -bin $(GOFUZZ_DIR)/fuzz-fuzz.zip -workdir $(GOFUZZ_DIR) -procs $(GOFUZZ_PROCS); \
	s=$$?; if [ $$s -ne 0 ] && [ $$s -ne 124 ]; then exit $$s; fi; \
	echo "gofuzz: $$(ls $(GOFUZZ_DIR)/corpus | wc -l) corpus inputs, $$(ls $(GOFUZZ_DIR)/crashers 2>/dev/null | grep -vc '\.') crashers in $(GOFUZZ_DIR)/crashers, regions in $(GOFUZZ_DIR)/regions.bin"

## fuzz-smoke: each native fuzz target of package fuzz for a fixed number
## of executions, about 10 s each on one core (CI runs it after `make test`).
## A failing input is saved under fuzz/testdata/fuzz/<target>/ and fails the
## target. FuzzRegions runs the default campaign with FUZZ_SMOKE_BYTES per
## flow. Budgets are counts (-fuzztime Nx), not durations: Go 1.26's fuzzing
## coordinator can report a spurious "context deadline exceeded" when a
## duration runs out while a worker is busy (golang/go#75804, fixed in 1.27).
FUZZ_SMOKE_BYTES   ?= 1000000
FUZZ_SMOKE_TARGETS ?= FuzzRegions:30x FuzzCampaignParser:50000x FuzzSeedDecoder:20000x FuzzSimulatorExtremes:12000x FuzzDecode:120000x

.PHONY: fuzz-smoke
fuzz-smoke:
	@set -e; for tb in $(FUZZ_SMOKE_TARGETS); do \
		t=$${tb%%:*}; n=$${tb#*:}; \
		echo "fuzz-smoke: $$t for $$n"; \
		ACTFUZZ_BYTES=$(FUZZ_SMOKE_BYTES) $(GO) test ./fuzz -run '^$$' -fuzz "^$$t\$$" -fuzztime $$n; \
	done

## linux-test: the linux subject's fidelity figures (root, TUN; minutes of
## real time): the emulator's accuracy up to 200 Mbit/s, kernel reno
## against Mathis, kernel cubic and reno against native. `make test` runs
## the subject's quick tests (a few seconds) and skips these.
linux-test:
	ACTFUZZ_LINUX_SLOW=1 $(GO) test -count=1 -v -timeout 30m ./netenv/linux
