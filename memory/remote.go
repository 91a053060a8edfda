package memory

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/gitstore"
)

// AddRemote adds (or updates) a remote of the memory with a fetch refspec
// for main, which `git clone --bare` would not set up.
func (m *Memory) AddRemote(name, url string) error {
	name, url = strings.TrimSpace(name), strings.TrimSpace(url)
	if name == "" || strings.ContainsAny(name, " /\\:") {
		return invalid(fmt.Errorf("remote name %q is not valid: use a plain word like origin", name))
	}
	if url == "" {
		return invalid(fmt.Errorf("remote %s: the URL is empty", name))
	}
	repo := m.Repo.Git()
	cfg, err := repo.Config()
	if err != nil {
		return fmt.Errorf("read memory config: %w", err)
	}
	rc := &config.RemoteConfig{
		Name:  name,
		URLs:  []string{url},
		Fetch: []config.RefSpec{config.RefSpec("+refs/heads/main:refs/remotes/" + name + "/main")},
	}
	if err := rc.Validate(); err != nil {
		return invalid(fmt.Errorf("remote %s: %w", name, err))
	}
	cfg.Remotes[name] = rc
	if err := repo.Storer.SetConfig(cfg); err != nil {
		return fmt.Errorf("write memory config: %w", err)
	}
	return nil
}

// Remotes lists the memory's remotes as name → URL.
func (m *Memory) Remotes() (map[string]string, error) {
	cfg, err := m.Repo.Git().Config()
	if err != nil {
		return nil, fmt.Errorf("read memory config: %w", err)
	}
	out := map[string]string{}
	for n, rc := range cfg.Remotes {
		if len(rc.URLs) > 0 {
			out[n] = rc.URLs[0]
		}
	}
	return out, nil
}

// RemoveRemote removes a remote and its remote-tracking refs, as `git remote
// remove` does. The exchanges fetched from it stay: they are in main.
func (m *Memory) RemoveRemote(name string) error {
	repo := m.Repo.Git()
	cfg, err := repo.Config()
	if err != nil {
		return fmt.Errorf("read memory config: %w", err)
	}
	if _, ok := cfg.Remotes[name]; !ok {
		return fmt.Errorf("%w %q: `git mem remote` lists the remotes", gitstore.ErrNoRemote, name)
	}
	delete(cfg.Remotes, name)
	if err := repo.Storer.SetConfig(cfg); err != nil {
		return fmt.Errorf("write memory config: %w", err)
	}
	refs, err := repo.Storer.IterReferences()
	if err != nil {
		return fmt.Errorf("remove remote %s: list refs: %w", name, err)
	}
	prefix := "refs/remotes/" + name + "/"
	var stale []plumbing.ReferenceName
	err = refs.ForEach(func(r *plumbing.Reference) error {
		if strings.HasPrefix(r.Name().String(), prefix) {
			stale = append(stale, r.Name())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove remote %s: list refs: %w", name, err)
	}
	for _, n := range stale {
		if err := repo.Storer.RemoveReference(n); err != nil {
			return fmt.Errorf("remove remote %s: ref %s: %w", name, n, err)
		}
	}
	return nil
}
