module example.com/consumer

go 1.26

// The release smoke test (internal/release) replaces this placeholder with
// the version it publishes to its file proxy before it runs go get.
require github.com/ds4context/adapterkit v0.0.0-00010101000000-000000000000
