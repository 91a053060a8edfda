package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gitmem/git-mem/gitstore"
	"github.com/gitmem/git-mem/hooks"
	"github.com/gitmem/git-mem/hooks/hookinput"
	"github.com/gitmem/git-mem/memory/queue"
	"github.com/gitmem/git-mem/redact"
)

// Job is one piece of background work queued by a hook (queue.Job, the
// job file's format) and the file it was read from.
type Job struct {
	queue.Job
	file string
}

// maxAttempts is how often a job is tried before it is parked as failed.
const maxAttempts = 3

func (m *Memory) queueDir() string  { return filepath.Join(m.Repo.MemDir(), "queue") }
func (m *Memory) failedDir() string { return filepath.Join(m.queueDir(), "failed") }

// Enqueue stores a job for the worker.
func (m *Memory) Enqueue(j Job) error { return queue.Enqueue(m.queueDir(), j.Job, redactString) }

// writeJob stores a job: the final reply only as a digest, the prompts
// redacted (the queue is written before the worker redacts the rest).
func writeJob(path string, j Job) error { return queue.Write(path, j.Job, redactString) }

// redactString is also applied to the skipped records' messages: they quote
// a bad field's value ("time", "role"), which may be a secret, and they go to
// stderr, `--json` and the worker's log.
func redactString(s string) string {
	out, _ := redact.String(s)
	return out
}

// Jobs lists pending (or, with failed, parked) jobs, oldest first.
func (m *Memory) Jobs(failed bool) ([]Job, error) {
	dir := m.queueDir()
	if failed {
		dir = m.failedDir()
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Job
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var j Job
		if json.Unmarshal(b, &j) != nil {
			j = Job{Job: queue.Job{Kind: "unreadable", LastError: "job file is not JSON: " + p}}
		} else if failed && j.LastAssistantMessage != "" {
			// Written by a version that kept the final reply in clear
			// (a token was found in failed/): rewritten as a digest, its
			// prompts redacted. Only failed jobs: a pending one is the
			// worker's, which may be removing it right now (a rewrite would
			// bring it back), and it goes once stored.
			if err := writeJob(p, j); err == nil {
				j.LastAssistantDigest, j.LastAssistantMessage = hookinput.Digest(j.LastAssistantMessage), ""
			}
		}
		j.file = p
		out = append(out, j)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].file < out[k].file })
	return out, nil
}

// RunQueue works through the queue until it is empty, one worker per memory
// at a time (a second one returns at once). It is safe to kill: a job file
// is removed only after its exchanges are committed, and re-running a job
// stores nothing twice.
func (m *Memory) RunQueue(ctx context.Context, logf func(string, ...any)) error {
	for {
		l, ok, err := gitstore.TryLockFile(filepath.Join(m.Repo.MemDir(), "worker.lock"))
		if err != nil {
			return err
		}
		if !ok {
			return nil // another worker runs and will see our jobs
		}
		err = m.drain(ctx, logf)
		if err == nil {
			drops, _ := m.PruneFailed()
			for _, d := range drops {
				logf("dropped failed job %s (%s): %s", d.ID, d.Source, d.Reason)
			}
		}
		l.Unlock()
		if err != nil {
			return err
		}
		// A hook may have queued a job after our last look but before we
		// let go of the lock: look once more.
		jobs, _ := m.Jobs(false)
		if len(jobs) == 0 {
			return nil
		}
	}
}

func (m *Memory) drain(ctx context.Context, logf func(string, ...any)) error {
	for {
		jobs, err := m.Jobs(false)
		if err != nil || len(jobs) == 0 {
			return err
		}
		for _, j := range jobs {
			if err := ctx.Err(); err != nil {
				return err
			}
			rep, err := m.runJob(ctx, j)
			if err == nil {
				logf("stored %s %s: added %d, present %d, skipped %d", j.Kind, j.source(), rep.Added, rep.Present, len(rep.Skipped))
				for _, s := range rep.Skipped {
					logf("warning: %s (skipped)", s)
				}
				_ = os.Remove(j.file)
				continue
			}
			j.Attempts++
			j.LastError = err.Error()
			logf("error: %s %s (attempt %d): %v", j.Kind, j.source(), j.Attempts, err)
			if j.Attempts >= maxAttempts {
				if werr := writeJob(filepath.Join(m.failedDir(), filepath.Base(j.file)), j); werr == nil {
					_ = os.Remove(j.file)
				}
			} else {
				_ = writeJob(j.file, j)
			}
		}
		// Jobs that failed but may be retried stay; avoid spinning on them.
		left, _ := m.Jobs(false)
		retryOnly := true
		for _, l := range left {
			if l.Attempts == 0 {
				retryOnly = false
			}
		}
		if retryOnly {
			return nil
		}
	}
}

