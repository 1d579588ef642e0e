package main

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"time"

	"github.com/ds4context/adapterkit/contract"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemErr  string          `xml:"system-err,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	Skipped   *junitSkipped `xml:"skipped"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// junitXML renders the results as one JUnit test suite: a test case per
// check, classed "conformance" or "extended".
func junitXML(o *outcome) []byte {
	suite := junitSuite{
		Name: contract.ConformanceVersion,
		Time: seconds(o.Duration),
		Properties: []junitProperty{
			{Name: "contractVersion", Value: contract.ContractVersion},
			{Name: "target", Value: o.Target},
			{Name: "factory", Value: o.Factory},
		},
	}
	for _, c := range o.Checks {
		jc := junitCase{Name: c.ID, Classname: c.Kind, Time: seconds(c.Duration)}
		if c.Skipped {
			suite.Skipped++
			jc.Skipped = &junitSkipped{Message: c.Note}
		}
		if !c.Passed {
			suite.Failures++
			jc.Failure = &junitFailure{Message: c.Code, Type: c.Code}
			if f := c.Failure; f != nil {
				jc.Failure.Text = fmt.Sprintf("rule:     %s\nexpected: %s\nactual:   %s\n", f.Rule, f.Expected, f.Actual)
			}
			if c.Note != "" {
				jc.Failure.Text += "note:     " + c.Note + "\n"
			}
		}
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Tests = len(suite.Cases)
	for _, p := range o.Problems {
		suite.Errors++
		suite.SystemErr += p + "\n"
	}
	doc := junitSuites{Name: "adapterkit", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped,
		Time: suite.Time, Suites: []junitSuite{suite}}
	b, _ := xml.MarshalIndent(doc, "", "  ")
	return append([]byte(xml.Header), append(b, '\n')...)
}
