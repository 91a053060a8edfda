package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gitmem/git-mem/cmd/internal/front"
	"github.com/gitmem/git-mem/cmd/internal/searchbin"
	"github.com/gitmem/git-mem/cmd/internal/warm"
)

// The scripts run the real commands as separate processes against
// temporary memories, as installed: git-mem on PATH (so `git mem …` works
// too) is the front binary, which answers version and the Claude Code hook
// itself and execs git-mem-search, beside it, for a search (which execs
// git-mem-core in turn when it must) and git-mem-core for the rest.
func TestMain(m *testing.M) {
	// No test leaves a warm search process behind: they are off unless a
	// test turns them on (warm.txtar sets GIT_MEM_NO_SERVER to "").
	if _, set := os.LookupEnv(warm.DisableEnv); !set {
		os.Setenv(warm.DisableEnv, "1")
	}
	testscript.Main(m, map[string]func(){
		"git-mem":      func() { os.Exit(front.Main(version, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		front.CoreName: func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		front.SearchName: func() {
			os.Exit(searchbin.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

func TestScripts(t *testing.T) {
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("TESTDATA", testdata)
			env.Setenv("GIT_MEM_DIR", filepath.Join(env.WorkDir, "mem.git"))
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv(warm.DisableEnv, "1")
			return nil
		},
		Cmds: warmCmds,
	})
}
