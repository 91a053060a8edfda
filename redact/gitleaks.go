package redact

import (
	"sort"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// detector is gitleaks' detector over its default rules, built on first
// use: parsing the embedded TOML and compiling ~220 regexps takes 120-250 ms
// on the reference machine (docs/BENCHMARKS.md), which processes that never
// redact (version, search, context) must not pay. A Detector only reads its
// config while detecting, so one serves every goroutine.
var detector = sync.OnceValues(func() (*detect.Detector, error) {
	// gitleaks logs to stderr at info level; a library must stay quiet.
	logging.Logger = zerolog.Nop()
	return detect.NewDetectorDefaultConfig()
})

// gitleaksSecret says whether a gitleaks finding's secret is one to replace:
// its generic rule flags placeholders and markers ours already wrote.
func gitleaksSecret(rule, v string) bool {
	if len(v) < 5 || strings.Contains(v, Marker) || strings.Contains(v, "REDACTED") {
		return false
	}
	if isPlaceholder(v) {
		return false
	}
	if strings.HasPrefix(rule, "generic") {
		// Its generic rule fires on "key"/"id" near any token. Measured on
		// the coding corpus: hex ids ("Key: 4c91a75b17aeb995.Test…"), React
		// keys (cuids) and UUIDs. Named assignments are our assign layer's.
		head, _, _ := strings.Cut(v, ".")
		if isHashOrID(v) || isHashOrID(head) || len(v) < 32 && countClass(v, isUpper) == 0 && !strings.ContainsAny(v, "+/=!#$%&*?@^~") {
			return false
		}
	}
	return true
}

// isHashOrID matches UUIDs and hex digests (git SHAs, md5, sha256): ids that
// gitleaks' generic rule takes for keys when a log line says "ID:" or "key".
func isHashOrID(v string) bool {
	h := strings.ReplaceAll(v, "-", "")
	if len(h) < 7 || len(h) > 128 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !isDigit(h[i]) && (h[i] < 'a' || h[i] > 'f') && (h[i] < 'A' || h[i] > 'F') {
			return false
		}
	}
	return !strings.Contains(v, "-") || len(v) == 36 && strings.Count(v, "-") == 4
}

// gitleaksChunk is the size of the fragments gitleaks is given: whole
// lines packed up to this many bytes. gitleaks walks its ~220 rules once
// per fragment and runs a rule over the whole fragment when one of its
// keywords occurs in it, so small fragments pay the walk and big ones the
// regexps. On one coding folder (docgen, 2.4 MB, shared machine): a line
// at a time 3.4-4.8 s, 256-1024 bytes 1.6-2.9 s, a whole exchange 9.2 s,
// all its strings joined 49 s.
const gitleaksChunk = 512

// gitleaks runs gitleaks' rules over text and learns every secret found, to
// be replaced wherever it occurs.
func (sc *scan) gitleaks(text string) {
	if len(text) < 8 {
		return
	}
	d, err := detector()
	if err != nil {
		// The embedded default config always parses; if a future version's
		// did not, our own layers still run.
		return
	}
	// Whole lines, packed into fragments of up to gitleaksChunk bytes.
	from, end := 0, 0
	for line := range strings.Lines(text) {
		if end > from && end-from+len(line) > gitleaksChunk {
			sc.learnFindings(d, text[from:end])
			from = end
		}
		end += len(line)
	}
	if end > from {
		sc.learnFindings(d, text[from:end])
	}
}

func (sc *scan) learnFindings(d *detect.Detector, line string) {
	fs := d.DetectString(line)
	// gitleaks keeps its rules in a map: its findings come in any order.
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.StartLine != b.StartLine {
			return a.StartLine < b.StartLine
		}
		if a.StartColumn != b.StartColumn {
			return a.StartColumn < b.StartColumn
		}
		return a.RuleID < b.RuleID
	})
	for _, f := range fs {
		v := strings.TrimSpace(f.Secret)
		if !gitleaksSecret(f.RuleID, v) {
			continue
		}
		sc.learn(v, f.RuleID)
		sc.force[v] = true
	}
}
