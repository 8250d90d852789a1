# ferry: the two commands are `make demo` and `make test` (README.md). Both install what they need.
SHELL := /bin/bash
.DEFAULT_GOAL := build
JOBS ?= $(shell nproc)
# The dev tree's tests (integration and torture tests above all) spend most of their time waiting
# on brokers, processes and timers: 110 s of CPU in 438 s at -j2 on 2 cores. Three per core keeps
# the cores busy; the run is then as long as its longest test (the Kafka torture, ~160 s).
TEST_JOBS ?= $(shell echo $$(( 3 * $(JOBS) )))

# Debian 12 packages ferry builds, tests, demos and packages with. Node.js and npm are taken from
# the machine when present (the DuckDB cross-checks need Node >= 18) and from Debian otherwise.
# The next-to-last line is the S3 test server (Ceph's radosgw on a one-host cluster) and the
# clients the tests check it with (docs/testing-servers.md), with jq, which the benchmark scripts
# read `--json` output with; the last, the man pages, `make package` and its test
# (dpkg-shlibdeps, lintian, man, bash-completion's loader, systemd-analyze for the unit).
# libavro-dev (avro-c) is the Avro decoding benchmark's peer only (bench/avro_decode_bench.cc).
# openjdk-17-jre-headless runs the Apache Kafka broker of the tests and maven fetches its jars
# (setup-kafka).
# The interop suite's (docs/interop.md): Java 17 for Spark, Maven for Delta's jars, python3-venv
# (also the venv of the Kafka tests' transactional producer, tests/kafka).
DEB_PACKAGES := build-essential cmake ninja-build pkg-config git openssl procps \
  openjdk-17-jre-headless maven \
  clang-14 libclang-rt-14-dev clang-format clang-tidy \
  librdkafka-dev libnats-dev nats-server kcat \
  libsimdjson-dev libsnappy-dev libzstd-dev liblz4-dev zlib1g-dev libbrotli-dev \
  libtomlplusplus-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev \
  libcpp-httplib-dev libxxhash-dev uuid-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libre2-dev libssl-dev libcurl4-openssl-dev libexpat1-dev chromium libavro-dev \
  libprotobuf-dev libprotoc-dev protobuf-compiler \
  curl jq ceph-mon ceph-osd radosgw ceph-common awscli python3-boto3 \
  help2man lowdown dpkg-dev file lintian man-db bash-completion adduser systemd \
  python3-venv

# What `make demo` needs and nothing more: the compilers and the libraries the `ferry` binary links
# (cmake/FerryDependencies.cmake without the test and benchmark frameworks), and nats-server for the
# JetStream half of the demo. A subset of DEB_PACKAGES.
DEMO_DEB_PACKAGES := build-essential cmake ninja-build pkg-config git procps \
  librdkafka-dev libnats-dev nats-server \
  libsimdjson-dev libsnappy-dev libzstd-dev liblz4-dev zlib1g-dev libbrotli-dev \
  libtomlplusplus-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev \
  libcpp-httplib-dev libxxhash-dev uuid-dev libre2-dev libssl-dev libcurl4-openssl-dev \
  libexpat1-dev libprotobuf-dev libprotoc-dev protobuf-compiler

DUCKDB_DIR := tests/duckdb
# puppeteer-core (drives Debian's chromium; it downloads no browser) and ajv: the status page test.
BROWSER_DIR := tests/browser
# The Azure Blob test server (Azurite) and its independent client (@azure/storage-blob).
AZURITE_DIR := tests/azurite
# s3rver: an S3 server that ignores If-None-Match, which ferry must refuse to commit to.
S3RVER_DIR := tests/s3rver
SERIALIZERS_DIR := tests/serializers
FERRY := build/dev/src/ferry/app/ferry

.PHONY: setup setup-deb setup-demo setup-npm setup-nats setup-gcs setup-kafka setup-interop setup-spark-bench build demo-build asan asan-unit release test test-unit lint demo \
        fuzz bench torture install package clean

setup: setup-deb setup-npm setup-kafka setup-nats setup-gcs setup-interop

# apt's and npm's output goes to a log, printed only when the step fails (SETUP_LOG).
SETUP_LOG ?= /tmp/ferry-setup-$(shell id -u).log
QUIETLY := tools/quietly.sh $(SETUP_LOG)

setup-deb:
	@tools/setup_deb.sh $(SETUP_LOG) --with-npm $(DEB_PACKAGES)

