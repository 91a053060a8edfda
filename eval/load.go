package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// File names of one eval folder.
const (
	ExchangesFile = "exchanges.jsonl"
	QueriesFile   = "queries.jsonl"
)

// ErrNoSet means DIR holds no eval folder.
var ErrNoSet = errors.New("no eval set")

// Query is one line of queries.jsonl. Category is a number (LoCoMo: 1–5) or
// a word (coding: exact-term, phrase, conceptual …); both are kept as text.
// A missing "adversarial" means false.
type Query struct {
	QID          string   `json:"qid"`
	Text         string   `json:"query"`
	Category     string   `json:"-"`
	CategoryName string   `json:"category_name,omitempty"`
	Relevant     []string `json:"relevant"`
	Adversarial  bool     `json:"adversarial"`
	// Stale are older answers the relevant ones replaced (issue 20): the
	// query counts for current_first, 1 when a relevant slot ranks above
	// every stale one within the top 10.
	Stale []string `json:"stale,omitempty"`
	// Set is the folder the query belongs to (kept when sets are pooled).
	Set string `json:"-"`
	// QuestionDate is when the question is asked (LongMemEval's
	// "2023/05/30 (Tue) 23:08", or RFC 3339), Now its parsed form: the
	// time a relative expression ("two weeks ago") is read against. Zero
	// when the set gives none.
	QuestionDate string    `json:"question_date,omitempty"`
	Now          time.Time `json:"-"`
}

// Set is one eval folder: one memory and the queries run against it.
type Set struct {
	Name      string // the subfolder's name, or DIR's own when it is the set
	Dir       string
	Exchanges []*exchange.Exchange
	Queries   []Query
	// Pooled names the folders merged into this set (Pool); nil for a
	// folder of its own.
	Pooled []string
}

// Load reads DIR: either DIR itself holds exchanges.jsonl and
// queries.jsonl, or its immediate subfolders each do (in name order).
// Subfolders with exchanges but no queries (held-out sets) are skipped and
// named in skipped. A bad record, a query without relevant ids or a
// relevant id absent from the folder's exchanges is an error with file:line.
func Load(dir string) (sets []Set, skipped []string, err error) {
	if isSet(dir) {
		name := filepath.Base(dir)
		if abs, err := filepath.Abs(dir); err == nil {
			name = filepath.Base(abs)
		}
		s, err := loadSet(dir, name)
		if err != nil {
			return nil, nil, err
		}
		return []Set{s}, nil, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("eval: %w", err)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		sub := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			continue
		}
		if !isSet(sub) {
			if exists(filepath.Join(sub, ExchangesFile)) {
				skipped = append(skipped, e.Name())
			}
			continue
		}
		s, err := loadSet(sub, e.Name())
		if err != nil {
			return nil, nil, err
		}
		sets = append(sets, s)
	}
	if len(sets) == 0 {
		return nil, skipped, fmt.Errorf("%s: %w: it needs %s and %s, itself or in each subfolder", dir, ErrNoSet, ExchangesFile, QueriesFile)
	}
	return sets, skipped, nil
}

func isSet(dir string) bool {
	return exists(filepath.Join(dir, ExchangesFile)) && exists(filepath.Join(dir, QueriesFile))
}

func exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

func loadSet(dir, name string) (Set, error) {
	s := Set{Name: name, Dir: dir}
	exPath := filepath.Join(dir, ExchangesFile)
	f, err := os.Open(exPath)
	if err != nil {
		return s, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	ids := map[string]bool{}
	err = exchange.ReadJSONL(f, exPath, func(r exchange.Record) error {
		if r.Err != nil {
			return r.Err
		}
		s.Exchanges = append(s.Exchanges, r.Exchange)
		if r.Exchange.ID != "" {
			ids[r.Exchange.ID] = true
		}
		return nil
	})
	if err != nil {
		return s, err
	}
	qPath := filepath.Join(dir, QueriesFile)
	qf, err := os.Open(qPath)
	if err != nil {
		return s, fmt.Errorf("eval: %w", err)
	}
	defer qf.Close()
	s.Queries, err = ReadQueries(qf, qPath, ids)
	for i := range s.Queries {
		s.Queries[i].Set = name
	}
	return s, err
}

// ReadQueries reads queries.jsonl. When ids is not nil every relevant id
// must be in it.
func ReadQueries(r io.Reader, name string, ids map[string]bool) ([]Query, error) {
	var out []Query
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	line := 0
	seen := map[string]int{}
	for sc.Scan() {
		line++
		data := bytes.TrimSpace(sc.Bytes())
		if len(data) == 0 {
			continue
		}
		q, err := parseQuery(data)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if q.QID == "" {
			q.QID = fmt.Sprintf("%s:%d", filepath.Base(name), line)
		}
		if prev, dup := seen[q.QID]; dup {
			return nil, fmt.Errorf("%s:%d: qid %q already used on line %d", name, line, q.QID, prev)
		}
		seen[q.QID] = line
		for _, id := range append(q.Relevant[:len(q.Relevant):len(q.Relevant)], q.Stale...) {
			if ids != nil && !ids[id] {
				return nil, fmt.Errorf("%s:%d: relevant exchange %q is not in %s", name, line, id, ExchangesFile)
			}
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

func parseQuery(data []byte) (Query, error) {
	var raw struct {
		Query
		Category     json.RawMessage `json:"category"`
		Adversarial  *bool           `json:"adversarial"`
		CategoryName string          `json:"category_name"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Query{}, fmt.Errorf("not a query object: %v", err)
	}
	q := raw.Query
	q.CategoryName = raw.CategoryName
	if raw.Adversarial != nil {
		q.Adversarial = *raw.Adversarial
	}
	cat, err := categoryText(raw.Category)
	if err != nil {
		return q, err
	}
	q.Category = cat
	if q.QuestionDate != "" {
		if q.Now, err = parseQuestionDate(q.QuestionDate); err != nil {
			return q, err
		}
	}
	if strings.TrimSpace(q.Text) == "" {
		return q, errors.New(`empty "query"`)
	}
	if len(q.Relevant) == 0 {
		return q, errors.New(`no "relevant" exchange ids: a query needs at least one`)
	}
	return q, nil
}

// categoryText turns a JSON number or string into the category's key; a
// missing category is "".
func categoryText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return strconv.FormatInt(i, 10), nil
		}
		return n.String(), nil
	}
	return "", fmt.Errorf(`"category" must be a number or a string, got %s`, raw)
}

// parseQuestionDate reads a query's question_date: LongMemEval's
// "2006/01/02 (Mon) 15:04" (UTC) or RFC 3339.
func parseQuestionDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if i, j := strings.IndexByte(s, '('), strings.IndexByte(s, ')'); i >= 0 && j > i {
		s = strings.Join(strings.Fields(s[:i]+s[j+1:]), " ")
	}
	t, err := time.Parse("2006/01/02 15:04", s)
	if err != nil {
		return t, fmt.Errorf("question_date %q: want RFC 3339 or 2006/01/02 (Mon) 15:04", s)
	}
	return t, nil
}
