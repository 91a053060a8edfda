package eval

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints a report as compact tables: the headline per mode, then
// MRR and Recall@10 per category (and for adversarial queries).
func WriteTable(w io.Writer, rep *Report) error {
	if len(rep.Modes) == 0 {
		return nil
	}
	first := rep.Modes[0]
	pooled := ""
	if first.Pooled {
		pooled = " pooled in one memory"
	}
	fmt.Fprintf(w, "%d set(s)%s (%s), %d exchanges added in %.1fs; %d queries", len(first.Sets), pooled,
		strings.Join(first.Sets, ", "), rep.Exchanges, rep.BuildSeconds, first.Queries)
	if first.Adversarial.Queries > 0 {
		fmt.Fprintf(w, " (+%d adversarial, scored apart)", first.Adversarial.Queries)
	}
	fmt.Fprintf(w, "; k=%d; embedder %s, distiller %s\n\n", first.K, first.Embedder, first.Distiller)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tMRR\tR@5\tR@10\tnDCG@10\tAllEv@10\tseconds\tMRR 95% CI\tΔMRR vs default [95% CI]\t")
	for _, m := range rep.Modes {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%s\t%s\t\n", modeLabel(m), m.MRR, m.RecallAt5,
			m.RecallAt10, m.NDCGAt10, m.AllEvidenceRecallAt10, m.Seconds, ciText(m.MRRCI),
			vsText(m, func(v *VsDefault) (Diff, bool) { return v.Diff, true }))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	cats := Categories(first)
	if len(cats) > 1 || first.Adversarial.Queries > 0 {
		fmt.Fprintln(w, "\nMRR / R@10 per category (queries):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := []string{"mode"}
		for _, c := range cats {
			head = append(head, fmt.Sprintf("%s (%d)", catLabel(c, first.ByCategory[c].Name), first.ByCategory[c].Queries))
		}
		if first.Adversarial.Queries > 0 {
			head = append(head, fmt.Sprintf("adversarial (%d)", first.Adversarial.Queries))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, m := range rep.Modes {
			row := []string{modeLabel(m)}
			for _, c := range cats {
				x := m.ByCategory[c]
				row = append(row, fmt.Sprintf("%.3f / %.3f", x.MRR, x.RecallAt10))
			}
			if first.Adversarial.Queries > 0 {
				row = append(row, fmt.Sprintf("%.3f / %.3f", m.Adversarial.MRR, m.Adversarial.RecallAt10))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if hasVs(rep) {
			fmt.Fprintln(w, "\nΔMRR vs default per category [95% CI]:")
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, strings.Join(head[:1+len(cats)], "\t")+"\t")
			for _, m := range rep.Modes {
				row := []string{modeLabel(m)}
				for _, c := range cats {
					row = append(row, vsText(m, func(v *VsDefault) (Diff, bool) { d, ok := v.ByCategory[c]; return d, ok }))
				}
				fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	if len(first.BySet) > 1 {
		fmt.Fprintln(w, "\nMRR per set (queries), and ΔMRR vs default [95% CI]:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := []string{"set"}
		for _, m := range rep.Modes {
			head = append(head, modeLabel(m))
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, set := range first.Sets {
			x, ok := first.BySet[set]
			if !ok {
				continue // a set whose queries are all adversarial
			}
			row := []string{fmt.Sprintf("%s (%d)", set, x.Queries)}
			for _, m := range rep.Modes {
				cell := fmt.Sprintf("%.3f", m.BySet[set].MRR)
				if v := vsText(m, func(v *VsDefault) (Diff, bool) { d, ok := v.BySet[set]; return d, ok }); v != "" {
					cell += " " + v
				}
				row = append(row, cell)
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if hasVs(rep) {
		fmt.Fprintf(w, "\nIntervals: paired bootstrap over queries, %d resamples, seed %d; a Δ whose interval holds 0 is noise.\n",
			first.Bootstrap.Resamples, first.Bootstrap.Seed)
	}
	fmt.Fprintln(w, "\nA slot that collapses near-duplicate exchanges counts as relevant when any member is.")
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "Skipped (no %s): %s\n", QueriesFile, strings.Join(rep.Skipped, ", "))
	}
	return nil
}

func hasVs(rep *Report) bool {
	for _, m := range rep.Modes {
		if m.VsDefault != nil {
			return true
		}
	}
	return false
}

func ciText(ci []float64) string {
	if len(ci) != 2 {
		return "-"
	}
	return fmt.Sprintf("[%.3f, %.3f]", ci[0], ci[1])
}

// vsText prints a mode's difference from the default ("" for the default).
func vsText(m ModeReport, pick func(*VsDefault) (Diff, bool)) string {
	if m.VsDefault == nil {
		return ""
	}
	d, ok := pick(m.VsDefault)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%+.3f [%+.3f, %+.3f]", d.MRR, d.CI[0], d.CI[1])
}

func modeLabel(m ModeReport) string {
	if m.Default {
		return m.Mode + " (default)"
	}
	return m.Mode
}

func catLabel(key, name string) string {
	if name != "" && name != key {
		return key + " " + name
	}
	return key
}
