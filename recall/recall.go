package recall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/memory"
)

// Request is one recall.
type Request struct {
	// Query picks the best cards by search; empty means "the project's
	// recent work and its most used rooms".
	Query string
	// Budget is the most BPE tokens (cl100k) the block may take, fence
	// included; 0 means DefaultBudget.
	Budget int
	// Mode is the search mode for a query ("" = the memory's default).
	Mode   string
	Filter memory.Filter
	// Project scopes a query-less recall when Filter.Project is empty
	// (the hook passes the session's project).
	Project string
	// Verbatim packs the exchanges themselves instead of their cards, with
	// the same ranking; it exists to measure what cards buy (docs/bench).
	Verbatim bool
	// NoIndexWork (the SessionStart hook) reads pins and supersession marks
	// only from an index caught up with main; otherwise the block goes
	// without them and Note says so.
	NoIndexWork bool
}

// Card is one packed card; Score is the search score (query mode only).
type Card struct {
	memory.Entry
	Score float64 `json:"score,omitempty"`
	// Collapsed lists the identical or near-identical exchanges folded
	// into this card, newest first.
	Collapsed []string `json:"collapsed,omitempty"`
}

// Result is a packed block and what went into it.
type Result struct {
	Query   string `json:"query,omitempty"`
	Project string `json:"project,omitempty"`
	Budget  int    `json:"budget"`
	Tokens  int    `json:"tokens"`
	// Text is the fenced block, "" when nothing matched or not even the
	// fence fits the budget.
	Text  string             `json:"text"`
	Cards []Card             `json:"cards"`
	Rooms []memory.RoomCount `json:"rooms,omitempty"`
	// Pins are the project's pinned rules that made it in, before the
	// cards (issue 20).
	Pins []memory.Pin `json:"pins,omitempty"`
	// Omitted counts the candidates that did not fit the budget.
	Omitted int    `json:"omitted"`
	Note    string `json:"note,omitempty"`
}

// headerRooms is how many of the busiest rooms the project header names.
const headerRooms = 8

// CheckBudget validates a budget (0 means the default).
func CheckBudget(n int) error {
	if n < 0 || n > MaxBudget {
		return fmt.Errorf("%w: --budget %d is out of range: use 1..%d tokens (default %d)", memory.ErrBadQuery, n, MaxBudget, DefaultBudget)
	}
	return nil
}

// Recall packs the best cards for req into its budget.
func Recall(ctx context.Context, m *memory.Memory, req Request) (*Result, error) {
	if err := CheckBudget(req.Budget); err != nil {
		return nil, err
	}
	if req.Budget == 0 {
		req.Budget = DefaultBudget
	}
	if strings.TrimSpace(req.Query) != "" {
		return recallQuery(ctx, m, req)
	}
	return recallProject(ctx, m, req)
}

// candidates is how many search hits a budget can use: a card takes ~40
// tokens, and a few spare ones let Pack skip a long card and still fill
// the budget.
func candidates(budget int) int { return min(max(budget/15, 10), 1000) }

func recallQuery(ctx context.Context, m *memory.Memory, req Request) (*Result, error) {
	res := &Result{Query: req.Query, Budget: req.Budget, Cards: []Card{}}
	hits, note, err := m.Search(ctx, memory.SearchQuery{Text: req.Query, K: candidates(req.Budget), Mode: req.Mode, Filter: req.Filter})
	if err != nil {
		return nil, err
	}
	res.Note = note
	if len(hits) == 0 {
		return res, nil
	}
	cards := make([]Card, len(hits))
	for i, h := range hits {
		cards[i] = Card{Entry: h.Entry, Score: h.Score, Collapsed: h.Collapsed}
	}
	items, err := itemsOf(m, cards, req, true)
	if err != nil {
		return nil, err
	}
	p := Pack(queryHeader(req.Query), items, req.Budget)
	res.fill(p, len(items), func(i int) Card { return cards[i] })
	return res, nil
}

