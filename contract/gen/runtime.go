package gen

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/jsonw"
	"pgregory.net/rapid"
)

// Size returns a generator of sizes in [lo, hi] spread roughly evenly over
// the orders of magnitude between them (lo is raised to 1 for the scale),
// so that a property meets small, medium and very large inputs alike;
// smaller sizes are simpler for the shrinker.
func Size(lo, hi int) *rapid.Generator[int] {
	return rapid.Custom(func(t *rapid.T) int {
		if hi <= lo {
			return lo
		}
		if lo < 1 {
			if rapid.IntRange(0, 7).Draw(t, "sizeZero") == 0 {
				return lo
			}
			return logSize(t, 1, hi)
		}
		return logSize(t, lo, hi)
	})
}

// identifierRunes are the characters of Identifier beyond ASCII letters:
// combining marks (U+0301 acute, U+0308 diaeresis, U+20DD enclosing
// circle), precomposed letters whose decomposition is a base and a mark
// (é U+00E9, Å U+212B ANGSTROM SIGN), compatibility characters (ﬁ U+FB01,
// fullwidth Ａ U+FF21, ① U+2460, ² U+00B2, ㎏ U+338F), the case traps of
// stringClasses (the Kelvin sign U+212A, long s U+017F, U+0130, dotless i
// U+0131, capital sigma), a zero-width joiner, a noncharacter and
// characters outside the Basic Multilingual Plane. None is an ASCII digit,
// and none is removed by JavaScript's trim or by Go's TrimSpace.
var identifierRunes = []rune{
	'a', 'q', 'Z', '-', '_', '.',
	'\u0301', '\u0308', '\u20dd', '\u00e9', '\u212b',
	'\ufb01', '\uff21', '\u2460', '\u00b2', '\u338f', '\u212a',
	'\u017f', '\u0130', '\u0131', '\u03a3', '\ufdd0',
	'\u200d', '\U0001f600', '\U0001d400',
}

// Identifier returns a generator of non-blank identifier tails that
// Unicode normalisation or case mapping would change: combining marks
// after letters and on their own, precomposed and compatibility
// characters, case traps and characters outside the Basic Multilingual
// Plane; about one time in nine it ends in whitespace of stringClasses (which
// JavaScript's trim, Go's strings.TrimSpace, both or neither remove). Two
// drawn identifiers that differ only in normalisation (e + U+0301 and
// U+00E9) are different identifiers: an adapter must keep every one
// exactly as given. A tail holds no ASCII digit, so
// "<prefix><counter><tail>" stays unique per counter.
func Identifier() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		lead := rapid.SampledFrom([]string{"a", "e\u0301", "\u00e9", "\ufb01", "\uff21", "A\u030a", "\u212b", "\U0001f600"}).Draw(t, "identifierLead")
		return lead + rapid.StringOfN(rapid.SampledFrom(identifierRunes), 0, 6, -1).Draw(t, "identifierTail") + edge(t, "identifierEnd")
	})
}

// realisticProviders are provider names runtimes use; privacy's default
// configuration names the three local ones.
var realisticProviders = []string{
	"openai", "anthropic", "google", "gemini", "vertex", "azure-openai", "bedrock", "mistral",
	"cohere", "groq", "together", "fireworks", "deepseek", "xai", "openrouter", "perplexity",
	"ollama", "llama-cpp", "lmstudio", "vllm", "conformance-remote",
}

// lookAlike returns a name that resembles p: other casing, surrounding
// whitespace (trimmed by the provider policy), a suffix or prefix, a
// Cyrillic letter, a zero-width character, a separator swapped.
func lookAlike(t *rapid.T, p string) string {
	switch rapid.IntRange(0, 9).Draw(t, "lookAlike") {
	case 0:
		return strings.ToUpper(p)
	case 1:
		return " " + p + "\t"
	case 2:
		return p + "-remote"
	case 3:
		return "my-" + p
	case 4:
		return strings.Replace(p, "a", "\u0430", 1) // Cyrillic a
	case 5:
		return p + "\u200b"
	case 6:
		return strings.ReplaceAll(p, "-", ".")
	case 7:
		return strings.ReplaceAll(p, "-", "")
	case 8:
		return "\u00a0" + strings.ToUpper(p[:1]) + p[1:] + "\u3000"
	default:
		return strings.Replace(p, "o", "0", 1)
	}
}

