// Command wordnet builds search/wordnet/synonyms.txt.gz, the synonym table
// session-bm25 expands queries with, from Princeton WordNet 3.0 as Debian's
// wordnet-base installs it:
//
//	apt-get install wordnet-base
//	go run ./scripts/wordnet -dict /usr/share/wordnet -o search/wordnet/synonyms.txt.gz
//
// A line is `term<TAB>syn:rank syn:rank …`: term and synonyms are analysed
// terms (embed.Term: lower case, Snowball stems), so the table meets the
// query after analysis; rank is the WordNet sense (0 = the most frequent)
// of the word that gave the synonym. Only one-word lemmas of letters are
// kept, only senses below -senses, and only tagged senses (seen in the
// SemCor counts) beyond the first: rare senses are what make WordNet
// expansion noisy. Deterministic: the same dictionary gives the same bytes.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gitmem/git-mem/search/embed"
)

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "WordNet dictionary folder (index.* and data.*)")
	out := flag.String("o", "search/wordnet/synonyms.txt.gz", "table to write")
	senses := flag.Int("senses", 2, "senses of a word to take synonyms from")
	maxSyn := flag.Int("max", 6, "synonyms kept per term")
	flag.Parse()
	if err := run(*dict, *out, *senses, *maxSyn); err != nil {
		fmt.Fprintln(os.Stderr, "wordnet:", err)
		os.Exit(1)
	}
}

type cand struct {
	term string
	rank int
	seq  int // first seen: a stable tie-break
}

func run(dict, out string, senses, maxSyn int) error {
	table := map[string]map[string]*cand{}
	seq := 0
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		synsets, err := readData(filepath.Join(dict, "data."+pos))
		if err != nil {
			return err
		}
		f, err := os.Open(filepath.Join(dict, "index."+pos))
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, " ") {
				continue // the license header
			}
			fs := strings.Fields(line)
			if len(fs) < 6 || !plainWord(fs[0]) {
				continue
			}
			nptr, _ := strconv.Atoi(fs[3])
			if len(fs) < 6+nptr {
				continue
			}
			tagged, _ := strconv.Atoi(fs[5+nptr])
			offsets := fs[6+nptr:]
			key := embed.Term(fs[0])
			if key == "" {
				continue
			}
			for rank, off := range offsets {
				if rank >= senses || rank > 0 && rank >= tagged {
					break
				}
				for _, w := range synsets[off] {
					if !plainWord(w) {
						continue
					}
					t := embed.Term(w)
					if t == "" || t == key {
						continue
					}
					m := table[key]
					if m == nil {
						m = map[string]*cand{}
						table[key] = m
					}
					if c, ok := m[t]; !ok {
						seq++
						m[t] = &cand{term: t, rank: rank, seq: seq}
					} else if rank < c.rank {
						c.rank = rank
					}
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteString("# Synonyms from Princeton WordNet 3.0 (see LICENSE beside this file), built by scripts/wordnet.\n")
	n := 0
	for _, k := range keys {
		cs := make([]*cand, 0, len(table[k]))
		for _, c := range table[k] {
			cs = append(cs, c)
		}
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].rank != cs[j].rank {
				return cs[i].rank < cs[j].rank
			}
			return cs[i].seq < cs[j].seq
		})
		if len(cs) > maxSyn {
			cs = cs[:maxSyn]
		}
		buf.WriteString(k)
		for i, c := range cs {
			sep := " "
			if i == 0 {
				sep = "\t"
			}
			fmt.Fprintf(&buf, "%s%s:%d", sep, c.term, c.rank)
		}
		buf.WriteByte('\n')
		n++
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(buf.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(out, z.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d terms, %d bytes (%d gzipped)\n", n, buf.Len(), z.Len())
	return nil
}

// plainWord is a one-word lemma of lower-case letters, three or more.
func plainWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// readData maps each synset offset of a data.* file to its words.
func readData(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) < 4 {
			continue
		}
		nw, err := strconv.ParseInt(fs[3], 16, 32)
		if err != nil || len(fs) < 4+2*int(nw) {
			continue
		}
		ws := make([]string, 0, nw)
		for i := 0; i < int(nw); i++ {
			w := fs[4+2*i]
			if j := strings.IndexByte(w, '('); j >= 0 {
				w = w[:j] // adjective markers: "(a)", "(p)"
			}
			ws = append(ws, w)
		}
		out[fs[0]] = ws
	}
	return out, sc.Err()
}
