GO ?= go
PKGS ?= ./...
FUZZTIME ?= 30s
STRESS_N ?= 5

.PHONY: build nspl test lint stress vet fmt-check bench bench-ratios bench-scale fuzz run screenshots mutate gremlins faults explore

build:
	$(GO) build $(PKGS)

## nspl: the released binary, ./nspl: static (no C library, Go's own DNS
## resolver and user lookup), which also starts faster than a cgo build.
nspl:
	CGO_ENABLED=0 $(GO) build -o nspl ./cmd/nspl

## test: what CI runs: formatting, vet, and the whole suite under the race detector.
## It also runs 200 explored schedules per scenario in an nspl_explore
## build, the planted reordering included (see explore).
test: fmt-check vet
	$(GO) test -race -count=1 -timeout 15m $(PKGS)
	NSPL_EXPLORE_RUNS=200 $(GO) test -race -count=1 -tags nspl_explore -run '^TestExplor' ./session

## explore: EXPLORE_RUNS explored schedules (seeded yields at the lane,
## fan-out, attachment and observer boundaries, GOMAXPROCS 1 to 4) per
## delivery-order scenario and of monotone reads, from EXPLORE_SEED, and the
## planted frame-before-reply that they must find. Not part of test.
EXPLORE_RUNS ?= 10000
EXPLORE_SEED ?= 1
explore:
	NSPL_EXPLORE_RUNS=$(EXPLORE_RUNS) NSPL_EXPLORE_SEED=$(EXPLORE_SEED) $(GO) test -count=1 -v -tags nspl_explore -run '^TestExplor' ./session

## lint: staticcheck at a pinned version over every package, the benchmark
## files (nspl_bench) included; CI runs it before test. It is run with go run
## at an exact version, as gremlins is, so the tool and its dependencies stay
## out of the module's go.mod and go.sum. A finding is fixed, or kept with a
## //lint:ignore CHECK comment that says why.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) -tags nspl_bench $(PKGS)

## stress: the whole suite STRESS_N times while a busy loop per core saturates
## the machine, stopping at the first failure. The loops end with the target.
stress:
	@cores=$$(nproc 2>/dev/null || echo 2); hogs=""; \
	trap 'kill $$hogs 2>/dev/null' EXIT INT TERM; \
	for i in $$(seq $$cores); do sh -c 'while :; do :; done' & hogs="$$hogs $$!"; done; \
	for i in $$(seq $(STRESS_N)); do \
	  echo "== stress run $$i of $(STRESS_N), $$cores busy loops"; \
	  $(GO) test -race -count=1 -timeout 15m $(PKGS) || { echo "stress: run $$i of $(STRESS_N) failed"; exit 1; }; \
	done; \
	echo "stress: $(STRESS_N) of $(STRESS_N) runs passed under $$cores busy loops"

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## bench: every benchmark with allocation counts; long soaks run here, never in test.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -tags nspl_bench $(PKGS)

## bench-ratios: the benchmarks that report a figure against an anchor
## measured in the same run, each BENCH_COUNT times, then a table of the
## median and range of every metric. Not part of test.
BENCH_COUNT ?= 3
BENCH_TIME ?= 1s
RATIO_BENCHES = \
	'./clockrt:^BenchmarkHandleNow(VsTimeNow|Scaling)' \
	'./session:^Benchmark(TickDelivery|IdleAttachment)$$' \
	'./catalog:^BenchmarkThroughputRatio$$' \
	'./cluster:^BenchmarkCommitLatency3Node$$' \
	'./planner:^BenchmarkParsePlan(Ratio)?$$' \
	'./cmd/nspl:^BenchmarkCommandRatio$$'
