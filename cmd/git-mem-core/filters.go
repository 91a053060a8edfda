package main

import (
	"github.com/spf13/cobra"
)

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
