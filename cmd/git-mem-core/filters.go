package main

import (
	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory"
)

// filterFlags are the FILTERS of the contract: --room --file --project
// --agent --session --since --until.
type filterFlags struct {
	rooms, files            []string
	project, agent, session string
	since, until            string
}

func (f *filterFlags) add(cmd *cobra.Command, e *env) {
	cmd.Flags().StringArrayVar(&f.rooms, "room", nil, "only this room (type:key); repeatable")
	cmd.Flags().StringArrayVar(&f.files, "file", nil, "only exchanges that touched this path (or path suffix); repeatable")
	cmd.Flags().StringVar(&f.project, "project", "", "only this project (any case; the room form project:NAME works too)")
	cmd.Flags().StringVar(&f.agent, "agent", "", "only this agent")
	cmd.Flags().StringVar(&f.session, "session", "", "only this session")
	cmd.Flags().StringVar(&f.since, "since", "", "only exchanges at or after T (RFC 3339, 2026-03-01, or 2.weeks.ago)")
	cmd.Flags().StringVar(&f.until, "until", "", "only exchanges at or before T")
	for _, field := range []string{"room", "project", "agent"} {
		_ = cmd.RegisterFlagCompletionFunc(field, e.completeFilter(field))
	}
}

// completeFilter completes a filter flag with the values stored in the
// memory (its card cache); without a memory, nothing.
func (e *env) completeFilter(field string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		m, err := e.open()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		vals, err := m.FilterValues(field, prefix)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return vals, cobra.ShellCompDirectiveNoFileComp
	}
}

func (f *filterFlags) filter() (memory.Filter, error) {
	return memory.FilterSpec{Rooms: f.rooms, Files: f.files, Project: f.project, Agent: f.agent,
		Session: f.session, Since: f.since, Until: f.until}.Filter()
}