func recallProject(ctx context.Context, m *memory.Memory, req Request) (*Result, error) {
	f := req.Filter
	if f.Project == "" {
		f.Project = req.Project
	}
	res := &Result{Project: f.Project, Budget: req.Budget, Cards: []Card{}}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The newest cards a pack can use, not every card of the project: at
	// 1,000,000 exchanges reading them all made a SessionStart hook 1.9 s
	// and 1.2 GB. More are read only when these all collapsed or fit.
	// A project's count (kept with the stats) bounds the search: a project
	// with no cards is known at once, a small one read only as far back as
	// its oldest card.
	total, known, err := m.ProjectExchanges(f)
	if err != nil {
		return nil, err
	}
	var match []*memory.Entry
	var cand []Card
	for n := newestFirst; !known || total > 0; n *= 8 {
		if known {
			n = min(n, total)
		}
		if match, err = m.Newest(f, n); err != nil {
			return nil, err
		}
		var full bool
		if cand, full = pickCards(match, req.Budget); full || len(match) < n || known && n == total {
			break
		}
	}
	// The links of the pins now, those of the cards once they are chosen:
	// reading every link of a large memory costs seconds.
	linksFor := func(ids []string) (*memory.Links, error) {
		if !req.NoIndexWork {
			return m.LinksFor(ctx, ids)
		}
		l, ok, err := m.LinksIfCurrent(ids)
		if err == nil && !ok && !strings.Contains(res.Note, "pins and supersession marks left out") {
			res.Note = strings.TrimPrefix(res.Note+"; pins and supersession marks left out: the search index is behind main (any `git mem search` catches it up)", "; ")
		}
		return l, err
	}
	links, err := linksFor(nil)
	if err != nil {
		return nil, err
	}
	pins, err := livingPins(m, links, f.Project)
	if err != nil {
		return nil, err
	}
	if len(match) == 0 && len(pins) == 0 {
		return res, nil
	}
	rooms, err := m.Rooms(f)
	if err != nil {
		return nil, err
	}
	res.Rooms = topRooms(rooms, f.Project, headerRooms)
	es := make([]*memory.Entry, len(cand))
	for i := range cand {
		es[i] = &cand[i].Entry
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.Exchange
	}
	if links, err = linksFor(ids); err != nil {
		return nil, err
	}
	memory.MarkWith(links, es)
	items, err := itemsOf(m, cand, req, f.Project == "")
	if err != nil {
		return nil, err
	}
	// The standing rules come first: Pack takes items in order, so they
	// are in whenever the budget allows.
	pinItems := make([]string, len(pins))
	for i := range pins {
		pinItems[i] = FormatPin(&pins[i], f.Project == "")
	}
	header := projectHeader(f.Project, res.Rooms)
	if len(pins) > 0 {
		header += "\nPinned rules (`git mem pin`) come first, then the cards."
	}
	p := Pack(header, append(pinItems, items...), req.Budget)
	var cardItems []int
	for _, i := range p.Items {
		if i < len(pins) {
			res.Pins = append(res.Pins, pins[i])
		} else {
			cardItems = append(cardItems, i-len(pins))
		}
	}
	cp := p
	cp.Items = cardItems
	res.fill(cp, len(items), func(i int) Card { return cand[i] })
	if len(res.Pins) > 0 && res.Text == "" { // pins alone are worth saying
		res.Text, res.Tokens = p.Text, p.Tokens
	}
	return res, nil
}

// livingPins are the project's pins that nothing superseded.
func livingPins(m *memory.Memory, l *memory.Links, project string) ([]memory.Pin, error) {
	if l == nil {
		return nil, nil
	}
	all, err := m.PinsOf(l, project)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, p := range all {
		if len(p.SupersededBy) == 0 {
			out = append(out, p)
		}
	}
	return out, nil
}

// itemsOf renders the candidates as cards or, for Request.Verbatim, as the
// exchanges themselves (read from git only as far as the budget can use).
func itemsOf(m *memory.Memory, cs []Card, req Request, withProject bool) ([]string, error) {
	items := make([]string, 0, len(cs))
	size := 0
	for i := range cs {
		e := &cs[i].Entry
		if !req.Verbatim {
			items = append(items, FormatCard(e, withProject, len(cs[i].Collapsed)))
			continue
		}
		if size > 8*req.Budget {
			break
		}
		ex, _, err := m.Verbatim(e.Exchange)
		if err != nil {
			return nil, fmt.Errorf("recall exchange %s: %w", e.Exchange, err)
		}
		it := FormatVerbatim(e, ex, withProject)
		size += len(it)
		items = append(items, it)
	}
	return items, nil
}

func (r *Result) fill(p Packed, candidates int, card func(i int) Card) {
	if len(p.Items) == 0 {
		// A header alone tells the agent nothing: say nothing.
		r.Omitted = candidates
		return
	}
	r.Text, r.Tokens = p.Text, p.Tokens
	for _, i := range p.Items {
		r.Cards = append(r.Cards, card(i))
	}
	r.Omitted = candidates - len(p.Items)
}

// topRooms is the busiest rooms (memory.Rooms' order: by count, ties by
// name), at most n; the project's own room says nothing new and is left out.
func topRooms(rooms []memory.RoomCount, project string, n int) []memory.RoomCount {
	own := "project:" + exchange.NormalizeRoomKey(project)
	out := []memory.RoomCount{}
	for _, rc := range rooms {
		if len(out) < n && (project == "" || rc.Room != own) {
			out = append(out, rc)
		}
	}
	return out
}

// newestFirst is how many of the newest matching cards recallProject reads
// first.
var newestFirst = 256

// pickCards picks the cards a pack of budget tokens may use from es,
// newest first: only as many as could fit (a token is at least ~1 byte of
// card text, so 4x the budget in bytes is a generous bound), since counting
// tokens is the costly part; identical cards (a repeated standup note) take
// one slot, as in search. full reports that the bound was reached, so no
// older card could change the pick.
func pickCards(es []*memory.Entry, budget int) (cand []Card, full bool) {
	slot := map[string]int{}
	size := 0
	for _, e := range es {
		key := strings.ToLower(oneLine(e.Core) + "\x00" + oneLine(e.Context))
		if i, ok := slot[key]; ok {
			cand[i].Collapsed = append(cand[i].Collapsed, e.Exchange)
			continue
		}
		if size > 4*budget || len(cand) >= 2000 {
			return cand, true
		}
		slot[key] = len(cand)
		cand = append(cand, Card{Entry: *e})
		size += len(e.Core) + len(e.Context) + 40
	}
	return cand, false
}

// ClaudeSessionStart is what a Claude Code SessionStart hook prints to add
// the block to the session's context: one line of JSON, without HTML
// escaping so the fence stays readable in logs.
func ClaudeSessionStart(block string) ([]byte, error) {
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{"SessionStart", block}})
	return b.Bytes(), err
}
