# Developer shortcuts; CI runs .ci/run.
.PHONY: build test bench fmt lint conformance fleet fuzz

build:
	cargo build --release

test:
	cargo test

bench:
	cargo bench -p fluxsim-envsubst

fmt:
	cargo fmt

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

conformance:
	cargo run --release --example envsubst-conformance -- testdata/conformance/envsubst-public.jsonl

fleet:
	cargo run --release -- render testdata/fleet

fuzz:
	cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run envsubst -- -max_total_time=60
