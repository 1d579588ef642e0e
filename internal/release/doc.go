// Package release publishes this module the way a module proxy serves it,
// so that a release can be tried before and checked after it is tagged.
//
// Publish builds the module zip of a checkout with golang.org/x/mod/zip —
// the bytes `go mod download` would serve for a tag of the same files — and
// writes it, with its .mod, .info and list files, into a file-based module
// proxy (GOPROXY=file:///dir). OfflineEnv is the environment under which the
// go command resolves modules only from such proxies and never reaches the
// network.
//
// Load reads what a release compiles of its boundary packages, platform by
// platform, without running any of it; Requirements and ModulesOf read the
// modules it requires and those its generators and checks run. The
// verify-release command judges a release by them.
package release
