package cli

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"time"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
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
	Error     *junitFailure `xml:"error"`
	SystemOut string        `xml:"system-out,omitempty"`
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

// junitXML renders the report as one JUnit test suite: a test case per
// check, classed by its kind; a failed check is a failure, an errored one an
// error, a skipped one skipped with its reason.
func junitXML(target string, rep conformance.RunReport) []byte {
	suite := junitSuite{
		Name: contract.ConformanceVersion,
		Time: seconds(rep.Duration),
		Properties: []junitProperty{
			{Name: "contractVersion", Value: contract.ContractVersion},
			{Name: "reportVersion", Value: rep.Version},
			{Name: "target", Value: target},
			{Name: "factory", Value: rep.FactoryName},
		},
	}
	if rep.KitVersion != "" {
		suite.Properties = append(suite.Properties, junitProperty{Name: "kitVersion", Value: rep.KitVersion})
	}
	if c := rep.Campaign; c != nil {
		suite.Properties = append(suite.Properties, junitProperty{Name: "campaignSeed", Value: fmt.Sprintf("%#016x", c.Seed)})
		shard := fmt.Sprintf("%d/%d", c.Shard, c.Shards)
		if c.Shard == 0 {
			shard = fmt.Sprintf("all %d merged", c.Shards)
		}
		suite.Properties = append(suite.Properties, junitProperty{Name: "shard", Value: shard})
	}
	if len(rep.Limits) > 0 {
		suite.Properties = append(suite.Properties, junitProperty{Name: "limits", Value: conformance.LimitNames(rep.Limits)})
		for _, l := range rep.Limits {
			suite.Properties = append(suite.Properties, junitProperty{Name: "limit." + l.Name(), Value: l.Detail()})
		}
	}
	for _, c := range rep.Checks {
		jc := junitCase{Name: c.ID, Classname: string(c.Kind), Time: seconds(c.Duration), SystemOut: c.Note}
		switch c.Status {
		case conformance.StatusSkip:
			suite.Skipped++
			jc.Skipped = &junitSkipped{Message: c.SkipReason}
		case conformance.StatusFail, conformance.StatusError:
			f := c.Failure
			text := fmt.Sprintf("rule:     %s\nexpected: %s\nactual:   %s\n", f.Rule, f.Expected, f.Actual)
			for _, r := range c.Rerun {
				text += "rerun:    " + r + "\n"
			}
			if c.Status == conformance.StatusFail {
				suite.Failures++
				jc.Failure = &junitFailure{Message: f.Code, Type: f.Code, Text: text}
			} else {
				suite.Errors++
				jc.Error = &junitFailure{Message: f.Code, Type: f.Code, Text: text}
			}
		}
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Tests = len(suite.Cases)
	for _, p := range rep.Problems {
		suite.Errors++
		suite.SystemErr += p + "\n"
	}
	doc := junitSuites{Name: "adapterkit", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped,
		Time: suite.Time, Suites: []junitSuite{suite}}
	b, _ := xml.MarshalIndent(doc, "", "  ")
	return append([]byte(xml.Header), append(b, '\n')...)
}
