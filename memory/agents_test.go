package memory

import (
	"path/filepath"
	"testing"
)

// TestFrontBeside: run as git-mem-core, hooks are written to start the
// front beside it (git-mem, or git-mem.exe beside git-mem-core.exe on
// Windows); any other binary, or a core with no front beside it, names
// itself.
func TestFrontBeside(t *testing.T) {
	dir := filepath.Join(string(filepath.Separator)+"opt", "bin")
	tests := []struct {
		name  string
		exe   string
		files []string // files that exist
		want  string
	}{
		{"core with front", "git-mem-core", []string{"git-mem"}, "git-mem"},
		{"core without front", "git-mem-core", nil, "git-mem-core"},
		{"windows core with front", "git-mem-core.exe", []string{"git-mem.exe"}, "git-mem.exe"},
		{"windows core, upper case", "GIT-MEM-CORE.EXE", []string{"git-mem.EXE"}, "git-mem.EXE"},
		{"windows core, front without .exe only", "git-mem-core.exe", []string{"git-mem"}, "git-mem-core.exe"},
		{"windows core without front", "git-mem-core.exe", nil, "git-mem-core.exe"},
		{"the front itself", "git-mem", []string{"git-mem"}, "git-mem"},
		{"the front on windows", "git-mem.exe", []string{"git-mem.exe"}, "git-mem.exe"},
		{"a test binary", "memory.test", []string{"git-mem"}, "memory.test"},
		{"another name ending in core", "my-git-mem-core", []string{"git-mem"}, "my-git-mem-core"},
		{"core with another extension", "git-mem-core.bak", []string{"git-mem.bak", "git-mem"}, "git-mem-core.bak"},
		{"upper case core off Windows", "GIT-MEM-CORE", []string{"git-mem"}, "GIT-MEM-CORE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			have := map[string]bool{}
			for _, f := range tt.files {
				have[filepath.Join(dir, f)] = true
			}
			got := frontBeside(filepath.Join(dir, tt.exe), func(p string) bool { return have[p] })
			if want := filepath.Join(dir, tt.want); got != want {
				t.Errorf("frontBeside(%s) = %s, want %s", tt.exe, got, want)
			}
		})
	}
}