bench-ratios:
	@set -e; out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
	for spec in $(RATIO_BENCHES); do \
	  pkg=$${spec%%:*}; re=$${spec#*:}; \
	  echo "== $$pkg $$re" >&2; \
	  $(GO) test -run '^$$' -bench "$$re" -benchmem -count $(BENCH_COUNT) -benchtime $(BENCH_TIME) -tags nspl_bench $$pkg >>"$$out"; \
	done; \
	$(GO) run ./internal/benchtable <"$$out"

## fuzz: each native fuzz target for FUZZTIME.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## bench-scale: the scale table of an embedded node at 100, 1,000, 10,000
## and 100,000 domains, half running paced: each lifecycle statement's
## median time and its ratio to a 100-domain anchor measured in the same
## run (order alternated), LIST DOMAINS (the node's copy, and through a
## session streamed and whole with the largest message of each), the snapshot's size and encoding
## time, memory per stopped and per running domain, and restart to first
## answer; then the same statement cycle through a follower of a 3-node
## cluster against a 3-node anchor cluster of 100 domains in the same run
## (SCALE_SIZES=100,10000 picks the sizes). SCALE_COUNT runs of
## SCALE_CYCLES statement cycles each. Not part of test.
SCALE_COUNT ?= 3
SCALE_CYCLES ?= 200
bench-scale:
	$(GO) test -run '^$$' -bench '^BenchmarkScale$$' -benchtime $(SCALE_CYCLES)x -count $(SCALE_COUNT) -timeout 60m -tags nspl_bench ./node/
	$(GO) test -run '^$$' -bench '^BenchmarkScaleRestart$$' -benchtime 3x -count $(SCALE_COUNT) -timeout 60m -tags nspl_bench ./node/
	$(GO) test -run '^$$' -bench '^BenchmarkScaleFollower$$' -benchtime $(SCALE_CYCLES)x -count $(SCALE_COUNT) -timeout 90m -tags nspl_bench ./cluster/

## mutate: every mutation of docs/mutations/ applied in a scratch overlay,
## the tests docs/spec-coverage.md names for its rows run against it; fails
## on a survivor, on a named test no mutation of its row fails, and on a
## behavioural row with no mutation. MUTATE_ROWS=T37,C51-C53 runs a few
## rows only. Not part of test.
MUTATE_ROWS ?=
mutate:
	$(GO) run ./internal/mutate $(if $(MUTATE_ROWS),-rows $(MUTATE_ROWS))

## gremlins: the operator-level mutation sweep of GREMLINS_PKGS with a pinned
## gremlins (settings in .gremlins.yaml), one package at a time, then a table
## of each package's figures. Efficacy is killed / (killed + lived) of the
## covered mutants. It fails when a package named in GREMLINS_FLOOR is under
## its floor. Survivors that are equivalent are listed in
## docs/gremlins-triage.md. Not part of test.
GREMLINS ?= github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
GREMLINS_PKGS ?= clock lifecycle record grammar clockrt
GREMLINS_FLOOR ?= clock:90 lifecycle:90
GREMLINS_FLAGS ?=
gremlins:
	@set -e; logs=$$(mktemp -d); trap 'rm -rf "$$logs"' EXIT; \
	export GOFLAGS="$$($(GO) env GOFLAGS) -count=1"; \
	for pkg in $(GREMLINS_PKGS); do \
	  echo "== gremlins ./$$pkg"; \
	  $(GO) run $(GREMLINS) unleash $(GREMLINS_FLAGS) ./$$pkg 2>&1 | tee "$$logs/$$pkg"; \
	done; \
	printf '%-10s %7s %6s %12s %10s %11s %9s %15s\n' package killed lived not-covered timed-out not-viable efficacy mutant-coverage; \
	fail=0; \
	for pkg in $(GREMLINS_PKGS); do \
	  f="$$logs/$$pkg"; \
	  k=$$(sed -n 's/^Killed: \([0-9]*\), Lived: \([0-9]*\), Not covered: \([0-9]*\).*/\1 \2 \3/p' "$$f"); \
	  t=$$(sed -n 's/^Timed out: \([0-9]*\), Not viable: \([0-9]*\).*/\1 \2/p' "$$f"); \
	  e=$$(sed -n 's/^Test efficacy: \([0-9.]*\)%.*/\1/p' "$$f"); \
	  c=$$(sed -n 's/^Mutator coverage: \([0-9.]*\)%.*/\1/p' "$$f"); \
	  if [ -z "$$e" ]; then echo "gremlins: no figures for ./$$pkg"; fail=1; continue; fi; \
	  set -- $$k $$t; \
	  printf '%-10s %7s %6s %12s %10s %11s %8s%% %14s%%\n' $$pkg $$1 $$2 $$3 $$4 $$5 $$e $$c; \
	  for fl in $(GREMLINS_FLOOR); do \
	    if [ "$${fl%%:*}" = "$$pkg" ] && awk "BEGIN{exit !($$e < $${fl#*:})}"; then \
	      echo "gremlins: ./$$pkg efficacy $$e% is under its floor of $${fl#*:}%"; fail=1; \
	    fi; \
	  done; \
	done; \
	exit $$fail

run:
	$(GO) run ./cmd/nspl

## screenshots: the console's browser test, writing each page it visits
## at 1280x800 to docs/screenshots/ (it needs Chromium).
screenshots:
	NSPL_REQUIRE_BROWSER=1 NSPL_SCREENSHOT_DIR=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestConsoleInABrowser$$' ./console/

## faults: RUNS seeded nemesis runs (isolations of a member or the leader,
## one-way cuts both ways, delays, member kills and restarts on their data
## directories, pauses, clock steps forward and back) against a three-member
## cluster, each history checked with Porcupine and the clock watchers'
## frames against the clock invariants, then a table of the run set:
## operations, anomalies, clock violations, unknown outcomes, undecided
## checks, and per fault kind its operations, unknowns, failing runs, the
## longest unavailability and the longest wait for ticks after a heal. SEED
## is the first seed; FAULTS_KINDS=a,b narrows the kinds. Not part of test;
## TestFaultsShort runs one short seed there.
RUNS ?= 10
SEED ?= 1
faults:
	@out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
	FAULTS_RUNS=$(RUNS) FAULTS_SEED=$(SEED) $(GO) test -race -count=1 -timeout 0 -tags nspl_faults -run '^TestFaults$$' -v ./cluster/ >"$$out" 2>&1; \
	rc=$$?; grep -v '^=== ' "$$out"; exit $$rc
