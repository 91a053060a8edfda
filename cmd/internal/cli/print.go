package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory/reader"
)

// PrintJSON prints v as every --json answer is printed.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// PrintResults prints a search's hits as `git mem search` does.
func PrintResults(out, errOut io.Writer, asJSON bool, results []reader.Result, verbatim bool) error {
	if asJSON {
		return PrintJSON(out, results)
	}
	if len(results) == 0 {
		fmt.Fprintln(errOut, "git mem: no exchange matches (try fewer words, or drop a filter)")
		return nil
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s %s  %.3f", r.Short, r.Time.Format("2006-01-02"), r.Score)
		if len(r.Rooms) > 0 {
			fmt.Fprintf(out, "  [%s]", strings.Join(r.Rooms, ", "))
		}
		if len(r.Collapsed) > 0 {
			fmt.Fprintf(out, "  (+%d similar)", len(r.Collapsed))
		}
		fmt.Fprint(out, LinkMark(&r.Entry))
		fmt.Fprintf(out, "\n    %s\n", r.Core)
		if r.Context != "" {
			fmt.Fprintf(out, "    %s\n", r.Context)
		}
		if verbatim && r.Verbatim != "" {
			ex, err := exchange.Parse([]byte(r.Verbatim))
			if err == nil {
				fmt.Fprintln(out)
				PrintExchange(out, ex)
			}
		}
	}
	return nil
}

// PrintExchange renders an exchange for a person: one block per turn.
func PrintExchange(w io.Writer, ex *exchange.Exchange) {
	for _, t := range ex.Turns {
		head := t.Role
		if t.Role == exchange.RoleTool && t.Name != "" {
			head += " " + t.Name
		}
		if sp, ok := t.Extra["speaker"].(string); ok && sp != "" {
			head += " (" + sp + ")"
		}
		fmt.Fprintf(w, "── %s ──\n", head)
		if t.Input != nil {
			c, _ := exchange.Canonical(t.Input)
			fmt.Fprintf(w, "%s\n", c)
		}
		if t.Text != "" {
			fmt.Fprintln(w, strings.TrimRight(t.Text, "\n"))
		}
		fmt.Fprintln(w)
	}
}

// LinkMark is the one-line form of git-mem-core's printLinks.
func LinkMark(en *reader.Entry) string {
	s := ""
	if len(en.SupersededBy) > 0 {
		s += " (superseded)"
	}
	if en.Pinned {
		s += " (pinned)"
	}
	return s
}
