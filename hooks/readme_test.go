package hooks

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMEAgentTable ties the README's agent table to the code: the agents
// it says hooks capture are exactly HookAgents, each "yes" row names its
// install and each "no" row none, every agent `git mem import` or `add
// --format` names exists, and every reader is in the table.
func TestREADMEAgentTable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| agent | captured automatically |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "| "):
			rows = append(rows, line)
		case in:
			in = false
		}
	}
	if len(rows) < 10 {
		t.Fatalf("README agent table: %d rows", len(rows))
	}
	install := regexp.MustCompile("`git mem hook install ([a-z-]+)`")
	imp := regexp.MustCompile("`git mem import ([a-z-]+)")
	format := regexp.MustCompile("`git mem add --format ([a-z-]+)")
	var hooked, named []string
	for _, row := range rows {
		cells := strings.Split(row, "|")
		if len(cells) < 5 {
			t.Fatalf("row with %d cells: %s", len(cells), row)
		}
		auto := strings.TrimSpace(cells[2])
		m := install.FindAllStringSubmatch(auto, -1)
		switch {
		case strings.HasPrefix(auto, "yes") && len(m) == 1:
			hooked = append(hooked, m[0][1])
		case strings.HasPrefix(auto, "no") && len(m) == 0:
		default:
			t.Errorf("captured-automatically cell is neither \"yes: `git mem hook install X`\" nor \"no\": %s", auto)
		}
		named = append(named, nameAll(install, row)...)
		for _, a := range nameAll(imp, row) {
			if !slices.Contains(ImportAgents(), a) {
				t.Errorf("README: `git mem import %s`, not an import agent (%v)", a, ImportAgents())
			}
			named = append(named, a)
		}
		for _, f := range nameAll(format, row) {
			if !slices.Contains(Formats(), f) {
				t.Errorf("README: `--format %s`, not a format (%v)", f, Formats())
			}
			named = append(named, f)
		}
	}
	slices.Sort(hooked)
	want := slices.Sorted(slices.Values(HookAgents()))
	if !slices.Equal(hooked, want) {
		t.Errorf("README says hooks capture %v; the code installs %v", hooked, want)
	}
	all := slices.Compact(slices.Sorted(slices.Values(append(Formats(), ImportAgents()...))))
	for _, a := range all {
		if !slices.Contains(named, a) {
			t.Errorf("%s is read by git mem but no README row names it", a)
		}
	}
}

func nameAll(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
