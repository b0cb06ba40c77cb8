GO ?= go
PKGS ?= ./...
FUZZTIME ?= 30s

.PHONY: build test vet fmt-check bench fuzz run

build:
	$(GO) build $(PKGS)

## test: what CI runs: formatting, vet, and the whole suite under the race detector.
test: fmt-check vet
	$(GO) test -race -count=1 -timeout 15m $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## bench: every benchmark with allocation counts; long soaks run here, never in test.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -tags nspl_bench $(PKGS)

## fuzz: each native fuzz target for FUZZTIME.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

run:
	$(GO) run ./cmd/nspl
