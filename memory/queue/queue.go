// Package queue is what a hook call does without the engine: read the
// agent's payload, write a job file under <gitdir>/mem/queue/ and start the
// detached worker. It imports only the standard library and two leaf
// packages, so the git-mem front binary serves `git mem hook claude-code`
// with the same code as package memory, without linking Bleve, go-git,
// gitleaks or the transcript readers (docs/BENCHMARKS.md, "Process start,
// the front binary"). Package memory runs the queue.
package queue

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gitmem/git-mem/hooks/hookinput"
	"github.com/gitmem/git-mem/internal/atomicfile"
)

// Job is one piece of background work queued by a hook: read a transcript
// and store its closed exchanges. Hooks only queue (they must return within
// a second); a detached worker does the rest. This is the job file's
// format.
type Job struct {
	Kind                 string    `json:"kind"` // claude-code | codex | aider
	Transcript           string    `json:"transcript,omitempty"`
	ThreadID             string    `json:"thread_id,omitempty"` // codex notify: the rollout is found by thread id
	SessionID            string    `json:"session_id,omitempty"`
	Cwd                  string    `json:"cwd,omitempty"`
	Event                string    `json:"event,omitempty"`
	LastAssistantMessage string    `json:"last_assistant_message,omitempty"` // never written: see Write
	LastAssistantDigest  string    `json:"last_assistant_digest,omitempty"`
	InputMessages        []string  `json:"input_messages,omitempty"` // older versions: the turn's prompts (redacted when written)
	InputDigests         []string  `json:"input_digests,omitempty"`  // codex notify, gemini AfterAgent: digests of the turn's prompts
	HookTimestamp        int64     `json:"hook_timestamp,omitempty"` // copilot-cli: the payload's timestamp (ms), which its transcript records with the hook's run
	Queued               time.Time `json:"queued"`
	Attempts             int       `json:"attempts"`
	LastError            string    `json:"last_error,omitempty"`
}

// FormatClaudeCode is the job kind of Claude Code's hooks (hooks.FormatClaudeCode).
const FormatClaudeCode = "claude-code"

// ClaudeJob reads a Claude Code hook's JSON (SessionEnd, PreCompact, Stop)
// and makes the job that stores its transcript.
//
// A stdin never closed must not hang the session (Claude Code gives the
// SessionEnd hooks 1.5 s in all): past a second it gives up, like
// SessionStart's.
func ClaudeJob(r io.Reader) (Job, error) {
	var in hookinput.Claude
	raw, err := hookinput.Read(r, time.Second)
	if err == nil {
		in, err = hookinput.ParseClaude(bytes.NewReader(raw))
	}
	if err == nil && in.TranscriptPath == "" {
		err = errors.New("claude-code hook input has no transcript_path")
	}
	return Job{Kind: FormatClaudeCode, Transcript: in.TranscriptPath, SessionID: in.SessionID,
		Cwd: in.Cwd, Event: in.HookEventName, LastAssistantMessage: in.LastAssistantMessage}, err
}

// ErrNeedsRedaction is Write's answer to a job holding prompt text when it
// was given no redactor: prompts may quote secrets, and nothing is written
// before redaction.
var ErrNeedsRedaction = errors.New("the job holds prompt text, which must be redacted before it is written")

// Write stores a job at path. The final reply is kept only as a digest
// (the worker only compares it); the prompts are passed through redact,
// and with redact nil a job holding prompts is refused (ErrNeedsRedaction).
func Write(path string, j Job, redact func(string) string) error {
	if j.LastAssistantMessage != "" {
		j.LastAssistantDigest = hookinput.Digest(j.LastAssistantMessage)
		j.LastAssistantMessage = ""
	}
	if len(j.InputMessages) > 0 {
		if redact == nil {
			return ErrNeedsRedaction
		}
		msgs := make([]string, len(j.InputMessages))
		for i, s := range j.InputMessages {
			msgs[i] = redact(s)
		}
		j.InputMessages = msgs
	}
	return atomicfile.Write(path, func(f *os.File) error { return json.NewEncoder(f).Encode(j) })
}

// Enqueue stores a job in dir (<gitdir>/mem/queue) under a name that sorts
// by the time it was queued.
func Enqueue(dir string, j Job, redact func(string) string) error {
	if j.Queued.IsZero() {
		j.Queued = time.Now().UTC()
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("%d-%s.json", j.Queued.UnixNano(), hex.EncodeToString(rnd[:]))
	return Write(filepath.Join(dir, name), j, redact)
}

// DisableEnv turns capture off for one session: set in an agent's
// environment, its hooks exit 0 and store nothing.
const DisableEnv = "GIT_MEM_DISABLE"

// CaptureDisabled reports whether DisableEnv is set to anything but "", "0",
// "false" or "no".
func CaptureDisabled() bool {
	switch strings.ToLower(os.Getenv(DisableEnv)) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// StartDetached runs exe as `argv0 --mem-dir <memDir> ARGS…` in its own
// session (setsid: it outlives the hook that started it and gets no
// terminal signals), output appended to logDir/logName, not waited for.
// Hooks use it for the worker and the card-cache warm-up: they must return
// at once. argv0 is what a test harness dispatches on.
func StartDetached(exe, argv0, memDir, logDir, logName string, args ...string) error {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(logDir, logName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := &exec.Cmd{Path: exe, Args: append([]string{argv0, "--mem-dir", memDir}, args...)}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s %v: %w", exe, args, err)
	}
	return cmd.Process.Release()
}

// Logger appends timestamped lines to logDir/name; when the log cannot be
// opened, lines are dropped (a hook must not fail over its log).
func Logger(logDir, name string) func(string, ...any) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return func(string, ...any) {}
	}
	f, err := os.OpenFile(filepath.Join(logDir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return func(string, ...any) {}
	}
	l := log.New(f, "", log.LstdFlags)
	return func(format string, a ...any) { l.Printf(format, a...) }
}
