// Package front is the git-mem front binary: the program git runs for
// `git mem …`. Go runs every linked package's initialiser before main, and
// the whole of git mem links Bleve, go-git, gitleaks, openai-go and SQLite:
// ~20 ms of CPU and ~35 MB before the first line of main
// (docs/BENCHMARKS.md, "Process start, the front binary"). Every hook call
// pays process start, so the front, which links none of them, answers
// `git mem version` and `git mem hook claude-code` itself (the hook only
// queues a job and starts the worker, package memory/queue) and replaces
// itself (execve) with the full binary, git-mem-core, for everything else:
// other commands, their --help, and any case whose handling it cannot
// reproduce exactly (no memory, a config file, a distiller chosen by the
// environment, a Codex or Gemini payload whose prompts gitleaks must
// redact before they are written). A `git mem search` it first offers to
// the memory's warm search process, when one runs (cmd/internal/warm),
// and prints that one's answer; else it replaces itself with
// git-mem-search (cmd/internal/searchbin), which links only the read path
// and hands the search over to git-mem-core in turn when it needs more.
package front

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/gitmem/git-mem/cmd/internal/warm"
	"github.com/gitmem/git-mem/memory/queue"
)

// CoreName is the full binary's name, installed beside git-mem by
// `go install ./cmd/...`.
const CoreName = "git-mem-core"

// SearchName is the search-only binary's name (cmd/git-mem-search), which
// links the read path alone and starts in half the time of git-mem-core
// (docs/BENCHMARKS.md, session 24); installed beside git-mem too.
const SearchName = "git-mem-search"

// Main runs the front with version (the -X main.version of the build, or
// "") and returns the exit code; it does not return when it hands over to
// git-mem-core.
func Main(version string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cl, ok := parse(args)
	switch {
	case ok && len(cl.words) == 1 && cl.words[0] == "version":
		v := Version(version)
		if cl.json {
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			_ = enc.Encode(map[string]string{"version": v})
			return 0
		}
		fmt.Fprintln(stdout, "git mem "+v)
		return 0
	case ok && len(cl.words) == 2 && cl.words[0] == "hook" && cl.words[1] == queue.FormatClaudeCode:
		if done := claudeHook(cl, stdin, stderr); done {
			return 0
		}
	default:
		if code, done := warmSearch(args, stdout, stderr); done {
			return code
		}
		if _, ok := SearchCall(args); ok {
			execSearch(args)
		}
	}
	return ExecCore(args, cl.json, stdout, stderr)
}

// cmdline is what the front understood of the arguments.
type cmdline struct {
	words  []string
	memDir string
	json   bool
}

// parse reads the global flags and the command words; ok is false for
// anything else (another flag, -h, "--"), which git-mem-core then parses.
func parse(args []string) (cmdline, bool) {
	var cl cmdline
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--json" || a == "--json=true":
			cl.json = true
		case a == "--mem-dir" && i+1 < len(args):
			i++
			cl.memDir = args[i]
		case strings.HasPrefix(a, "--mem-dir="):
			cl.memDir = strings.TrimPrefix(a, "--mem-dir=")
		case a != "" && !strings.HasPrefix(a, "-"):
			cl.words = append(cl.words, a)
		default:
			return cl, false
		}
	}
	return cl, true
}

// warmSearch asks the memory's warm search process (cmd/internal/warm)
// to run a `git mem search` and prints its answer: done is false, nothing
// printed, when there is none or it declines, and git-mem-core runs the
// search itself.
func warmSearch(args []string, stdout, stderr io.Writer) (code int, done bool) {
	if warm.Disabled(os.Getenv) {
		return 0, false
	}
	for _, k := range warm.ColdEnvNames {
		if os.Getenv(k) != "" {
			return 0, false
		}
	}
	memDir, ok := SearchCall(args)
	if !ok {
		return 0, false
	}
	dir := cmdline{memDir: memDir}.resolveMemDir()
	sock := warm.SockPath(dir)
	if len(sock) > warm.MaxSockPath {
		return 0, false
	}
	cwd, err := os.Getwd()
	if err != nil {
		return 0, false
	}
	req := warm.Request{Args: args, Cwd: cwd, Dir: dir, MemDirEnv: os.Getenv("GIT_MEM_DIR"), Env: warm.EnvDigest(os.LookupEnv)}
	rep, out, errOut, err := warm.Ask(sock, req, warmTimeout)
	if err != nil {
		return 0, false
	}
	_, _ = stdout.Write(out)
	_, _ = stderr.Write(errOut)
	return rep.Code, true
}

// warmTimeout bounds a search by a warm search process, after which the
// front runs it cold (a search reads only: running it again is safe). A
// warm search does no index work: it only waits, like any reader, for a
// writer's hold of the index lock (a catch-up batch, about a second).
const warmTimeout = 10 * time.Second

// SearchCall says whether args are a `git mem search` the warm process
// or git-mem-search may answer (global flags --json and --mem-dir, the word search, then
// anything but help) and which --mem-dir they give (pflag: the last one
// wins; "--" ends the flags). The warm process checks the memory again
// from its own parse of the arguments.
func SearchCall(args []string) (memDir string, ok bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "search":
		case a == "--json" || a == "--json=true" || a == "--json=false":
			continue
		case a == "--mem-dir" && i+1 < len(args):
			i++
			memDir = args[i]
			continue
		case strings.HasPrefix(a, "--mem-dir="):
			memDir = strings.TrimPrefix(a, "--mem-dir=")
			continue
		default:
			return "", false
		}
		break
	}
	if i == len(args) {
		return "", false
	}
	for i++; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return memDir, true
		case a == "--help" || strings.HasPrefix(a, "--help=") || strings.HasPrefix(a, "-h") || a == "help":
			return "", false
		case a == "--mem-dir" && i+1 < len(args):
			i++
			memDir = args[i]
		case strings.HasPrefix(a, "--mem-dir="):
			memDir = strings.TrimPrefix(a, "--mem-dir=")
		}
	}
	return memDir, true
}