// localProviders are the local providers of privacy's default
// configuration.
var localProviders = []string{"ollama", "llama-cpp", "lmstudio"}

// adversarialProvider draws a provider name that one class of
// stringClasses puts on the line between JavaScript's comparison (trimmed
// by trim, lower-cased by toLowerCase) and Go's: mostly a local provider
// that is local to one and remote to the other.
func adversarialProvider(t *rapid.T) string {
	p := rapid.SampledFrom(localProviders).Draw(t, "localProvider")
	switch rapid.IntRange(0, 8).Draw(t, "providerClass") {
	case 0:
		return "\ufeff" + p // local; remote to strings.TrimSpace
	case 1:
		return p + "\u0085" // remote; local to strings.TrimSpace
	case 2:
		return p + "\u180e" // remote; local to a whitespace table before Unicode 6.3
	case 3:
		return "\u2028" + strings.ToUpper(p) + "\u3000" // local; remote to an ASCII trim
	case 4:
		return "\r\n" + p + "\r" // local
	case 5:
		return "lm\u017ftudio" // remote; local to strings.EqualFold
	case 6:
		return "LMSTUD\u0130O" // remote; local to strings.ToLower
	case 7:
		return "lmstud\u0131o" // remote; local to a comparison upper-cased by strings.ToUpper
	default:
		return "DEEPSEE\u212a" // deepseek to toLowerCase; not to an ASCII lower-casing
	}
}

// Provider returns a generator of provider names: names of real
// providers (local and remote, the three local names of privacy's
// default configuration among them), as given and as look-alikes —
// casing, whitespace JavaScript's trim removes, suffixes, a Cyrillic
// letter, a zero-width space, another separator — and, one time in four,
// a name one class of stringClasses puts on the line between JavaScript's
// comparison and Go's: a local provider after a byte order mark (local)
// or before U+0085 (remote), with a Kelvin sign, a long s, a dotted
// capital I or a dotless i. A look-alike of a local provider is often
// remote: only the name trimmed and lower-cased as JavaScript does
// decides.
func Provider() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		switch rapid.IntRange(0, 3).Draw(t, "providerForm") {
		case 2:
			return lookAlike(t, rapid.SampledFrom(realisticProviders).Draw(t, "provider"))
		case 3:
			return adversarialProvider(t)
		}
		return rapid.SampledFrom(realisticProviders).Draw(t, "provider")
	})
}

// ModelDescriptor returns a generator of valid model descriptors
// (non-blank provider and id, contextWindow > 0) with every optional
// member present or absent: maxTokens, reasoning, input and cost. The
// provider is one Provider draws; the id is a known model's with an
// Identifier tail, or, one time in eight, an id at SPEC §11's bound of 256
// UTF-16 code units: 256 units in 255 runes and 258 bytes (valid), or 257
// units in 256 runes (one too long), so that counting runes or bytes
// instead of UTF-16 code units shows.
func ModelDescriptor() *rapid.Generator[contract.ModelDescriptor] {
	return rapid.Custom(func(t *rapid.T) contract.ModelDescriptor {
		d := contract.ModelDescriptor{
			Provider:      Provider().Draw(t, "modelProvider"),
			ContextWindow: int64(Size(1, 2_000_000).Draw(t, "contextWindow")),
		}
		switch rapid.IntRange(0, 15).Draw(t, "modelIdLength") {
		case 14:
			// 256 UTF-16 code units, the most SPEC §11 allows an
			// identifier, in 255 runes and 258 bytes.
			d.ID = strings.Repeat("m", 254) + "\U0001f600"
		case 15:
			// 257 UTF-16 code units, one too many, in 256 runes.
			d.ID = strings.Repeat("m", 255) + "\U0001f600"
		default:
			d.ID = rapid.SampledFrom([]string{"gpt-4o", "claude-sonnet", "llama3:8b", "m"}).Draw(t, "modelId") + Identifier().Draw(t, "modelIdTail")
		}
		if contract.IsBlank(d.Provider) {
			d.Provider = "p" + d.Provider
		}
		if rapid.Bool().Draw(t, "hasMaxTokens") {
			d.MaxTokens = new(int64(Size(0, 200_000).Draw(t, "maxTokens")))
		}
		if rapid.Bool().Draw(t, "hasReasoning") {
			d.Reasoning = new(rapid.Bool().Draw(t, "reasoning"))
		}
		if rapid.Bool().Draw(t, "hasInput") {
			d.Input = rapid.SliceOfN(rapid.SampledFrom([]string{"text", "image", "audio", "file"}), 1, 4).Draw(t, "input")
		}
		if rapid.Bool().Draw(t, "hasCost") {
			price := rapid.Map(rapid.IntRange(0, 100_000), func(i int) float64 { return float64(i) / 1000 })
			d.Cost = &contract.ModelCost{Input: price.Draw(t, "costInput"), Output: price.Draw(t, "costOutput"),
				CacheRead: price.Draw(t, "costCacheRead"), CacheWrite: price.Draw(t, "costCacheWrite")}
		}
		return d
	})
}

