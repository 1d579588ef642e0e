// Package runscope lets the faces of the conformance catalogue make the
// checks of one run share what the run learned, without exporting it:
// package conformance sets New when it is initialised, and package spec
// adds the option it returns to every check of one embedding of the suite.
package runscope

// New returns a conformance.Option under which every check shares one run:
// once an adapter call hangs past its bound and never returns, later checks
// of the run report the hang at once instead of waiting out the bound
// again. It is set by package conformance.
var New func() any