// memDir applies --mem-dir, then GIT_MEM_DIR, then ~/.git-mem, made
// absolute, as the full binary does.
func (cl cmdline) resolveMemDir() string {
	d := cl.memDir
	if d == "" {
		d = os.Getenv("GIT_MEM_DIR")
	}
	if d == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			d = ".git-mem"
		} else {
			d = filepath.Join(home, ".git-mem")
		}
	}
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// claudeHook is `git mem hook claude-code` as memory.QueueHook does it,
// for the common case: a memory with no config file and the default
// distiller. It reports false, having read nothing, when git-mem-core must
// answer instead (its errors, its config, its exclusions).
func claudeHook(cl cmdline, stdin io.Reader, stderr io.Writer) bool {
	if queue.CaptureDisabled() {
		return true // capture is off for this session: touch nothing
	}
	dir := cl.resolveMemDir()
	if !plainMemory(dir) {
		return false
	}
	memDir := filepath.Join(dir, "mem")
	logDir := filepath.Join(memDir, "log")
	logf := queue.Logger(logDir, "hook.log")
	job, err := queue.ClaudeJob(stdin)
	if err == nil {
		if err = queue.Enqueue(filepath.Join(memDir, "queue"), job, nil); err != nil {
			err = fmt.Errorf("queue %s: %w", job.Kind, err)
		}
	}
	if err != nil {
		logf("error: %v", err)
		fmt.Fprintf(stderr, "git mem: hook: %v\n", err)
		return true
	}
	core, err := CorePath()
	if err == nil {
		err = queue.StartDetached(core, CoreName, dir, logDir, "worker.log", "worker")
	}
	if err != nil {
		logf("error: start worker: %v", err)
	}
	return true
}

// plainMemory says whether dir is a memory repo that git-mem-core would
// open with its defaults: no config file (exclusions, an LLM distiller)
// and no distiller or embedder chosen by the environment. Anything else
// goes to git-mem-core, which reports and applies it.
func plainMemory(dir string) bool {
	for _, p := range []string{filepath.Join(dir, "objects"), filepath.Join(dir, "HEAD")} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	configs := []string{filepath.Join(dir, "mem", "config.yaml")}
	if home, err := os.UserHomeDir(); err == nil {
		configs = append(configs, filepath.Join(home, ".config", "git-mem", "config.yaml"))
	}
	for _, p := range configs {
		if _, err := os.Lstat(p); err == nil || !os.IsNotExist(err) {
			return false
		}
	}
	return os.Getenv("GIT_MEM_DISTILLER") == "" && os.Getenv("GIT_MEM_EMBEDDER") == ""
}

// CorePath finds git-mem-core: beside this binary (where go install puts
// both), else on PATH.
func CorePath() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(exe), CoreName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(CoreName); err == nil {
		return p, nil
	}
	where := "this binary"
	if exe != "" {
		where = exe
	}
	return "", fmt.Errorf("%s is not beside %s nor on PATH: install both binaries with `go install ./cmd/...` in a checkout, or `go install github.com/gitmem/git-mem/cmd/...@latest`", CoreName, where)
}

// execSearch replaces this process with git-mem-search and the same
// arguments, environment and streams, when it is beside this binary (only
// there: one elsewhere on PATH may be of another version); it returns when
// it is not, and git-mem-core runs the search.
func execSearch(args []string) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	p := filepath.Join(filepath.Dir(exe), SearchName)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return
	}
	_ = syscall.Exec(p, append([]string{SearchName}, args...), os.Environ())
}

// ExecCore replaces this process with git-mem-core and the same
// arguments, environment and streams. argv[0] is CoreName (a test harness
// dispatches on it).
func ExecCore(args []string, asJSON bool, stdout, stderr io.Writer) int {
	core, err := CorePath()
	if err == nil {
		err = syscall.Exec(core, append([]string{CoreName}, args...), coreEnv(args, os.Environ()))
		err = fmt.Errorf("run %s: %w", core, err)
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"error": err.Error(), "code": 1})
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintln(stderr, "git mem: "+err.Error())
	}
	return 1
}

// coreEnv is env for git-mem-core running args. The processes that live as
// long as a session, `mcp` and `ui`, get GODEBUG=clobberfree=1: the
// collector then overwrites every object it frees, so after a forget
// (memory.FreeHeap) no freed copy of the forgotten text stays in the
// process. It is read only at a process's start, hence here; it costs a
// write per freed byte, nothing a one-shot command should pay.
func coreEnv(args, env []string) []string {
	cmd := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--mem-dir" {
			i++
			continue
		}
		if a != "" && !strings.HasPrefix(a, "-") {
			cmd = a
			break
		}
	}
	if cmd != "mcp" && cmd != "ui" {
		return env
	}
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			if v == "" {
				env[i] = "GODEBUG=clobberfree=1"
			} else {
				env[i] = kv + ",clobberfree=1"
			}
			return env
		}
	}
	return append(env, "GODEBUG=clobberfree=1")
}

// Version is the -X main.version when set, else the module version from
// the build info (a `go install …@v1.2.3` build), with the VCS revision
// and a "+dirty" mark when the build has them (a build from a checkout).
// Both binaries call it, so they print the same.
func Version(ldflags string) string {
	if ldflags != "" {
		return ldflags
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return VersionOf(bi)
}

// VersionOf is Version's answer for a build's info.
func VersionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += " (" + rev[:min(12, len(rev))] + dirty + ")"
	}
	return v
}
