package exchange

import (
	"strings"
)

// Render writes the exchange as a model would read it: roles, text, tool
// names, inputs and results, without JSON syntax. Token counts (compression,
// budgets) and the verbatim search field are taken over this text.
func (ex *Exchange) Render() string {
	var b strings.Builder
	ex.render(&b, &b)
	return b.String()
}

// RenderSplit is Render in two parts: talk holds the turns of the person and
// the agent and the tool calls (names and inputs), output the tools' results.
// Search weighs them apart: what was said and done is what people recall,
// while a tool's output (file reads, logs, grep hits) is mostly other text.
// Together they hold the words of Render, none split across the two.
func (ex *Exchange) RenderSplit() (talk, output string) {
	var t, o strings.Builder
	ex.render(&t, &o)
	return t.String(), o.String()
}

func (ex *Exchange) render(b, out *strings.Builder) {
	for i, t := range ex.Turns {
		if i > 0 {
			b.WriteString("\n\n")
		}
		switch t.Role {
		case RoleTool:
			b.WriteString("tool")
			if t.Name != "" {
				b.WriteString(" " + t.Name)
			}
			b.WriteString(":")
			if t.Input != nil {
				b.WriteString(" ")
				b.WriteString(renderValue(t.Input))
			}
			if t.Text != "" {
				if out != b && out.Len() > 0 {
					out.WriteString("\n\n")
				}
				out.WriteString("\n")
				out.WriteString(t.Text)
			}
		default:
			b.WriteString(t.Role)
			if sp, ok := t.Extra["speaker"].(string); ok && sp != "" {
				b.WriteString(" (" + sp + ")")
			}
			b.WriteString(": ")
			b.WriteString(t.Text)
		}
	}
}

// renderValue prints a tool input compactly: a lone string as is, an object
// as key=value pairs in canonical order.
func renderValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		c, _ := Canonical(x)
		return string(c)
	default:
		c, _ := Canonical(x)
		return string(c)
	}
}

// HeadTail returns the text of the first and of the last turn that is not a
// tool's: the message that opens the exchange and the words that close it.
func (ex *Exchange) HeadTail() (head, tail string) {
	for _, t := range ex.Turns {
		if t.Role == RoleTool || strings.TrimSpace(t.Text) == "" {
			continue
		}
		if head == "" {
			head = t.Text
		}
		tail = t.Text
	}
	return head, tail
}
