# The two commands a newcomer runs are in README.md: `make run` and `make test`.
SHELL := /bin/bash
GO ?= go

.PHONY: run test cluster-test check deps fuzz soak bench

# run starts the gateway in front of the Ollama on 127.0.0.1:11434, or the
# one at UPSTREAM; LISTEN, CONFIG and CONTRACTS set the address, the config
# file and the user contract directory (make run UPSTREAM=http://gpu:11434).
run:
	$(GO) run ./cmd/gateway serve $(if $(UPSTREAM),--upstream '$(UPSTREAM)') $(if $(LISTEN),--listen '$(LISTEN)') $(if $(CONFIG),--config '$(CONFIG)') $(if $(CONTRACTS),--contracts '$(CONTRACTS)')

# deps installs what the tests use beyond Go: a real Ollama built from its
# Go module (cached outside the repo), the npm clients, redis-server,
# postgresql (the outcome store's tests), haproxy (the topology test) and
# chromium (the dashboard's browser test).
deps:
	bash scripts/install-redis.sh
	bash scripts/install-haproxy.sh
	bash scripts/install-postgres.sh
	bash scripts/install-browser.sh
	bash scripts/install-ollama.sh
	bash scripts/install-node-clients.sh

# test runs every test under the race detector, the real-Ollama, real-Redis,
# real-PostgreSQL, real-client and real-browser ones included, and ends with a line counting
# the tests passed, failed and skipped (internal/testsum reads go test's
# -json; pipefail keeps go test's exit status).
test: deps
	set -o pipefail; CG_REQUIRE_OLLAMA=1 CG_REQUIRE_NODE=1 CG_REQUIRE_REDIS=1 CG_REQUIRE_POSTGRES=1 CG_REQUIRE_BROWSER=1 CG_REQUIRE_HAPROXY=1 $(GO) test -json -race -count=1 ./... | $(GO) run ./internal/testsum

# cluster-test runs only the topology test, verbose so that its figures
# show: HAProxy in front of three gateway processes on one Redis, one
# PostgreSQL and two real Ollamas, with its rolling restart, Ollama kill
# and database outage under load (about two minutes). make test runs it
# too, so CI does not call this target.
cluster-test: deps
	CG_REQUIRE_OLLAMA=1 CG_REQUIRE_NODE=1 CG_REQUIRE_REDIS=1 CG_REQUIRE_POSTGRES=1 CG_REQUIRE_BROWSER=1 CG_REQUIRE_HAPROXY=1 $(GO) test -race -count=1 -v -run '^TestTopology$$' ./cmd/gateway

# check is what CI runs before the tests: formatting, vet, and the tests
# that count allocations, which skip under make test's race detector (it
# makes sync.Pool drop what it holds at random).
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-clean:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 -run 'Allocate' ./validators/

# fuzz runs every fuzz target of the module in turn, FUZZTIME each, and
# prints the execs per target (make fuzz FUZZTIME=30s); FUZZMINIMIZETIME
# bounds the minimizing of each new input.
FUZZTIME ?= 10s
FUZZMINIMIZETIME ?= 2s
fuzz:
	GO='$(GO)' FUZZTIME='$(FUZZTIME)' FUZZMINIMIZETIME='$(FUZZMINIMIZETIME)' bash scripts/fuzz.sh

# soak holds N connections of mixed traffic for D against the gateway (not
# in CI): throughput, latency, errors, memory and goroutines.
N ?= 1000
D ?= 60s
soak:
	ulimit -n $$(ulimit -Hn) && $(GO) run ./bench/soak -n $(N) -d $(D)

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./validators/... ./repair/...
