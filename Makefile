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
