package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The seal (seal.json) lists every file of an index folder — Bleve's
// included — with its size, modification time and CRC-32C, written by the
// writer when it closes the index (Bleve is quiescent then). Opening
// compares sizes and times, which costs a stat per file: a file truncated,
// deleted or written to since (a damaged disk, a killed writer, a stray
// `dd`) is found before anything reads it, and the index is rebuilt.
// `git mem check` (Verify) recomputes every checksum. Unchanged files keep
// their checksum from the last seal, so sealing costs only the new files.
const sealFile = "seal.json"

type sealEntry struct {
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime_ns"`
	CRC   uint32 `json:"crc32c"`
}

type seal map[string]sealEntry

func readSeal(dir string) (seal, error) {
	raw, err := os.ReadFile(filepath.Join(dir, sealFile))
	if err != nil {
		return nil, err
	}
	var s seal
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("seal: %v", err)
	}
	return s, nil
}

func fileCRC(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.New(crcTable)
	if _, err := io.Copy(h, f); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// writeSeal seals every file under dir. known holds the checksums of files
// the writer wrote (their size and CRC-32C, the time unused): one whose size
// is still that takes its checksum from there instead of being read again
// (an appended table's checksum is extended over its new bytes).
func writeSeal(dir string, known map[string]sealEntry) error {
	old, _ := readSeal(dir)
	s := seal{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		// The row map and the session cache are readers' caches with
		// their own keys and checksums.
		if rel == sealFile || rel == rowMapFile || rel == sessCacheFile || strings.Contains(rel, ".tmp") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := sealEntry{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		if o, ok := old[rel]; ok && o.Size == e.Size && o.MTime == e.MTime {
			e.CRC = o.CRC
		} else if k, ok := known[rel]; ok && k.Size == e.Size {
			e.CRC = k.CRC
		} else if e.CRC, err = fileCRC(p); err != nil {
			return err
		}
		s[rel] = e
		return nil
	})
	if err != nil {
		return fmt.Errorf("seal search index: %w", err)
	}
	raw, _ := json.Marshal(s)
	tmp := filepath.Join(dir, sealFile+".tmp")
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return fmt.Errorf("seal search index: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, sealFile))
}

// checkSeal compares the files with the seal: sizes and times, or, with
// full, checksums too.
func checkSeal(dir string, full bool) error {
	s, err := readSeal(dir)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("not sealed: its writer did not finish")
	}
	if err != nil {
		return err
	}
	if _, ok := s[manifestFile]; !ok {
		return errors.New("the seal lists no manifest")
	}
	for rel, e := range s {
		p := filepath.Join(dir, rel)
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%s: %v", rel, err)
		}
		if fi.Size() != e.Size || fi.ModTime().UnixNano() != e.MTime {
			return fmt.Errorf("%s changed since it was written (%d bytes, sealed at %d)", rel, fi.Size(), e.Size)
		}
		if full {
			c, err := fileCRC(p)
			if err != nil {
				return fmt.Errorf("%s: %v", rel, err)
			}
			if c != e.CRC {
				return fmt.Errorf("%s: checksum mismatch", rel)
			}
		}
	}
	return nil
}

// SealStamp names the state of the seal of the index in dir (its file's
// identity, size and time; "" when there is none): every writer that
// changes an index rewrites the seal (by rename) when it closes it, so a
// long-lived reader that finds the same stamp holds the files it opened.
func SealStamp(dir string) string {
	if dir == "" {
		return ""
	}
	fi, err := os.Stat(filepath.Join(dir, sealFile))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d/%d/%d", fi.Size(), fi.ModTime().UnixNano(), fileID(fi))
}
