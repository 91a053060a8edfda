package eval

import (
	"math/rand/v2"
	"sort"
)

// The noise estimate: a paired bootstrap over queries (Efron & Tibshirani
// 1993; Sakai 2006 for IR). The queries of a set are resampled with
// replacement; each resample gives the MRR of a mode and, on the same
// queries, its difference from the default mode. The 2.5th and 97.5th
// percentiles bound the 95 % interval. A difference whose interval holds 0
// is noise on these queries. Every interval starts from the same seed, so a
// report is the same on every run.
const (
	BootstrapSeed      = 1
	BootstrapResamples = 1000
)

// Bootstrap names the resampling behind the intervals of a report.
type Bootstrap struct {
	Seed      uint64  `json:"seed"`
	Resamples int     `json:"resamples"`
	Level     float64 `json:"level"`
}

// Diff is a mode's MRR minus the default's on the same queries, with its
// 95 % paired-bootstrap interval.
type Diff struct {
	Queries int        `json:"queries"`
	MRR     float64    `json:"mrr"`
	CI      [2]float64 `json:"ci"`
}

// VsDefault is a mode's difference from the default, overall, per category
// and per set.
type VsDefault struct {
	Diff
	ByCategory map[string]Diff `json:"by_category"`
	BySet      map[string]Diff `json:"by_set,omitempty"`
}

// bootstrapCI returns the 95 % interval of the mean of x over resamples of
// its indices.
func bootstrapCI(x []float64) [2]float64 {
	n := len(x)
	if n == 0 {
		return [2]float64{}
	}
	rng := rand.New(rand.NewPCG(BootstrapSeed, 0))
	means := make([]float64, BootstrapResamples)
	for b := range means {
		var sum float64
		for range n {
			sum += x[rng.IntN(n)]
		}
		means[b] = sum / float64(n)
	}
	sort.Float64s(means)
	lo := means[int(0.025*float64(BootstrapResamples))]
	hi := means[int(0.975*float64(BootstrapResamples))-1]
	return [2]float64{round4(lo), round4(hi)}
}

// diff is the paired difference a − b over the same queries.
func diff(a, b []float64) Diff {
	d := make([]float64, len(a))
	var sum float64
	for i := range a {
		d[i] = a[i] - b[i]
		sum += d[i]
	}
	out := Diff{Queries: len(a), CI: bootstrapCI(d)}
	if len(a) > 0 {
		out.MRR = round4(sum / float64(len(a)))
	}
	return out
}