// longText returns a text of about n bytes: drawn words repeated, with
// the characters of textRunes among them.
func longText(t *rapid.T, n int) string {
	if n <= 0 {
		return ""
	}
	word := text().Draw(t, "word") + " "
	if n <= len(word) {
		return word
	}
	var b strings.Builder
	b.Grow(n + len(word))
	for b.Len() < n {
		b.WriteString(word)
	}
	return b.String()
}

// AppendedMessages returns a generator of messages to append, in order, at
// the end of a valid canonical history of runtimeID and sessionID: the
// history stays valid. The n-th append (n distinct per history) draws one
// of
//
//   - a message of any role holding content blocks of every type (text,
//     thinking, image, file, artifact and summary references, opaque
//     provider values), sometimes a text of up to 64 KiB, and about one
//     in eight an image whose mime type a normaliser changes;
//   - a tool exchange: an assistant message calling one to three tools and
//     a tool message answering them, or a call left waiting for its
//     result.
//
// Messages are dated or not, and dated ones are often out of order with
// the history. Ids are "<session>:append-<n>-<k><tail>" and call ids
// "append-call-<n>-<k><tail>", the tails drawn by Identifier: unique per n
// and unlike the ids History draws. The messages hold none of the families
// in leave (of the appended messages alone: a live call is one the append
// leaves waiting); it panics when leave holds a value that is not one of
// Families.
func AppendedMessages(runtimeID, sessionID string, n int, leave ...Family) *rapid.Generator[[]contract.Message] {
	set := familySetOf("AppendedMessages", leave)
	return rapid.Custom(func(t *rapid.T) []contract.Message {
		entry := func(k int) string {
			return "append-" + strconv.Itoa(n) + "-" + strconv.Itoa(k) + Identifier().Draw(t, "entryTail")
		}
		dated := func(m *contract.Message) {
			switch rapid.IntRange(0, 3).Draw(t, "dated") {
			case 0:
			case 1:
				m.CreatedAt = new(float64(1_700_000_000_000 + n*1000))
			default: // out of order: before everything, or anywhere
				m.CreatedAt = new(float64(rapid.Int64Range(0, 1_700_000_000_000).Draw(t, "createdAt")))
			}
			if rapid.IntRange(0, 3).Draw(t, "decorate") == 0 {
				// A runtime appends its own entries: runtime-session
				// provenance, so that an append checking the runtime id
				// (SPEC §12) takes every one.
				leave := set
				leave.add(FamilyPiSession)
				createdAt := m.CreatedAt
				drawDecoration(t, leave)(m, runtimeID)
				if m.CreatedAt == nil {
					m.CreatedAt = createdAt
				}
			}
		}
		if rapid.IntRange(0, 2).Draw(t, "exchange") != 0 {
			role := rapid.SampledFrom(roles).Draw(t, "role")
			blocks := rapid.SliceOfN(contentBlock(set), 0, 4).Draw(t, "blocks")
			if rapid.IntRange(0, 3).Draw(t, "large") == 0 {
				blocks = append(blocks, &contract.TextBlock{Text: longText(t, Size(1, 64<<10).Draw(t, "textBytes"))})
			}
			if !set.has(FamilyImage) && oneIn(t, "oddImage", 8) {
				// Image blocks are few among the drawn blocks: this one
				// carries a mime type a normaliser changes.
				blocks = append(blocks, &contract.ImageBlock{MimeType: new(rapid.SampledFrom(oddMimeTypes).Draw(t, "oddMimeType"))})
			}
			m := baseMessage(runtimeID, sessionID, entry(0), role, blocks)
			dated(&m)
			return []contract.Message{m}
		}
		most := 3
		if set.has(FamilyParallelBatch) || set.has(FamilyMultiResult) {
			most = 1
		}
		calls := rapid.IntRange(1, most).Draw(t, "calls")
		var callBlocks, resultBlocks []contract.Block
		for k := range calls {
			id := "append-call-" + strconv.Itoa(n) + "-" + strconv.Itoa(k) + Identifier().Draw(t, "callTail")
			c := newCall(t, id, set)
			callBlocks = append(callBlocks, c)
			resultBlocks = append(resultBlocks, newResult(t, id, c.Name, set))
		}
		if rapid.Bool().Draw(t, "callText") {
			callBlocks = append([]contract.Block{&contract.TextBlock{Text: text().Draw(t, "callText")}}, callBlocks...)
		}
		call := baseMessage(runtimeID, sessionID, entry(0), contract.RoleAssistant, callBlocks)
		dated(&call)
		if rapid.IntRange(0, 4).Draw(t, "live") == 0 && !set.has(FamilyLiveCall) {
			return []contract.Message{call}
		}
		result := baseMessage(runtimeID, sessionID, entry(1), contract.RoleTool, resultBlocks)
		dated(&result)
		return []contract.Message{call, result}
	})
}

