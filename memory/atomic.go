package memory

import (
	"os"

	"github.com/gitmem/git-mem/internal/atomicfile"
)

// WriteFileAtomic writes a file through a temp file and a rename, so a
// reader or a crash never sees half of it.
func WriteFileAtomic(path string, write func(*os.File) error) error {
	return atomicfile.Write(path, write)
}
