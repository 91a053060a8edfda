package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/memory"
)

func init() {
	register(newPinCmd)
	register(newUnpinCmd)
	register(newPinsCmd)
	register(newSupersedeCmd)
}

func newPinCmd(e *env) *cobra.Command {
	var note, project string
	cmd := &cobra.Command{
		Use:   "pin <commit|exchange-id> | --note TEXT [--project P]",
		Short: "Pin an exchange or a note as a standing rule",
		Long: "Pin marks an exchange, or a short note, as a standing rule or preference: a commit of its\n" +
			"own (Mem-Kind: pin) that syncs like the exchanges. `git mem context` at session start shows\n" +
			"the project's pins before anything recalled.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			req := memory.PinRequest{Note: note, Project: project}
			if len(a) == 1 {
				req.Ref = a[0]
			}
			rep, err := m.Pin(cmd.Context(), req)
			if err != nil {
				return err
			}
			return printPinReport(e, rep, "pinned")
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "pin this text (a rule in a sentence or two) instead of an exchange")
	cmd.Flags().StringVar(&project, "project", "", "the project the pin belongs to (default: the exchange's; none for a note)")
	return cmd
}

func newUnpinCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "unpin <pin-id|commit|exchange-id>",
		Short: "Clear a pin (git mem pins lists them)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			rep, err := m.Unpin(cmd.Context(), a[0])
			if err != nil {
				return err
			}
			return printPinReport(e, rep, "unpinned")
		},
	}
}

func newPinsCmd(e *env) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:   "pins [--project P]",
		Short: "List the pinned rules, oldest first",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			pins, err := m.Pins(cmd.Context(), project)
			if err != nil {
				return err
			}
			if e.JSON {
				return e.printJSON(pins)
			}
			if len(pins) == 0 {
				fmt.Fprintln(e.errOut, "git mem: no pins: `git mem pin <commit>` or `git mem pin --note TEXT`")
				return nil
			}
			for _, p := range pins {
				text := p.Note
				if p.Entry != nil {
					text = p.Entry.Core
				}
				proj := ""
				if p.Project != "" {
					proj = " [" + p.Project + "]"
				}
				sup := ""
				if len(p.SupersededBy) > 0 {
					sup = " (superseded by " + strings.Join(p.SupersededBy, ", ") + ")"
				}
				fmt.Fprintf(e.out, "%s %s%s %s%s\n", p.ID, p.Time.Format("2006-01-02"), proj, text, sup)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "only this project's pins (and those of no project)")
	return cmd
}

func newSupersedeCmd(e *env) *cobra.Command {
	var clear bool
	cmd := &cobra.Command{
		Use:   "supersede <new> <old> [--clear]",
		Short: "State that one exchange replaces another (--clear withdraws it)",
		Long: "Supersede records that <new> replaces <old> (commits or exchange ids, or pinned note ids): a\n" +
			"commit of its own (Mem-Kind: supersede) that syncs. <old> is still found, ranked after <new>\n" +
			"and marked superseded. --clear withdraws the link, stated or derived.",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			rep, err := m.Supersede(cmd.Context(), a[0], a[1], clear)
			if err != nil {
				return err
			}
			verb := "superseded"
			if clear {
				verb = "cleared the supersession of"
			}
			return printPinReport(e, rep, verb)
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "withdraw the link")
	return cmd
}

func printPinReport(e *env, rep memory.PinReport, verb string) error {
	if e.JSON {
		return e.printJSON(rep)
	}
	by := ""
	if rep.New != "" {
		by = " by " + rep.New
	}
	fmt.Fprintf(e.out, "%s %s%s (commit %s)\n", verb, rep.ID, by, rep.Commit[:7])
	return nil
}