// RewrittenMessage returns a generator of m changed in place: the same id,
// provenance and tool blocks (so a valid history stays valid and its tool
// atomic groups keep their members), with its other blocks, role of a
// message without tool blocks, createdAt or flags changed — or, now and
// then, nothing changed at all. What it changes draws none of the families
// in leave (what m holds already is kept); it panics when leave holds a
// value that is not one of Families.
func RewrittenMessage(m contract.Message, leave ...Family) *rapid.Generator[contract.Message] {
	set := familySetOf("RewrittenMessage", leave)
	return rapid.Custom(func(t *rapid.T) contract.Message {
		out := contract.CloneMessage(&m)
		tool, results := false, 0
		var kept []contract.Block
		for _, b := range out.Blocks {
			switch b.(type) {
			case *contract.ToolCallBlock, *contract.ToolResultBlock:
				tool = true
				kept = append(kept, b)
			}
			if _, ok := b.(*contract.ToolResultBlock); ok {
				results++
			}
		}
		switch rapid.IntRange(0, 5).Draw(t, "rewrite") {
		case 0: // unchanged
		case 1:
			at := float64(rapid.Int64Range(0, 1<<53).Draw(t, "createdAt"))
			if set.has(FamilyCreatedAtOutOfRange) {
				at = math.Mod(at, MaxDateMillis)
			}
			out.CreatedAt = &at
		case 2:
			if set.has(FamilyMessageFlags) {
				break
			}
			out.Flags.Pinned = new(!(out.Flags.Pinned != nil && *out.Flags.Pinned))
		case 3:
			if !tool {
				out.Role = rapid.SampledFrom(roles).Draw(t, "role")
			}
			fallthrough
		default:
			// Blocks beside a result are a family of their own.
			lo := 1
			if results > 0 && set.has(FamilyResultWithText) {
				lo = 0
			}
			blocks := rapid.SliceOfN(contentBlock(set), lo, 4).Draw(t, "blocks")
			if results > 0 && set.has(FamilyResultWithText) {
				blocks = nil
			}
			out.Blocks = append(kept, blocks...)
		}
		return out
	})
}

