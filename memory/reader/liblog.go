package reader

import (
	"log"
	"os"
	"path/filepath"
	"sync"
)

// libLog is where the standard logger writes: Bleve's scorch logs through
// it ("unable to load snapshot …") and those lines must never reach the
// user's terminal. They go to mem/log/library.log, opened on first write,
// and an error that needs them names that file.
type libLog struct {
	path string
	once sync.Once
	f    *os.File
}

func (l *libLog) Write(p []byte) (int, error) {
	l.once.Do(func() {
		if os.MkdirAll(filepath.Dir(l.path), 0o755) == nil {
			l.f, _ = os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		}
	})
	if l.f == nil {
		return len(p), nil
	}
	return l.f.Write(p)
}

// RouteLibraryLogs sends the standard logger to the memory's library log.
func RouteLibraryLogs(memDir string) {
	log.SetOutput(&libLog{path: filepath.Join(memDir, "log", "library.log")})
}
