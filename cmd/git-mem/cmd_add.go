package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/hooks"
	"github.com/gitmem/git-mem/memory"
)

func init() { register(newAddCmd) }

// addBatch bounds how many exchanges are held in memory before a commit batch.
const addBatch = 2000

func newAddCmd(e *env) *cobra.Command {
	var format, project, agent string
	var noIndex bool
	cmd := &cobra.Command{
		Use:   "add [FILE|-]",
		Short: "Store exchanges (JSON Lines, or an agent transcript) as commits",
		Long: "Store each exchange of FILE (or standard input) as one commit on main. Exchanges already\n" +
			"stored are skipped, so adding the same file twice adds nothing. Bad records are reported\n" +
			"as file:line and skipped; the good ones are stored and the exit code is 3.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			path := "-"
			if len(a) == 1 {
				path = a[0]
			}
			rep, skipped, err := addPath(e, m, path, format, memory.AddOptions{Project: project, Agent: agent, NoIndex: noIndex})
			if err != nil {
				return err
			}
			return e.reportAdd(rep, skipped)
		},
	}
	cmd.Flags().StringVar(&format, "format", "auto", "input format: auto|exchange|claude-code|codex|aider")
	cmd.Flags().StringVar(&project, "project", "", "set the project of every exchange")
	cmd.Flags().StringVar(&agent, "agent", "", "set the agent of every exchange")
	cmd.Flags().BoolVar(&noIndex, "no-index", false, "do not update the search index now (the next search catches up)")
	return cmd
}

// addPath reads one input in the given format and stores it.
func addPath(e *env, m *memory.Memory, path, format string, opt memory.AddOptions) (memory.AddReport, []string, error) {
	var total memory.AddReport
	var skipped []string
	name := path
	if path == "-" {
		name = "<stdin>"
	}
	if format != "auto" && format != "exchange" && !slices.Contains(hooks.Formats(), format) {
		return total, nil, usagef("--format %q: use auto, exchange, %s", format, strings.Join(hooks.Formats(), ", "))
	}
	if format != "exchange" {
		// Transcript readers work on files; spool standard input to one.
		if path == "-" {
			f, err := os.CreateTemp("", "git-mem-add-*.jsonl")
			if err != nil {
				return total, nil, err
			}
			defer os.Remove(f.Name())
			if _, err := io.Copy(f, e.in); err != nil {
				f.Close()
				return total, nil, fmt.Errorf("read standard input: %w", err)
			}
			f.Close()
			path = f.Name()
		}
		if format == "auto" {
			det, err := hooks.Detect(path)
			if err != nil {
				return total, nil, fmt.Errorf("%s: %v: pass --format", name, err)
			}
			format = det
		}
	}
	if format != "exchange" {
		res, err := hooks.ReadFile(path, format, hooks.Options{SessionEnded: true})
		if err != nil {
			return total, nil, err
		}
		for _, p := range res.Problems {
			skipped = append(skipped, p.Error())
		}
		rep, err := m.Add(e.ctx, res.Exchanges, opt)
		return rep, skipped, err
	}
	var r io.Reader = e.in
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return total, nil, fmt.Errorf("open %s: %w", path, err)
		}
		defer f.Close()
		r = f
		name = filepath.Clean(path)
	}
	var batch []*exchange.Exchange
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		rep, err := m.Add(e.ctx, batch, opt)
		batch = batch[:0]
		if err != nil {
			return err
		}
		mergeReport(&total, rep)
		return nil
	}
	err := exchange.ReadJSONL(r, name, func(rec exchange.Record) error {
		if rec.Err != nil {
			skipped = append(skipped, rec.Err.Error())
			return nil
		}
		batch = append(batch, rec.Exchange)
		if len(batch) >= addBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return total, skipped, err
}

func mergeReport(dst *memory.AddReport, src memory.AddReport) {
	dst.Added += src.Added
	dst.Present += src.Present
	dst.Redacted += src.Redacted
	dst.Commits = append(dst.Commits, src.Commits...)
	dst.Indexed = dst.Indexed || src.Indexed
	if src.IndexErr != "" {
		dst.IndexErr = src.IndexErr
	}
}

// reportAdd prints the outcome and sets exit code 3 when records were skipped.
func (e *env) reportAdd(rep memory.AddReport, skipped []string) error {
	if rep.Commits == nil {
		rep.Commits = []memory.AddedCommit{}
	}
	rep.Skipped = skipped
	if rep.Skipped == nil {
		rep.Skipped = []string{}
	}
	if e.json {
		if err := e.printJSON(rep); err != nil {
			return err
		}
	} else {
		for _, s := range skipped {
			fmt.Fprintf(e.errOut, "git mem: %s (skipped)\n", s)
		}
		fmt.Fprintf(e.out, "added %d, already present %d", rep.Added, rep.Present)
		if len(skipped) > 0 {
			fmt.Fprintf(e.out, ", skipped %d", len(skipped))
		}
		if rep.Redacted > 0 {
			fmt.Fprintf(e.out, ", %d secrets redacted", rep.Redacted)
		}
		fmt.Fprintln(e.out)
		if rep.IndexErr != "" {
			fmt.Fprintf(e.errOut, "git mem: stored, but the index was not updated: %s\n", rep.IndexErr)
		}
	}
	if len(skipped) > 0 {
		e.exitCode = exitPartial
	}
	return nil
}
