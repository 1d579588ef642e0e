package localkv

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/ds4context/adapterkit/internal/jsonw"
)

// ErrTokenCountNotInteger is returned when decoding an eligibility input
// whose token count is a JSON number that is not an integer an int64 holds.
// EligibilityInput cannot express such a count; the contract's answer for
// it is ReasonInvalidTokenCount, which is what a caller should report.
var ErrTokenCountNotInteger = errors.New("localkv: token count is not an integer")

// eligibilityMembers are the members of an eligibility input's JSON form, in
// the order MarshalJSON writes them.
var eligibilityMembers = []string{
	"enabled", "capabilityEnabled", "capabilityVersion", "destination", "runtimeId", "runtimeRevision",
	"provider", "model", "modelRevision", "privacyPolicyVersion", "promptPrefix",
	"systemOptions", "toolOptions", "prefixTokenCount", "contextTokenCount",
}

// UnmarshalJSON reads the JSON form of an eligibility input, the shape the
// TypeScript kit's callers pass: every member by its camelCase name (names
// are case-sensitive and must not repeat), promptPrefix as a string, the two
// options as any JSON — kept raw, so an absent member stays nil (absent) and
// JSON null stays null — and the token counts as integers (a fraction is
// ErrTokenCountNotInteger). Every member but the options is required.
func (in *EligibilityInput) UnmarshalJSON(data []byte) error {
	var out EligibilityInput
	seen := make([]bool, len(eligibilityMembers))
	s := jsonw.NewScanner(data)
	err := s.Object(func(name string) error {
		i := slices.Index(eligibilityMembers, string(name))
		if i < 0 {
			return fmt.Errorf("localkv: eligibility input: unknown member %q", name)
		}
		if seen[i] {
			return fmt.Errorf("localkv: eligibility input: member %q appears twice", name)
		}
		seen[i] = true
		var err error
		switch eligibilityMembers[i] {
		case "enabled":
			out.Enabled, err = s.Bool()
		case "capabilityEnabled":
			out.CapabilityEnabled, err = s.Bool()
		case "capabilityVersion":
			out.CapabilityVersion, err = s.String()
		case "destination":
			out.Destination, err = s.String()
		case "runtimeId":
			out.RuntimeID, err = s.String()
		case "runtimeRevision":
			out.RuntimeRevision, err = s.String()
		case "provider":
			out.Provider, err = s.String()
		case "model":
			out.Model, err = s.String()
		case "modelRevision":
			out.ModelRevision, err = s.String()
		case "privacyPolicyVersion":
			out.PrivacyPolicyVersion, err = s.String()
		case "promptPrefix":
			var p string
			p, err = s.String()
			out.PromptPrefix = []byte(p)
		case "systemOptions", "toolOptions":
			var raw []byte
			if raw, err = s.Raw(); err == nil {
				opt := json.RawMessage(slices.Clone(raw))
				if eligibilityMembers[i] == "systemOptions" {
					out.SystemOptions = opt
				} else {
					out.ToolOptions = opt
				}
			}
		case "prefixTokenCount":
			out.PrefixTokenCount, err = tokenCount(s)
		case "contextTokenCount":
			out.ContextTokenCount, err = tokenCount(s)
		}
		if err != nil {
			return fmt.Errorf("localkv: eligibility input: %s: %w", name, err)
		}
		return nil
	})
	if err == nil {
		err = s.End()
	}
	if err != nil {
		return err
	}
	for i, ok := range seen {
		if name := eligibilityMembers[i]; !ok && name != "systemOptions" && name != "toolOptions" {
			return fmt.Errorf("localkv: eligibility input: member %q is missing", name)
		}
	}
	*in = out
	return nil
}

func tokenCount(s *jsonw.Scanner) (int64, error) {
	f, err := s.Number()
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<63-1024 {
		return 0, ErrTokenCountNotInteger
	}
	return int64(f), nil
}

// MarshalJSON writes the JSON form UnmarshalJSON reads, members in the
// order of the contract, absent options omitted. Options must be plain JSON
// (see DeriveEligibility) and the prompt prefix valid UTF-8: the JSON form
// carries it as a string.
func (in EligibilityInput) MarshalJSON() ([]byte, error) {
	if !utf8.Valid(in.PromptPrefix) {
		return nil, errors.New("localkv: eligibility input: prompt prefix is not valid UTF-8")
	}
	b := []byte{'{'}
	member := func(name string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = jsonw.AppendString(b, name)
		b = append(b, ':')
	}
	for _, name := range eligibilityMembers {
		switch name {
		case "enabled":
			member(name)
			b = strconv.AppendBool(b, in.Enabled)
		case "capabilityEnabled":
			member(name)
			b = strconv.AppendBool(b, in.CapabilityEnabled)
		case "prefixTokenCount":
			member(name)
			b = strconv.AppendInt(b, in.PrefixTokenCount, 10)
		case "contextTokenCount":
			member(name)
			b = strconv.AppendInt(b, in.ContextTokenCount, 10)
		case "systemOptions", "toolOptions":
			opt := in.SystemOptions
			if name == "toolOptions" {
				opt = in.ToolOptions
			}
			if opt == nil {
				continue
			}
			v, err := plainJSON(opt)
			if err != nil {
				return nil, fmt.Errorf("localkv: eligibility input: %s: %w", name, err)
			}
			member(name)
			if b, err = jsonw.AppendValue(b, v); err != nil {
				return nil, fmt.Errorf("localkv: eligibility input: %s: %w", name, err)
			}
		default:
			member(name)
			b = jsonw.AppendString(b, in.stringMember(name))
		}
	}
	return append(b, '}'), nil
}

func (in *EligibilityInput) stringMember(name string) string {
	switch name {
	case "capabilityVersion":
		return in.CapabilityVersion
	case "destination":
		return in.Destination
	case "runtimeId":
		return in.RuntimeID
	case "runtimeRevision":
		return in.RuntimeRevision
	case "provider":
		return in.Provider
	case "model":
		return in.Model
	case "modelRevision":
		return in.ModelRevision
	case "privacyPolicyVersion":
		return in.PrivacyPolicyVersion
	case "promptPrefix":
		return string(in.PromptPrefix)
	}
	return ""
}
