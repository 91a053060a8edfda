package memory

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gitmem/git-mem/hooks"
)

// A failed job is data not yet stored: it stays in mem/queue/failed/ until
// a person retries or drops it (`git mem queue retry|drop`), or until it
// is moot — every exchange its transcript holds is in main, or the
// transcript is gone — when it is dropped on its own and the drop is
// recorded in mem/queue/dropped.jsonl, which status shows.

// DroppedJob is a failed job dropped on its own, and why.
type DroppedJob struct {
	ID     string    `json:"id"`
	Source string    `json:"source"`
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
}

// ErrNoSuchJob is a job id that is not in the failed queue.
var ErrNoSuchJob = errors.New("no such failed job")

func (j Job) id() string { return strings.TrimSuffix(filepath.Base(j.file), ".json") }

func (j Job) failedView() FailedJob {
	return FailedJob{ID: j.id(), Kind: j.Kind, Source: j.source(), Attempts: j.Attempts, Error: j.LastError}
}

// FailedJobs lists the parked jobs.
func (m *Memory) FailedJobs() ([]FailedJob, error) {
	jobs, err := m.Jobs(true)
	out := make([]FailedJob, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j.failedView())
	}
	return out, err
}

// pickFailed returns the failed jobs named by ids (all with all).
func (m *Memory) pickFailed(ids []string, all bool) ([]Job, error) {
	jobs, err := m.Jobs(true)
	if err != nil {
		return nil, err
	}
	if all {
		return jobs, nil
	}
	byID := map[string]Job{}
	for _, j := range jobs {
		byID[j.id()] = j
	}
	var out []Job
	for _, id := range ids {
		j, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("%w %q: `git mem queue` lists them", ErrNoSuchJob, id)
		}
		out = append(out, j)
	}
	return out, nil
}

// RetryFailed moves failed jobs back into the queue with a fresh count of
// attempts; the caller starts the worker (or runs RunQueue).
func (m *Memory) RetryFailed(ids []string, all bool) (int, error) {
	jobs, err := m.pickFailed(ids, all)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs {
		j.Attempts, j.LastError = 0, ""
		if err := writeJob(filepath.Join(m.queueDir(), filepath.Base(j.file)), j); err != nil {
			return n, fmt.Errorf("requeue %s: %w", j.id(), err)
		}
		if err := os.Remove(j.file); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// DropFailed deletes failed jobs a person chose to give up.
func (m *Memory) DropFailed(ids []string, all bool) (int, error) {
	jobs, err := m.pickFailed(ids, all)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs {
		if err := os.Remove(j.file); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// PruneFailed drops the failed jobs that are moot (see above) and records
// each drop.
func (m *Memory) PruneFailed() ([]DroppedJob, error) {
	jobs, err := m.Jobs(true)
	if err != nil {
		return nil, err
	}
	var out []DroppedJob
	for _, j := range jobs {
		reason := m.mootReason(j)
		if reason == "" {
			continue
		}
		d := DroppedJob{ID: j.id(), Source: j.source(), Reason: reason, Time: time.Now().UTC()}
		if err := m.recordDrop(d); err != nil {
			return out, err
		}
		if err := os.Remove(j.file); err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

// mootReason says why a failed job no longer holds unstored data ("" when
// it may).
func (m *Memory) mootReason(j Job) string {
	if j.Transcript == "" {
		return ""
	}
	if _, err := os.Stat(j.Transcript); errors.Is(err, os.ErrNotExist) {
		return "its transcript is gone"
	}
	res, err := hooks.ReadFile(j.Transcript, j.Kind, hooks.Options{SessionEnded: j.Event == "SessionEnd", LastAssistantMessage: j.LastAssistantMessage})
	if err != nil || len(res.Exchanges) == 0 || len(res.Problems) > 0 {
		return ""
	}
	for _, ex := range res.Exchanges {
		if ex.ID == "" {
			return "" // content ids depend on redaction: not provable here
		}
	}
	// Present as add finds it: an id a rewritten history reused for
	// another exchange is not (lookupItems, classify).
	items := prepareAdd(res.Exchanges, AddOptions{})
	st, _, err := m.classify(items, claims{})
	if err != nil {
		return ""
	}
	for _, s := range st {
		if s != stPresent {
			return ""
		}
	}
	return fmt.Sprintf("all %d exchanges of its transcript are in main", len(items))
}

func (m *Memory) dropLog() string { return filepath.Join(m.queueDir(), "dropped.jsonl") }

func (m *Memory) recordDrop(d DroppedJob) error {
	if err := os.MkdirAll(m.queueDir(), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(m.dropLog(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	return json.NewEncoder(f).Encode(d)
}

// dropShown is how long status keeps listing a drop.
const dropShown = 7 * 24 * time.Hour

func (m *Memory) recentDrops() []DroppedJob {
	out := []DroppedJob{}
	f, err := os.Open(m.dropLog())
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var d DroppedJob
		if json.Unmarshal(sc.Bytes(), &d) == nil && time.Since(d.Time) < dropShown {
			out = append(out, d)
		}
	}
	return out
}
