package redact

import (
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
	if strings.HasPrefix(rule, "generic") && isPlaceholder(v) {
		return false
	}
	return true
}

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
	for _, f := range d.DetectString(text) {
		v := strings.TrimSpace(f.Secret)
		if !gitleaksSecret(f.RuleID, v) {
			continue
		}
		sc.learn(v, f.RuleID)
		sc.force[v] = true
	}
}