# A current nats-server beside Debian's 2.9.10 (docs/testing-servers.md): `go install` of the pinned
# version from the Go module proxy into ~/.cache/ferry/nats-server-<version>/, only when it is not
# there yet (cold: about 2 minutes and 300 MB of Go caches on 2 shared cores). Needs Go >= 1.24.
# The JetStream tests run on both servers and fail, naming this target, when it is missing.
NATS_SERVER_VERSION := v2.15.3

setup-nats:
	@NATS_SERVER_VERSION=$(NATS_SERVER_VERSION) tools/setup_nats.sh $(SETUP_LOG)

# The Google Cloud Storage emulator (fake-gcs-server), built with the machine's Go from the Go
# module proxy into ~/.cache/ferry/ (tools/setup_gcs.sh; nothing written into the tree), and the
# venv of Google's google-cloud-storage client (pinned by tests/gcs/requirements.txt) in
# ~/.cache/ferry/gcs-py-venv when missing or its pin changed (tools/setup_py_venv.sh).
setup-gcs: setup-deb
	@tools/setup_gcs.sh $(SETUP_LOG)
	@tools/setup_py_venv.sh $(SETUP_LOG) gcs-py-venv tests/gcs/requirements.txt google.cloud.storage

setup-npm:
	@if [ ! -d $(DUCKDB_DIR)/node_modules/@duckdb/node-api ]; then \
	  echo "setup: npm ci in $(DUCKDB_DIR) (pinned @duckdb/node-api; log: $(SETUP_LOG))"; \
	  cd $(DUCKDB_DIR) && $(CURDIR)/$(QUIETLY) npm ci --no-audit --no-fund --no-progress; \
	fi
	@if [ ! -d $(BROWSER_DIR)/node_modules/puppeteer-core ] || [ ! -d $(BROWSER_DIR)/node_modules/ajv ]; then \
	  echo "setup: npm ci in $(BROWSER_DIR) (pinned puppeteer-core, ajv; log: $(SETUP_LOG))"; \
	  cd $(BROWSER_DIR) && $(CURDIR)/$(QUIETLY) npm ci --no-audit --no-fund --no-progress; \
	fi
	@if [ ! -f $(AZURITE_DIR)/node_modules/.package-lock.json ] || \
	    [ $(AZURITE_DIR)/package-lock.json -nt $(AZURITE_DIR)/node_modules/.package-lock.json ]; then \
	  echo "setup: npm ci in $(AZURITE_DIR) (pinned azurite, @azure/storage-blob; log: $(SETUP_LOG))"; \
	  cd $(AZURITE_DIR) && $(CURDIR)/$(QUIETLY) npm ci --no-audit --no-fund --no-progress; \
	fi
	@if [ ! -f $(S3RVER_DIR)/node_modules/.package-lock.json ] || \
	    [ $(S3RVER_DIR)/package-lock.json -nt $(S3RVER_DIR)/node_modules/.package-lock.json ]; then \
	  echo "setup: npm ci in $(S3RVER_DIR) (pinned s3rver; log: $(SETUP_LOG))"; \
	  cd $(S3RVER_DIR) && $(CURDIR)/$(QUIETLY) npm ci --no-audit --no-fund --no-progress; \
	fi
	@if [ ! -f $(SERIALIZERS_DIR)/node_modules/.package-lock.json ] || \
	    [ $(SERIALIZERS_DIR)/package-lock.json -nt $(SERIALIZERS_DIR)/node_modules/.package-lock.json ]; then \
	  echo "setup: npm ci in $(SERIALIZERS_DIR) (pinned @kafkajs/confluent-schema-registry, avsc; log: $(SETUP_LOG))"; \
	  cd $(SERIALIZERS_DIR) && $(CURDIR)/$(QUIETLY) npm ci --no-audit --no-fund --no-progress; \
	fi

# The Apache Kafka broker of the tests (src/ferry/testing/kafka_broker.h): the jars pinned by
# tests/kafka/pom.xml (the newest 4.x and the last 3.x line), fetched from Maven Central into
# ~/.cache/ferry/kafka-<version>/libs when missing (tools/setup_kafka.sh; nothing in the tree);
# and the transactional producer's venv (confluent-kafka pinned by tests/kafka/requirements.txt)
# in ~/.cache/ferry/kafka-py-venv when missing or its pin changed (tools/setup_py_venv.sh).
setup-kafka: setup-deb
	@tools/setup_kafka.sh $(SETUP_LOG) kafka-4 kafka-3
	@tools/setup_py_venv.sh $(SETUP_LOG) kafka-py-venv tests/kafka/requirements.txt confluent_kafka

# The interop suite's Python venv (pinned pyspark, delta-spark, deltalake: tests/interop/
# requirements.txt) and Delta's jars (tests/interop/pom.xml), in ~/.cache/ferry; redone only when
# a pin changes (docs/interop.md).
setup-interop: setup-deb
	@tools/setup_interop.sh $(SETUP_LOG)