func (j Job) source() string {
	if j.Transcript != "" {
		return j.Transcript
	}
	if j.ThreadID == "" && j.SessionID != "" {
		return "session " + j.SessionID
	}
	return "thread " + j.ThreadID
}

// runJob reads the job's transcript and stores what is new.
func (m *Memory) runJob(ctx context.Context, j Job) (AddReport, error) {
	path := j.Transcript
	if j.Kind == "codex" && path == "" {
		home, _ := os.UserHomeDir()
		p, err := hooks.FindCodexRollout(hooks.CodexSessionsDir(home), j.ThreadID)
		if err != nil {
			return AddReport{}, err
		}
		path = p
	}
	if j.Kind == hooks.FormatCursor {
		return m.runCursorJob(ctx, j)
	}
	if j.Kind == hooks.FormatOpenCode {
		// The plugin reports a session gone idle: its turn is over.
		home, _ := os.UserHomeDir()
		store, err := hooks.OpenCodeSessionStore(home, j.SessionID)
		if err != nil {
			return AddReport{}, err
		}
		return m.AddFile(ctx, store, hooks.FormatOpenCode, hooks.Options{OnlySession: j.SessionID, Cwd: j.Cwd, TurnComplete: j.Event == "session.idle"}, AddOptions{excludable: true})
	}
	if path == "" {
		return AddReport{}, errors.New("the job names no transcript")
	}
	if j.Kind == hooks.FormatCopilotCLI && j.HookTimestamp != 0 {
		// Copilot CLI flushes events.jsonl every ~100 ms (a new session's
		// file may not exist yet when the hook runs): once the hook's own
		// run is in it, so is the turn it ends. Past the wait (a build
		// that records no hook.start), the file is read as it is, by then
		// flushed.
		hooks.WaitCopilotCLIHook(ctx, path, j.Event, j.HookTimestamp, copilotCLIHookWait)
	}
	ended := j.Event == "SessionEnd" || j.Kind == hooks.FormatCopilotCLI && j.Event == "sessionEnd"
	// Codex's notify, Gemini CLI's AfterAgent and the Cline CLI 3's
	// agent_end (its TaskComplete hook) report a finished turn:
	// that turn is closed. The hook may not have known the cwd, or the
	// config changed since: AddFile checks the exclusions against what the
	// transcript records.
	turnDone := j.Kind == "codex" && j.Event == "agent-turn-complete" || j.Kind == hooks.FormatGemini && j.Event == "AfterAgent" ||
		j.Kind == hooks.FormatCline && j.Event == "agent_end"
	return m.AddFile(ctx, path, j.Kind, hooks.Options{SessionEnded: ended,
		LastAssistantMessage: j.LastAssistantMessage, LastAssistantDigest: j.LastAssistantDigest,
		TurnComplete: turnDone, InputMessages: j.InputMessages, InputDigests: j.InputDigests, Cwd: j.Cwd}, AddOptions{excludable: true})
}

// copilotCLIHookWait is how long a Copilot CLI job waits for its hook's run
// to reach the transcript.
var copilotCLIHookWait = 10 * time.Second

