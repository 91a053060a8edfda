package hooks

import (
	"io"
	"time"

	"github.com/gitmem/git-mem/hooks/hookinput"
)

// ReadHookInput reads the hook's JSON (at most 1 MiB), giving up past the
// timeout (hookinput.Read).
func ReadHookInput(r io.Reader, timeout time.Duration) ([]byte, error) {
	return hookinput.Read(r, timeout)
}