# Spark's Kafka source for the Spark head-to-head benchmark (tools/bench_spark.sh): the
# spark-sql-kafka-0-10 jars pinned by bench/spark/pom.xml in ~/.cache/ferry/spark-kafka-jars, on
# top of the interop environment (pyspark, delta-spark) and the Kafka broker. Not part of `make
# test`; `make bench` installs it.
setup-spark-bench: setup-interop setup-kafka
	@tools/setup_spark_bench.sh $(SETUP_LOG)

# UNITY=ON (the default here) compiles each target's sources in batches of 8 files (CMake's unity
# build): a cold build takes less than half the CPU time, as the headers are parsed once a batch.
# The presets alone (cmake --preset dev) leave it off, for quick rebuilds of one file with ccache;
# so does `make UNITY=OFF`. Code must compile both ways: no two .cc files of one target may define
# the same name in their anonymous namespaces.
UNITY ?= ON
export UNITY

build: setup-deb
	cmake --preset dev -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	cmake --build --preset dev -j $(JOBS)

asan: setup-deb
	cmake --preset asan -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	cmake --build --preset asan -j $(JOBS)

# The clang ASan+UBSan tree as `make test` uses it: the unit tests and the fuzzers (not the ferry
# binary). The libraries are compiled once for both (CMakePresets.json).
asan-unit: setup-deb
	cmake --preset asan -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	cmake --build --preset asan --target unit_tests fuzzers -j $(JOBS)

release: setup-deb
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

# `make install` and `make package` ship the `package` preset's build: the ferry binary alone, at
# release flags with Debian's hardening flags, failpoints compiled out, with its man pages
# (docs/OPERATIONS.md, "Installing"). PREFIX (default /usr/local) and DESTDIR (staging) as usual.
# PACKAGE_BUILD (default build/package) is the build tree and PACKAGE_CXX_FLAGS (default CMake's
# release flags) the optimisation: package_test builds in a scratch tree at -O0, which checks the
# packaging at the least compile time (-O1 took ~27 % longer a file) and leaves build/package alone.
# It is a unity build like the others (UNITY): the binary is the same code, compiled in batches.
PREFIX ?= /usr/local
PACKAGE_BUILD ?= build/package
PACKAGE_CXX_FLAGS ?= -O3 -DNDEBUG
PACKAGE_CONFIGURE = cmake --preset package -B $(PACKAGE_BUILD) -DCMAKE_UNITY_BUILD=$(UNITY) \
  -DCMAKE_CXX_FLAGS_RELEASE="$(PACKAGE_CXX_FLAGS)" -DCMAKE_C_FLAGS_RELEASE="$(PACKAGE_CXX_FLAGS)"

install: setup-deb
	$(PACKAGE_CONFIGURE) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(PACKAGE_BUILD) -j $(JOBS)
	DESTDIR="$(DESTDIR)" cmake --install $(PACKAGE_BUILD) --strip --component ferry

# build/package/ferry_<version>_<arch>.deb (CPack DEB; packaging/CMakeLists.txt), then lintian.
package: setup-deb
	$(PACKAGE_CONFIGURE) -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
	cmake --build $(PACKAGE_BUILD) -j $(JOBS)
	rm -f $(PACKAGE_BUILD)/ferry_*.deb
	cd $(PACKAGE_BUILD) && cpack -G DEB
	lintian --fail-on error $(PACKAGE_BUILD)/ferry_*.deb

lint:
	@tools/check_format.sh
	@tools/check_layers.sh

# Every test: lint, all labels on the dev build, the unit tests again under ASan+UBSan, and the
# bounded fuzz runs (every fuzzer for FUZZ_TEST_SECONDS, 30 s each, one per core at a time: about
# 1.5 minutes in all on 2 cores). As root, the label `package` includes package_test: `make
# install` and `make package` (a release build of ferry alone, which it runs first, beside the
# tests that mostly wait), then the .deb installed, run and purged (tests/package/). After a
# failed ctest, tools/print_test_failures.sh repeats why each test failed at the end of the log.
# The ASan tree builds at nice 19 while the dev tests run, which mostly wait (tools/run_tests.sh).
# tools/make_test.sh runs setup, lint and the dev build as phases, then tools/run_tests.sh, and
# prints at the end, passed or failed, each phase's wall time and the ten slowest tests.
test:
	@tools/make_test.sh $(JOBS) $(TEST_JOBS) $${FUZZ_TEST_SECONDS:-30}

test-unit: build
	cd build/dev && ctest --output-on-failure -j $(JOBS) -L unit

