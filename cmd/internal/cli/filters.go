package cli

import (
	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory/reader"
)

// Filters are the FILTERS of the contract: --room --file --project
// --agent --session --since --until.
type Filters struct {
	rooms, files            []string
	project, agent, session string
	since, until            string
}

// Completer completes the values of a filter flag ("room", "project",
// "agent"); nil completes nothing.
type Completer func(field string) cobra.CompletionFunc

// Add defines the filter flags on cmd.
func (f *Filters) Add(cmd *cobra.Command, complete Completer) {
	cmd.Flags().StringArrayVar(&f.rooms, "room", nil, "only this room (type:key); repeatable")
	cmd.Flags().StringArrayVar(&f.files, "file", nil, "only exchanges that touched this path (or path suffix); repeatable")
	cmd.Flags().StringVar(&f.project, "project", "", "only this project (any case; the room form project:NAME works too)")
	cmd.Flags().StringVar(&f.agent, "agent", "", "only this agent")
	cmd.Flags().StringVar(&f.session, "session", "", "only this session")
	cmd.Flags().StringVar(&f.since, "since", "", "only exchanges at or after T (RFC 3339, 2026-03-01, or 2.weeks.ago)")
	cmd.Flags().StringVar(&f.until, "until", "", "only exchanges at or before T")
	if complete == nil {
		return
	}
	for _, field := range []string{"room", "project", "agent"} {
		_ = cmd.RegisterFlagCompletionFunc(field, complete(field))
	}
}

// Filter is the parsed filter; a bad time is an invalid request.
func (f *Filters) Filter() (reader.Filter, error) {
	return reader.FilterSpec{Rooms: f.rooms, Files: f.files, Project: f.project, Agent: f.agent,
		Session: f.session, Since: f.since, Until: f.until}.Filter()
}
