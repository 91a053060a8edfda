package hooks

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
)

// docAgent describes a reader added after the first three (Claude Code,
// Codex, Aider, which keep their own code paths): where its sessions live,
// which files are sessions, how to read and recognise one.
type docAgent struct {
	read  func(path string, opt Options) (Result, error)
	roots func(home string) []string // default folders; the first is the main one
	keep  func(path string, d fs.DirEntry) bool
	sniff func(path string, head []byte) bool
}

var docAgents = map[string]docAgent{
	FormatGemini: {
		read:  ReadGemini,
		roots: func(home string) []string { return []string{GeminiSessionsDir(home)} },
		keep: func(p string, d fs.DirEntry) bool {
			n := d.Name()
			return filepath.Base(filepath.Dir(p)) == "chats" && strings.HasPrefix(n, "session-") &&
				(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl"))
		},
	},
	AgentCline: {
		read:  ReadCline,
		roots: func(home string) []string { return ClineTaskRoots(home, false) },
		keep:  isClineTask,
		sniff: func(p string, _ []byte) bool { return filepath.Base(p) == clineTaskFile },
	},
	AgentRooCode: {
		read:  ReadCline,
		roots: func(home string) []string { return ClineTaskRoots(home, true) },
		keep:  isClineTask,
	},
	AgentContinue: {
		read:  ReadContinue,
		roots: func(home string) []string { return []string{ContinueSessionsDir(home)} },
		keep:  isContinueSession,
		sniff: func(_ string, head []byte) bool {
			return bytes.Contains(head, []byte(`"workspaceDirectory"`)) && bytes.Contains(head, []byte(`"history"`))
		},
	},
}

const clineTaskFile = "api_conversation_history.json"

func isClineTask(p string, d fs.DirEntry) bool { return d.Name() == clineTaskFile }

// docAgentOrder is the order Detect tries the sniffers in.
var docAgentOrder = []string{FormatGemini, AgentCline, AgentRooCode, AgentContinue}

// Formats lists the transcript formats ReadFile reads.
func Formats() []string {
	return append([]string{FormatClaudeCode, FormatCodex, FormatAider}, docAgentOrder...)
}

// ImportAgents lists the agents whose whole history `git mem import` reads
// from their own folders.
func ImportAgents() []string {
	return append([]string{FormatClaudeCode, FormatCodex}, docAgentOrder...)
}