# `make demo` on a fresh machine: only the packages the demo needs (DEMO_DEB_PACKAGES), only the
# `ferry` binary (the `demo` preset: release flags, unity batches, no tests, benchmarks or
# failpoints, in build/demo-build), each step named and timed (tools/timed.sh). `make test`
# still installs and builds everything.
DEMO_FERRY := build/demo-build/src/ferry/app/ferry

setup-demo:
	@tools/setup_deb.sh $(SETUP_LOG) $(DEMO_DEB_PACKAGES)

demo-build: setup-demo
	@cmake --preset demo >/dev/null
	@set -o pipefail; cmake --build --preset demo -j $(JOBS) | tools/build_progress.sh

demo:
	@start=$$(date +%s); \
	tools/timed.sh "setup: the Debian packages the demo needs" \
	  $(MAKE) --no-print-directory setup-demo && \
	tools/timed.sh "build: the ferry binary (release, unity batches; build/demo-build)" \
	  $(MAKE) --no-print-directory demo-build && \
	tools/timed.sh "demo: Kafka (embedded mock cluster) and JetStream (nats-server) into Delta" \
	  tools/demo.sh $(DEMO_FERRY) && \
	echo "make demo: done in $$(( $$(date +%s) - start )) s"

fuzz: setup-deb
	cmake --preset asan >/dev/null
	cmake --build --preset asan --target fuzzers -j $(JOBS)
	tools/run_fuzzers.sh build/asan $${FUZZ_SECONDS:-600}

bench: setup setup-spark-bench release
	tools/run_benchmarks.sh

# The torture harness's long form (docs/RELIABILITY.md): per source 1 M ids, 100 SIGKILLs, every
# failpoint with every action, into a local table and again into an S3 table on a radosgw and a
# GCS table on a fake-gcs-server the tests start (with store faults; JetStream also Azure); then
# Kafka groups (three processes on a local table, two on S3, two on GCS); JetStream's elastic
# mode (processes on 16 partitions SIGKILLed, SIGSTOPped past their leases, leaving and joining:
# 200,000 ids, 100 events); Kafka on a three-node Apache Kafka cluster (partition leaders
# SIGKILLed among ferry's kills, a broker stalled; no failpoint steps), on 4.x and again on the
# 3.x line of tests/kafka/pom.xml; schema evolution under
# kills with a tenth of the ids (at most 100,000); routing under kills with a tenth of the ids
# (at most 200,000) and all the kills; upserts under kills with a tenth of the ids as keys (at
# most 100,000) and four changes per key, all the kills (half on S3). The short form is part of
# `make test` (label `fault`).
# FERRY_TORTURE_SEED=N replays a seed; the figures lines start with
# TORTURE and are collected in build/dev/torture.log.
TORTURE_MESSAGES ?= 1000000
TORTURE_KILLS ?= 100

torture: setup-deb setup-npm setup-gcs
	cmake --preset dev >/dev/null
	cmake --build --preset dev --target ferry kafka_torture_test kafka_failover_torture_test \
	  jetstream_torture_test schema_evolution_torture_test routing_torture_test \
	  upsert_torture_test -j $(JOBS)
	@rm -f build/dev/torture.log; set -o pipefail; rc=0; \
	for t in kafka_torture_test kafka_failover_torture_test jetstream_torture_test \
	    schema_evolution_torture_test routing_torture_test upsert_torture_test; do \
	  FERRY_TORTURE_MESSAGES=$(TORTURE_MESSAGES) FERRY_TORTURE_KILLS=$(TORTURE_KILLS) \
	    FERRY_TORTURE_CHILD_LIMIT_S=$${FERRY_TORTURE_CHILD_LIMIT_S:-3600} \
	    build/dev/tests/fault/$$t 2>&1 | tee -a build/dev/torture.log || rc=1; \
	done; \
	FERRY_KAFKA_VERSION=$$(sed -n 's/.*<kafka.version>\(3\.[^<]*\)<.*/\1/p' tests/kafka/pom.xml | head -1) \
	  FERRY_TORTURE_MESSAGES=$(TORTURE_MESSAGES) FERRY_TORTURE_KILLS=$(TORTURE_KILLS) \
	  FERRY_TORTURE_CHILD_LIMIT_S=$${FERRY_TORTURE_CHILD_LIMIT_S:-3600} \
	  build/dev/tests/fault/kafka_failover_torture_test 2>&1 | tee -a build/dev/torture.log || rc=1; \
	echo; echo "torture figures ($$(nproc) cores, $$(uname -m)):"; grep '^TORTURE' build/dev/torture.log; \
	exit $$rc

clean:
	rm -rf build