// runCursorJob stores a Cursor conversation a stop hook reported: from the
// editor's database when it holds the chat (richer: times, tool results),
// else from the CLI's store.db of the chat, else from the transcript the
// hook named. The database may lag the hook by seconds, so its last
// exchange is closed only when its final reply is the transcript's; a
// later stop, or import, stores it otherwise.
func (m *Memory) runCursorJob(ctx context.Context, j Job) (AddReport, error) {
	done := j.Event == "stop"
	home, _ := os.UserHomeDir()
	for _, dir := range hooks.CursorGlobalDBs(home) {
		db := filepath.Join(dir, "state.vscdb")
		if _, err := os.Stat(db); err != nil {
			continue
		}
		if ok, err := hooks.CursorDBHasChat(db, j.SessionID); err != nil || !ok {
			continue
		}
		ro := hooks.Options{OnlySession: j.SessionID, Cwd: j.Cwd}
		if done && j.Transcript != "" {
			ro.LastAssistantMessage = hooks.CursorTranscriptFinalReply(j.Transcript)
		}
		return m.AddFile(ctx, db, hooks.FormatCursor, ro, AddOptions{excludable: true})
	}
	// Cursor's CLI keeps the chat in a store.db of its own (tool results
	// too); its last exchange closes the same way.
	if store := hooks.CursorCLIStore(home, j.SessionID); store != "" {
		ro := hooks.Options{OnlySession: j.SessionID, Cwd: j.Cwd}
		if done && j.Transcript != "" {
			ro.LastAssistantMessage = hooks.CursorTranscriptFinalReply(j.Transcript)
		}
		return m.AddFile(ctx, store, hooks.FormatCursor, ro, AddOptions{excludable: true})
	}
	if j.Transcript == "" {
		return AddReport{}, fmt.Errorf("cursor conversation %s: the hook named no transcript and no Cursor database on this machine holds it", j.SessionID)
	}
	return m.AddFile(ctx, j.Transcript, hooks.FormatCursor, hooks.Options{OnlySession: j.SessionID, Cwd: j.Cwd, TurnComplete: done}, AddOptions{excludable: true})
}

// LiveSession is how recently a transcript must have changed to be taken
// for a session still running.
const LiveSession = hooks.LiveSession

// ImportReport sums an import of many transcripts.
type ImportReport struct {
	Sessions int      `json:"sessions"`
	Added    int      `json:"added"`
	Present  int      `json:"present"`
	Excluded int      `json:"excluded"` // sessions the config's exclude keys skip
	Skipped  []string `json:"skipped"`
	// HeldBack counts the open last exchanges of transcripts written to in
	// the last LiveSession: their session may still be running, so they
	// are left for the agent's hook or a later import.
	HeldBack int `json:"held_back"`
}

// Import backfills every transcript of an agent under root (default: the
// agent's own folder). progress is called after each transcript.
func (m *Memory) Import(ctx context.Context, kind, root string, progress func(done, total int)) (ImportReport, error) {
	rep := ImportReport{Skipped: []string{}}
	files, err := hooks.ListSessions(kind, root)
	if err != nil {
		return rep, err
	}
	if m.Config.Excluded(kind, "") != "" {
		rep.Sessions, rep.Excluded = len(files), len(files)
		return rep, nil
	}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		// A transcript written to in the last minutes may be a live
		// session: its last exchange is left for the hook to close.
		ended := true
		if t := hooks.ChangedAt(f); !t.IsZero() && time.Since(t) < LiveSession {
			ended = false
			_, held, _ := readSession(f, kind)
			rep.HeldBack += held
		}
		ar, err := m.AddFile(ctx, f, kind, hooks.Options{SessionEnded: ended}, AddOptions{NoIndex: true, excludable: true})
		switch {
		case errors.Is(err, errRead):
			rep.Skipped = append(rep.Skipped, err.Error())
		case err != nil:
			return rep, fmt.Errorf("import %s: %w", f, err)
		case ar.excluded:
			rep.Excluded++
		default:
			rep.Skipped = append(rep.Skipped, ar.Skipped...)
			rep.Added += ar.Added
			rep.Present += ar.Present
		}
		rep.Sessions++
		if progress != nil {
			progress(i+1, len(files))
		}
	}
	if rep.Added > 0 {
		if _, err := m.UpdateIndex(ctx); err != nil {
			return rep, fmt.Errorf("imported, but indexing failed (run `git mem reindex`): %w", err)
		}
	}
	return rep, nil
}
