# actfuzz — build, run and test. Needs only Go (and gcc/apt-get for the ns-3 subject).
GO      ?= go
BIN     ?= bin/actfuzz
PKGS    := ./...

.PHONY: all build run test vet fmt-check bench clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/actfuzz

## run: the main job: a short ACT campaign (CUBIC and Reno, the paper's
## default P and S and its use-case conditions) on the native simulator.
## Findings are not a failure of `make run`: exit 1 only means "found".
run: build
	@$(BIN) run examples/make-run.yaml --out out/make-run; s=$$?; [ $$s -le 1 ]

## test: static checks and every test (what CI runs)
test: vet fmt-check
	$(GO) test -count=1 $(PKGS)
	cd examples/custom-ccai && $(GO) build -o /dev/null . && $(GO) vet .

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## bench: simulator benchmarks (see bench/ for scripts)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./netenv/...

clean:
	rm -rf bin

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

.PHONY: ns3
ns3:
	@if [ -z "$(NS3_HDR)" ]; then \
		echo "make ns3: installing libns3-dev (ns-3.37) with apt-get"; \
		$(NS3_SUDO) apt-get update && \
		DEBIAN_FRONTEND=noninteractive $(NS3_SUDO) apt-get install -y --no-install-recommends libns3-dev g++ || exit 1; \
	fi
	@$(MAKE) --no-print-directory $(NS3_DRIVER)

$(NS3_DRIVER): netenv/ns3/driver/driver.cc
	@mkdir -p $(dir $@)
	$(NS3_CXX) $(NS3_CXXFLAGS) $(NS3_INC) -o $@ $< $(NS3_LIBS)