// EmbeddingTexts returns a generator of batches of texts to embed, of
// sizes across orders of magnitude up to maxBatch (at least 1), texts of
// up to 16 KiB among them, and the shapes an embedder may slip on: empty
// texts, texts without letters or digits, duplicates of an earlier text
// of the batch, whitespace only, and texts in several scripts.
func EmbeddingTexts(maxBatch int) *rapid.Generator[[]string] {
	return rapid.Custom(func(t *rapid.T) []string {
		n := Size(1, max(maxBatch, 1)).Draw(t, "batch")
		words := []string{"context", "上下文", "контекст", "🧭", "é", "tool result"}
		out := make([]string, n)
		for i := range out {
			switch rapid.IntRange(0, 9).Draw(t, "textKind") {
			case 0:
				out[i] = ""
			case 1:
				out[i] = rapid.SampledFrom([]string{"...", "!?", "—", " \t\n", "\u00a0", "🙂🙂", "\ufeff", "\u0085", "\r\n"}).Draw(t, "noLetters")
			case 2:
				if i > 0 {
					out[i] = out[rapid.IntRange(0, i-1).Draw(t, "duplicateOf")]
					continue
				}
				fallthrough
			case 3:
				out[i] = longText(t, Size(1, 16<<10).Draw(t, "textBytes"))
			default:
				out[i] = rapid.SampledFrom(words).Draw(t, "word") + " " + strconv.Itoa(i) + text().Draw(t, "text")
			}
		}
		return out
	})
}

// payloadPieces are the strings Payload builds content from: plain text,
// marker pairs and leading markers of every class and casing, broken
// marker structure, escaped markers and every secret shape privacy
// redacts.
var payloadPieces = []string{
	"plain words", "é 中 🙂", "[ds4:internal]internal note[/ds4:internal]",
	"[ds4:sensitive]sensitive note[/ds4:sensitive]", "[DS4:LOCAL-ONLY]local only[/ds4:local-only]",
	"[ds4:local-only]leading marker rest", "[/ds4:internal] stray close", "[ds4:sensitive] unclosed",
	"\\[ds4:local-only]escaped[/ds4:local-only]", "[ds4:internal]a[ds4:sensitive]b[/ds4:internal]",
	"sk-abcdefgh12345678", "ghp_abcdefghijkl1234", "AKIA0123456789ABCDEF", "Bearer abcdefgh.ijk",
	"api_key = \"hunter2hunter2\"", "password: s3cretvalue",
	"-----BEGIN RSA PRIVATE KEY-----\\nMIIB\\n-----END RSA PRIVATE KEY-----",
}

// classPayloadPieces are the shapes of payloadPieces under stringClasses,
// about one piece in eight of a payload: secrets whose whitespace is
// U+FEFF, CRLF or NBSP (secrets: JavaScript's \s holds them) or U+0085
// (none), markers spelt with a long s or a dotted capital I (no markers:
// classes match ASCII case-insensitively, not as Go's (?i) or
// strings.ToLower match them), secret names with a Kelvin sign or a long
// s (no secrets), and, last and so drawn least (a marker left open
// raises the whole payload's class, and hides what the others show), a
// leading marker after a byte order mark (leading: JavaScript's trim
// removes it) or after U+0085 (not leading).
var classPayloadPieces = []string{
	"Bearer\ufeffabcdefgh123", "PASSWORD\r\n:\r\n'hunter2x'",
	"[d\u017f4:local-only]long s[/d\u017f4:local-only]", "[DS4:\u0130NTERNAL]dotted capital I[/DS4:\u0130NTERNAL]",
	"[ds4:\u017fensitive]long s[/ds4:\u017fensitive]", "api_\u212aey=abcd1234efgh", "pa\u017f\u017fword: hunter2hunter2",
	"Bearer\u00a0abcdefgh123", "Bearer\u0085abcdefgh123",
	"\u0085[ds4:sensitive]not leading after U+0085", "\ufeff[ds4:local-only]leading after a byte order mark",
}

