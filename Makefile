# Strata: `make serve` and `make test` are the two set-up commands (README.md).
SHELL := /bin/bash
BUILD ?= build/release
PORT ?= 8080
DATA ?= ./data
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 300
CMAKE_GEN := -G Ninja

.PHONY: deps build serve test unit asan tsan fuzz fuzz-build demo bench format clean crash

deps:
	@bash scripts/install-deps

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

serve: build
	mkdir -p $(DATA)
	$(BUILD)/strata serve --data $(DATA) --port $(PORT) --host 127.0.0.1

fuzz-build: deps
	cmake -S . -B build/fuzz $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DSTRATA_FUZZ=ON
	cmake --build build/fuzz -j $(JOBS)

# Every test through ctest: unit tests, JS interop, LanceDB e2e, and 60 s of IPC fuzzing.
test: deps fuzz-build
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release \
	  -DSTRATA_FUZZER_BINARY=$(abspath build/fuzz/ipc_reader_fuzz)
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan: deps
	cmake -S . -B build/asan $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=asan
	cmake --build build/asan -j $(JOBS)
	cd build/asan && ctest --output-on-failure -j $(JOBS) -E 'fuzz_'

tsan: deps
	cmake -S . -B build/tsan $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=tsan
	cmake --build build/tsan -j $(JOBS)
	cd build/tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -E 'fuzz_|node_'

# Long SIGKILL soak of the storage engine: CRASH_CYCLES (default 1000) kill -9 cycles of a
# writing child, checking after each reopen that every acknowledged row is present exactly once.
CRASH_CYCLES ?= 1000
crash: deps
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS) --target strata_tests
	STRATA_CRASH_CYCLES=$(CRASH_CYCLES) $(BUILD)/strata_tests \
	  --gtest_filter='CrashTest.*:ShardWriter.ThirtyRowsSurviveKill9'

# libFuzzer on the IPC reader for FUZZ_SECONDS (default 300); new inputs go to build/fuzz/corpus.
fuzz: fuzz-build
	mkdir -p build/fuzz/corpus
	build/fuzz/ipc_reader_fuzz -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
	  build/fuzz/corpus fuzz/corpus/ipc_reader

demo: build
	node scripts/demo.mjs --strata $(BUILD)/strata

# Benchmarks print figures (ratios measured side by side in one run); they are not tests.
bench: build
	$(BUILD)/ipc_decode_bench
	$(BUILD)/vector_search_bench
	$(BUILD)/wal_put_bench

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'fuzz/*.cc')

clean:
	rm -rf build
