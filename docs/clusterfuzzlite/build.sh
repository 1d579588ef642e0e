#!/bin/bash -eu
# Builds the adapter's conformance fuzz targets (fuzz/fuzz_test.go: spec.Fuzz
# and spec.FuzzModel) for libFuzzer. compile_native_go_fuzzer rewrites the
# target's file to take the F of go-118-fuzz-build's testing package, which
# the module must therefore require.
go get github.com/AdamKorcz/go-118-fuzz-build/testing
compile_native_go_fuzzer ./fuzz FuzzProjection fuzz_projection
compile_native_go_fuzzer ./fuzz FuzzModel fuzz_model
