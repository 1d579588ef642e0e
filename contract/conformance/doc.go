// Package conformance is the framework-free conformance runner for
// runtime-adapter-v1 adapters. It imports no test framework: Run creates one
// adapter from a Factory, runs the seven contract cases against it in order
// and returns a metadata-only Report; Assert turns a failed report into an
// error. The Ginkgo suite in package spec builds on it.
package conformance
