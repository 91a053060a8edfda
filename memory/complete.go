package memory

import (
	"sort"
	"strings"
)

// FilterValues lists what --room, --project and --agent can take, from the
// card cache (no index, no blob read): shell completion calls it on every
// TAB. Each list is sorted; prefix keeps values starting with it (any case).
func (m *Memory) FilterValues(field, prefix string) ([]string, error) {
	entries, err := m.Entries()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range entries {
		switch field {
		case "room":
			for _, r := range e.Rooms {
				seen[r] = true
			}
		case "project":
			if e.Project != "" {
				seen[e.Project] = true
			}
		case "agent":
			if e.Agent != "" {
				seen[e.Agent] = true
			}
		}
	}
	out := []string{}
	for v := range seen {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(prefix)) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out, nil
}
