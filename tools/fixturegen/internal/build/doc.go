// Package build generates the files of package fixtures from the code that
// defines them. Generation is deterministic: fixed inputs and seeds, sorted
// outputs, no timestamps, no map iteration, so every run on every machine
// produces the same bytes. Check compares a folder with what Generate
// produces.
package build
