// Command fixturegen regenerates the fixture files of package fixtures from
// the code that defines them, deterministically: every run on every machine
// writes the same bytes.
//
// Usage, from the module root:
//
//	go run ./tools/fixturegen          # rewrite fixtures/data
//	go run ./tools/fixturegen -check   # report stale, missing and extra files
//
// With -check nothing is written; the command lists every file that is
// stale (differs from what would be generated), missing, or extra (present
// in the folder but produced by no generator), and exits with status 1 if
// there is any. Without -check it writes the generated files and removes
// extra ones.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ds4context/adapterkit/tools/fixturegen/internal/build"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command without the process around it; it returns the exit
// status.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fixturegen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	check := fl.Bool("check", false, "report stale, missing and extra files instead of writing")
	dir := fl.String("dir", "fixtures/data", "the fixtures data folder")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "fixturegen: unexpected arguments %q\n", fl.Args())
		return 2
	}
	explicit := false
	fl.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "dir" })
	if !explicit {
		// The default is relative: refuse to write a stray folder when the
		// command does not run from the module root.
		if _, err := os.Stat(filepath.Join(filepath.Dir(*dir), "doc.go")); err != nil {
			fmt.Fprintf(stderr, "fixturegen: %s is not the fixtures data folder; run from the module root or pass -dir\n", *dir)
			return 2
		}
	}
	files, err := build.Generate()
	if err != nil {
		fmt.Fprintf(stderr, "fixturegen: %v\n", err)
		return 1
	}
	if *check {
		problems, err := build.Check(*dir, files)
		if err != nil {
			fmt.Fprintf(stderr, "fixturegen: %v\n", err)
			return 1
		}
		for _, p := range problems {
			fmt.Fprintln(stdout, p)
		}
		if len(problems) > 0 {
			fmt.Fprintf(stderr, "fixturegen: %d fixture file(s) out of date in %s; run go run ./tools/fixturegen\n", len(problems), *dir)
			return 1
		}
		fmt.Fprintf(stdout, "fixturegen: %d fixture files are current\n", len(files))
		return 0
	}
	if err := build.Write(*dir, files); err != nil {
		fmt.Fprintf(stderr, "fixturegen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "fixturegen: wrote %d fixture files to %s\n", len(files), *dir)
	return 0
}
