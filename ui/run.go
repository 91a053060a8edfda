package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/gitmem/git-mem/memory"
)

// Options are `git mem ui`'s flags.
type Options struct {
	Port      int  // 0 = a free one
	NoBrowser bool // only print the address
	// Ready, when set, receives the address once the server listens
	// (the CLI prints it; tests connect to it).
	Ready func(url string)
}

// Run serves the memory until ctx ends: it binds 127.0.0.1 only, makes a
// new token, calls Ready with the address and opens it in the browser
// ($BROWSER, else xdg-open) unless NoBrowser. A browser that fails to start
// is reported on warn; the page keeps serving.
func Run(ctx context.Context, m *memory.Memory, opt Options, warn io.Writer) error {
	ln, port, err := Listen(opt.Port)
	if err != nil {
		return err
	}
	token, err := NewToken()
	if err != nil {
		ln.Close()
		return err
	}
	view := memory.NewView(m)
	defer view.Close()
	s := New(view, port, token)
	// Forget from the page: the same selection and removal as `git mem
	// forget COMMIT` (the page asked for the short commit id first).
	s.Forget = Forgetter(m)
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	if opt.Ready != nil {
		opt.Ready(s.URL())
	}
	if !opt.NoBrowser {
		if err := OpenBrowser(s.URL()); err != nil {
			fmt.Fprintf(warn, "git mem: could not open a browser (%v): open the address above yourself\n", err)
		}
	}
	select {
	case err := <-done:
		return fmt.Errorf("serve the page: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stop the page: %w", err)
	}
	return nil
}

// OpenBrowser starts $BROWSER (a colon-separated list of commands, %s
// standing for the address, as xdg-utils and Python's webbrowser read it),
// else xdg-open, without waiting for it.
func OpenBrowser(url string) error {
	var tried []string
	for _, c := range browserCommands(os.Getenv("BROWSER"), url) {
		cmd := exec.Command(c[0], c[1:]...)
		if err := cmd.Start(); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", c[0], err))
			continue
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
	return errors.New(strings.Join(tried, "; "))
}

func browserCommands(env, url string) [][]string {
	var out [][]string
	for _, c := range strings.Split(env, ":") {
		f := strings.Fields(c)
		if len(f) == 0 {
			continue
		}
		has := false
		for i, a := range f {
			if strings.Contains(a, "%s") {
				f[i], has = strings.ReplaceAll(a, "%s", url), true
			}
		}
		if !has {
			f = append(f, url)
		}
		out = append(out, f)
	}
	return append(out, []string{"xdg-open", url})
}

// Forgetter is what the page's forget calls: `git mem forget COMMIT`.
func Forgetter(m *memory.Memory) func(ref string) error {
	return func(ref string) error {
		plan, err := m.ForgetPlan(context.Background(), memory.ForgetSelect{Refs: []string{ref}})
		if err != nil {
			return err
		}
		_, err = m.Forget(context.Background(), plan, "forgotten from git mem ui")
		return err
	}
}
