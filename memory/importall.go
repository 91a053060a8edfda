package memory

import (
	"context"
	"errors"
	"io/fs"
	"sort"

	"github.com/gitmem/git-mem/hooks"
)

// Found is what a scan saw of one agent's sessions in one project.
type Found struct {
	Agent     string `json:"agent"`
	Project   string `json:"project"`
	Sessions  int    `json:"sessions"`
	Exchanges int    `json:"exchanges"`
}

// ScanReport is what `git mem import` finds before storing anything.
type ScanReport struct {
	Found    []Found  `json:"found"`
	Skipped  []string `json:"skipped"`
	HeldBack int      `json:"held_back"`
}

// ScanAgents reads every session of the given agents (all agents git mem
// imports when none are named) from their default folders under the
// user's home, or root for a single agent, and counts the closed exchanges
// per agent and project. It stores nothing: `import --dry-run` prints this,
// and `import` prints it before storing.
func ScanAgents(ctx context.Context, agents []string, root string) (ScanReport, error) {
	rep := ScanReport{Found: []Found{}, Skipped: []string{}}
	if len(agents) == 0 {
		agents = hooks.ImportAgents()
	}
	type key struct{ agent, project string }
	found := map[key]*Found{}
	for _, agent := range agents {
		files, err := hooks.ListSessions(agent, root)
		if err != nil {
			if root == "" && errors.Is(err, fs.ErrNotExist) {
				continue // the agent is not used on this machine
			}
			return rep, err
		}
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			res, held, err := readSession(f, agent)
			if err != nil {
				rep.Skipped = append(rep.Skipped, err.Error())
				continue
			}
			for _, p := range res.Problems {
				rep.Skipped = append(rep.Skipped, redactString(p.Error()))
			}
			rep.HeldBack += held
			projects := map[string]bool{}
			for _, ex := range res.Exchanges {
				k := key{agent, ex.Project}
				if found[k] == nil {
					found[k] = &Found{Agent: agent, Project: ex.Project}
				}
				found[k].Exchanges++
				if !projects[ex.Project] {
					projects[ex.Project] = true
					found[k].Sessions++
				}
			}
		}
	}
	for _, f := range found {
		rep.Found = append(rep.Found, *f)
	}
	sort.Slice(rep.Found, func(i, j int) bool {
		a, b := rep.Found[i], rep.Found[j]
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		return a.Project < b.Project
	})
	return rep, nil
}

// readSession reads one transcript as import does: a file written to in
// the last LiveSession may be a running session, so its last exchange is
// left open; heldBack counts the exchanges so left out.
func readSession(path, agent string) (res hooks.Result, heldBack int, err error) {
	if liveFile(path) {
		return readLive(path, agent, hooks.Options{SessionEnded: true})
	}
	res, err = hooks.ReadFile(path, agent, hooks.Options{SessionEnded: true})
	return res, 0, err
}

// Agents lists the agents of a scan that have something to store.
func (r ScanReport) Agents() []string {
	var out []string
	for _, f := range r.Found {
		if len(out) == 0 || out[len(out)-1] != f.Agent {
			out = append(out, f.Agent)
		}
	}
	return out
}