// oddPayloadKeys are member names one class of stringClasses puts on the
// line between JavaScript's lower-casing and Go's: a content key with a
// Kelvin sign (content: toLowerCase makes it thinking; an ASCII
// lower-casing does not) and look-alikes of content keys with a long s,
// a dotted capital I and a sharp s (no content keys; strings.EqualFold,
// strings.ToLower and full case folding take them for system,
// instructions and messages).
var oddPayloadKeys = []string{"thin\u212aing", "\u017fystem", "\u0130NSTRUCTIONS", "me\u00dfages"}

// Payload returns a generator of completion payloads as raw JSON, of sizes
// across orders of magnitude up to about maxBytes: mostly an object with
// messages (content strings and content parts), a system prompt, tools,
// metadata and, one time in three, a member whose name JavaScript and Go
// lower-case differently (oddPayloadKeys), whose strings hold marker pairs
// of every class, broken marker structure and secrets, also spelt with
// the characters of stringClasses; sometimes a value that is not an object
// (an array, a string, a number, null). Large payloads repeat drawn
// content, so a payload of a mebibyte costs little to draw.
func Payload(maxBytes int) *rapid.Generator[json.RawMessage] {
	return rapid.Custom(func(t *rapid.T) json.RawMessage {
		piece := func(label string) string {
			pieces := payloadPieces
			if oneIn(t, label+"Class", 8) {
				pieces = classPayloadPieces
			}
			return rapid.SampledFrom(pieces).Draw(t, label) + " " + plainText().Draw(t, label+"Text")
		}
		switch rapid.IntRange(0, 9).Draw(t, "payloadKind") {
		case 0:
			return jsonw.AppendString(nil, piece("stringPayload"))
		case 1:
			return json.RawMessage(rapid.SampledFrom([]string{"null", "0", "[]", "true", "-1.5e3"}).Draw(t, "scalarPayload"))
		case 2:
			b := []byte("[")
			for i := range rapid.IntRange(0, 3).Draw(t, "arrayPayload") {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonw.AppendString(b, piece("arrayItem"))
			}
			return append(b, ']')
		}
		size := Size(16, max(maxBytes, 16)).Draw(t, "payloadBytes")
		msgs := rapid.IntRange(1, 6).Draw(t, "payloadMessages")
		per := size / msgs
		b := []byte(`{"messages":[`)
		for i := range msgs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = jsonw.AppendString(b, rapid.SampledFrom([]string{"user", "assistant", "system", "tool"}).Draw(t, "payloadRole"))
			content := piece("content")
			for len(content) < per {
				content += " " + content
			}
			if rapid.Bool().Draw(t, "contentParts") {
				b = append(b, `,"content":[{"type":"text","text":`...)
				b = jsonw.AppendString(b, content)
				b = append(b, `}]}`...)
			} else {
				b = append(b, `,"content":`...)
				b = jsonw.AppendString(b, content)
				b = append(b, '}')
			}
		}
		b = append(b, ']')
		if rapid.Bool().Draw(t, "hasSystem") {
			b = append(b, `,"system":`...)
			b = jsonw.AppendString(b, piece("system"))
		}
		if rapid.Bool().Draw(t, "hasTools") {
			b = append(b, `,"tools":[{"name":"read","description":`...)
			b = jsonw.AppendString(b, piece("toolDescription"))
			b = append(b, `}]`...)
		}
		if rapid.Bool().Draw(t, "hasMetadata") {
			b = append(b, `,"metadata":{"note":`...)
			b = jsonw.AppendString(b, piece("metadata"))
			b = append(b, `},"model":"m"`...)
		}
		if oneIn(t, "hasOddKey", 3) {
			b = append(b, ',')
			b = jsonw.AppendString(b, rapid.SampledFrom(oddPayloadKeys).Draw(t, "oddKey"))
			b = append(b, ':')
			b = jsonw.AppendString(b, piece("oddKeyValue"))
		}
		return append(b, '}')
	})
}
