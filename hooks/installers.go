package hooks

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// installer is one agent's hook installation: where its config lives, and
// how git mem's entries go in and out of it.
type installer struct {
	path      func(scope, home, cwd string) string
	install   func(path, gitMemCmd string, opt InstallOptions) (string, error)
	uninstall func(path string, opt InstallOptions) (string, error)
	// userOnly, when set, is why the agent has no project scope.
	userOnly string
}

var installers = map[string]installer{
	FormatClaudeCode: {ClaudeSettingsPath, InstallClaudeCode, UninstallClaudeCode, ""},
	FormatCodex: {func(_, home, _ string) string { return CodexConfigPath(home) }, InstallCodex, UninstallCodex,
		"codex reads notify only from ~/.codex/config.toml: use --scope user"},
	FormatGemini:    {GeminiSettingsPath, InstallGemini, UninstallGemini, ""},
	FormatQwenCode:  {QwenSettingsPath, InstallQwenCode, UninstallQwenCode, ""},
	AgentCursor:     {CursorHooksPath, InstallCursor, UninstallCursor, ""},
	AgentOpenCode:   {OpenCodePluginPath, InstallOpenCode, UninstallOpenCode, ""},
	AgentCopilotCLI: {CopilotCLIHooksPath, InstallCopilotCLI, UninstallCopilotCLI, ""},
}

// multiInstaller is an agent whose hooks go into more than one place
// (Cline: its releases read different hooks folders).
type multiInstaller struct {
	paths     func(scope, home, cwd string) []string
	install   func(paths []string, gitMemCmd string, opt InstallOptions) (string, error)
	uninstall func(paths []string, opt InstallOptions) (string, error)
}

var multiInstallers = map[string]multiInstaller{
	AgentCline: {ClineHooksDirs, InstallCline, UninstallCline},
}

// HookAgents are the agents whose hooks (or plugin) git mem installs.
func HookAgents() []string {
	return []string{FormatClaudeCode, FormatCodex, FormatGemini, FormatQwenCode, AgentCursor, AgentOpenCode, AgentCopilotCLI, AgentCline}
}

// ErrUnknownHookAgent is returned (wrapped) for an agent without hooks.
var ErrUnknownHookAgent = errors.New("unknown agent")

// ErrScope is returned (wrapped) for a scope the agent has no config in.
var ErrScope = errors.New("unsupported scope")

// Install installs (or, with uninstall, removes) git mem's hooks in an
// agent's config for the scope, home and cwd given, and says what it
// changed.
func Install(agent string, uninstall bool, home, cwd, gitMemCmd string, opt InstallOptions) (string, error) {
	if mi, ok := multiInstallers[agent]; ok {
		paths := mi.paths(opt.Scope, home, cwd)
		if uninstall {
			return mi.uninstall(paths, opt)
		}
		return mi.install(paths, gitMemCmd, opt)
	}
	in, ok := installers[agent]
	if !ok {
		return "", fmt.Errorf("%w %q: use %s", ErrUnknownHookAgent, agent, strings.Join(HookAgents(), ", "))
	}
	if opt.Scope == ScopeProject && in.userOnly != "" {
		return "", fmt.Errorf("%w: %s", ErrScope, in.userOnly)
	}
	path := in.path(opt.Scope, home, cwd)
	if uninstall {
		return in.uninstall(path, opt)
	}
	return in.install(path, gitMemCmd, opt)
}

// scopedPath is an agent's config file: <home>/<parts…> (user) or
// <cwd>/<parts…> (project).
func scopedPath(scope, home, cwd string, parts ...string) string {
	root := home
	if scope == ScopeProject {
		root = cwd
	}
	return filepath.Join(append([]string{root}, parts...)...)
}
