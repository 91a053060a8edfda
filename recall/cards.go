package recall

import (
	"fmt"
	"strings"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
)

// maxHeaderQuery bounds how much of the query the header repeats: a pasted
// log as a query must not eat the budget.
const maxHeaderQuery = 120

// FormatCard renders one card for the block: a head line with what the agent
// needs to drill down (short commit id, date, project, rooms), then the core
// and the one specific detail. withProject is false when the block is about
// one project already; similar counts the identical cards folded into it.
func FormatCard(e *memory.Entry, withProject bool, similar int) string {
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(e.Short)
	b.WriteString(" ")
	b.WriteString(e.Time.UTC().Format("2006-01-02"))
	if withProject && e.Project != "" {
		b.WriteString(" ")
		b.WriteString(e.Project)
	}
	if len(e.Rooms) > 0 {
		b.WriteString(" | ")
		b.WriteString(strings.Join(e.Rooms, " "))
	}
	b.WriteString("]")
	if similar > 0 {
		fmt.Fprintf(&b, " (+%d similar)", similar)
	}
	if len(e.SupersededBy) > 0 {
		b.WriteString(" (superseded: a newer exchange replaced it)")
	}
	if e.Pinned {
		b.WriteString(" (pinned)")
	}
	b.WriteString("\n")
	b.WriteString(oneLine(e.Core))
	if c := oneLine(e.Context); c != "" {
		b.WriteString("\n")
		b.WriteString(c)
	}
	return Sanitize(b.String())
}

// FormatPin renders a pinned rule for the block: its id (what `git mem
// unpin` takes), date and project, then the rule or the pinned card.
func FormatPin(p *memory.Pin, withProject bool) string {
	var b strings.Builder
	b.WriteString("[pinned ")
	if p.Entry != nil {
		b.WriteString(p.Entry.Short)
	} else {
		b.WriteString(p.ID)
	}
	b.WriteString(" ")
	b.WriteString(p.Time.UTC().Format("2006-01-02"))
	if withProject && p.Project != "" {
		b.WriteString(" ")
		b.WriteString(p.Project)
	}
	b.WriteString("]")
	if len(p.SupersededBy) > 0 {
		b.WriteString(" (superseded)")
	}
	b.WriteString("\n")
	if p.Entry != nil {
		b.WriteString(oneLine(p.Entry.Core))
		if c := oneLine(p.Entry.Context); c != "" {
			b.WriteString("\n")
			b.WriteString(c)
		}
	} else {
		b.WriteString(oneLine(p.Note))
	}
	return Sanitize(b.String())
}

// FormatVerbatim renders an exchange the way a model reads it, under the same
// head line as its card, so packing verbatim text can be compared with
// packing cards (docs/bench/recall.md).
func FormatVerbatim(e *memory.Entry, ex *exchange.Exchange, withProject bool) string {
	head, _, _ := strings.Cut(FormatCard(e, withProject, 0), "\n")
	return head + "\n" + Sanitize(ex.Render())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// queryHeader introduces the cards found for a query.
func queryHeader(query string) string {
	q := oneLine(query)
	if r := []rune(q); len(r) > maxHeaderQuery {
		q = string(r[:maxHeaderQuery]) + "…"
	}
	return Sanitize(fmt.Sprintf("Past exchanges recalled by git mem for %q, best match first. "+
		"Each card: [commit date project | rooms], what was done, one detail. "+
		"Full exchange: `git mem show <commit> --verbatim`.", q))
}

// projectHeader introduces a project's recent work and its busiest rooms.
func projectHeader(project string, rooms []memory.RoomCount) string {
	var b strings.Builder
	if project != "" {
		fmt.Fprintf(&b, "Recent work in project %s recalled by git mem, newest first. ", oneLine(project))
	} else {
		b.WriteString("Recent work recalled by git mem, newest first. ")
	}
	b.WriteString("Each card: [commit date | rooms], what was done, one detail. " +
		"Full exchange: `git mem show <commit> --verbatim`; more: `git mem search <words>`.")
	if len(rooms) > 0 {
		b.WriteString("\nMost used rooms: ")
		for i, r := range rooms {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%d)", r.Room, r.Count)
		}
	}
	return Sanitize(b.String())
}
