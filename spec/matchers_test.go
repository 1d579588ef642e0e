package spec_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/contract/conformance"
	"github.com/ds4context/adapterkit/examples/memadapter"
	"github.com/ds4context/adapterkit/spec"
)

var _ = ginkgo.Describe("the matchers on the example adapter", func() {
	var (
		s  *conformance.Session
		fx conformance.Fixture
	)
	ginkgo.BeforeEach(func(ctx context.Context) {
		var err error
		s, err = conformance.Start(ctx, memadapter.ConformanceFactory())
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		fx = s.Fixture()
		ginkgo.DeferCleanup(s.Close)
	})

	ginkgo.It("see a valid snapshot holding the fixture's history", func(ctx context.Context) {
		snap, err := s.Adapter().SnapshotHistory(ctx)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(snap).To(spec.BeValidSnapshot())
		gomega.Expect(&snap).To(spec.HoldHistory(fx.Messages))
		gomega.Expect(snap).NotTo(spec.HoldHistory(fx.Messages[:3]))
		gomega.Expect(snap).To(spec.BeMetadataOnly(conformance.ProbePrivateValue))
		gomega.Expect(snap).NotTo(spec.BeMetadataOnly("Inspect the reference project."))
	})

	ginkgo.It("see a transport failure's fallback and diagnostic, and no probe in either", func(ctx context.Context) {
		s.Transport().FailNext()
		r := s.Adapter().Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: conformance.PrivacyPayload()})
		gomega.Expect(r).To(spec.FallBackWith(contract.FallbackTransportFailed, true))
		gomega.Expect(r).NotTo(spec.FallBackWith(contract.FallbackTransportFailed, false))
		gomega.Expect(s.Adapter()).To(spec.HaveDiagnostic(contract.DiagnosticCompletionTransportFailed, contract.SeverityWarning))
		gomega.Expect(s.Adapter().Diagnostics()).NotTo(spec.HaveDiagnostic(contract.DiagnosticCompletionTransportFailed, contract.SeverityError))
		gomega.Expect(s.Adapter().Diagnostics()).To(spec.BeMetadataOnly(conformance.ProbePrivateValue, conformance.ProbeCredential))
		gomega.Expect(r).To(spec.BeMetadataOnly(conformance.ProbePrivateValue, conformance.ProbeCredential))
	})

	ginkgo.It("fail with metadata only", func(ctx context.Context) {
		snap, err := s.Adapter().SnapshotHistory(ctx)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		changed := contract.CloneMessages(fx.Messages)
		changed[0].Blocks[0] = &contract.TextBlock{Text: conformance.ProbePrivateValue}
		m := spec.HoldHistory(changed)
		gomega.Expect(m.Match(snap)).To(gomega.BeFalse())
		msg := m.FailureMessage(snap)
		gomega.Expect(msg).To(gomega.ContainSubstring("message #0 blocks[0].text"))
		gomega.Expect(conformance.ContainsProbe([]byte(msg))).To(gomega.BeFalse())
		gomega.Expect(msg).NotTo(gomega.ContainSubstring("Inspect"))

		leaky := spec.BeMetadataOnly("public", conformance.ProbeCredential)
		gomega.Expect(leaky.Match(errors.New("key " + conformance.ProbeCredential + "-1"))).To(gomega.BeFalse())
		gomega.Expect(leaky.FailureMessage(nil)).To(gomega.Equal("Expected metadata only, but it holds probe #2 of 2 (not shown)"))
		gomega.Expect(leaky.Match([]error{nil, errors.New("fine")})).To(gomega.BeTrue())

		_, err = spec.BeValidSnapshot().Match("not a snapshot")
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("expects a contract.HistorySnapshot")))
	})
})

// A failing matcher's message, as Gomega prints it, names what differs and
// never the history's text.
func ExampleHoldHistory() {
	s, err := conformance.Start(context.Background(), memadapter.ConformanceFactory())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close(context.Background())
	snap, _ := s.Adapter().SnapshotHistory(context.Background())
	want := s.Fixture().Messages
	want[3].Blocks[0] = &contract.TextBlock{Text: "The project is not ready."}
	g := gomega.NewGomega(func(message string, _ ...int) { fmt.Println(strings.TrimSpace(message)) })
	g.Expect(snap).To(spec.BeValidSnapshot())
	g.Expect(snap).To(spec.HoldHistory(want))
	// Output:
	// Expected the snapshot to hold the 4 canonical messages
	// rule:     the snapshot holds the canonical messages — all of them, in history order, every member as the runtime holds it, unknown members included
	// expected: the canonical messages
	// actual:   message #3 blocks[0].text: 25 bytes expected, 21 got
}

// FallBackWith and HaveDiagnostic check a completion's fallback and what
// the adapter recorded.
func ExampleFallBackWith() {
	ctx := context.Background()
	s, err := conformance.Start(ctx, memadapter.ConformanceFactory())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close(ctx)
	fx := s.Fixture()
	s.Transport().FailNext()
	r := s.Adapter().Complete(ctx, contract.CompletionRequest{Provider: fx.Model.Provider, Model: fx.Model.ID, Payload: conformance.PlainPayload()})
	g := gomega.NewGomega(func(message string, _ ...int) { fmt.Println(message) })
	g.Expect(r).To(spec.FallBackWith(contract.FallbackTransportFailed, true))
	g.Expect(s.Adapter()).To(spec.HaveDiagnostic(contract.DiagnosticCompletionTransportFailed, contract.SeverityWarning))
	g.Expect(r).To(spec.FallBackWith(contract.FallbackInvalidRequest, false))
	// Output:
	// Expected fallback "invalid-request" (retryable false), got fallback "transport-failed" (retryable true)
}
