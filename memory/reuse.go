package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/gitmem/git-mem/exchange"
	"github.com/gitmem/git-mem/gitstore"
)

// Ids built from positions (Continue's history index, Cursor CLI's t<n>,
// specstory's and Aider's /<n>, Cline and Roo without timestamps, Claude
// Code's line-<n>) are reused when an agent rewrites a session's history:
// an edited earlier message, a compaction. An item whose path is taken is
// present when the stored blob is its canonical bytes (the common case, a
// hook re-reading its transcript: no blob is read), or when the stored
// exchange has the same first user turn (the same exchange redacted or
// read differently: never stored twice). Otherwise it is another exchange
// and is stored under a derived id, <id>~<first 12 hex of the SHA-256 of
// its canonical bytes>: deterministic, so a re-read finds it present.
// Two items of one id in one input are compared so too, the second with
// the first, as when the first was stored before. A stored prompt alone
// (no turn of the agent's) does not hide the exchange with its reply: that
// is stored under CompletedID.

// state of an item after lookup.
type state uint8

const (
	stNew state = iota
	stPresent
	stForgotten
)

// DerivedID is the id an exchange is stored under when its own id holds
// another exchange: id + "~" + the first 12 hex digits of the SHA-256 of
// its canonical bytes (as read, with its own id).
func DerivedID(id string, canonical []byte) string {
	s := sha256.Sum256(canonical)
	return id + "~" + hex.EncodeToString(s[:6])
}

// rawFirstUser is the text of the exchange's first user turn.
func rawFirstUser(ex *exchange.Exchange) string {
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleUser {
			return t.Text
		}
	}
	return ""
}

// firstUser is rawFirstUser with its whitespace folded.
func firstUser(ex *exchange.Exchange) string { return fold(rawFirstUser(ex)) }

func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// stage is the id an item is classified under.
type stage uint8

const (
	// ownID: the item's own id (or content id).
	ownID stage = iota
	// completedID: its own id holds the same prompt stored alone (no turn
	// of the agent's) and the item holds the reply: CompletedID.
	completedID
	// contentID: its own id (or completedID) holds another exchange:
	// DerivedID, which names its content.
	contentID
)

// claim is what an add found new under a key, for the items after it of
// the same key (in its input, or a batch after): its first user turn as
// stored (redacted, not folded), whether it holds a turn of the agent's,
// and, when it does not, its blob (for CompletedID).
type claim struct {
	first   string
	replied bool
	blob    []byte
}

// claims are the keys an add found new, by key.
type claims map[string]claim

func (c claims) has(key string) bool {
	_, ok := c[key]
	return ok
}

func claimOf(p *prepared) claim {
	c := claim{first: rawFirstUser(p.ex), replied: replied(p.ex)}
	if !c.replied {
		c.blob = p.blob
	}
	return c
}

// replied says whether the exchange holds a turn of the agent's: a reply
// or a tool call.
func replied(ex *exchange.Exchange) bool {
	for _, t := range ex.Turns {
		if t.Role == exchange.RoleAssistant || t.Role == exchange.RoleTool {
			return true
		}
	}
	return false
}

// sameFirst says whether item p's first user turn is first (whitespace
// folded; p's as redacted or as read).
func sameFirst(first string, p *prepared) bool {
	u := fold(first)
	return u == firstUser(p.ex) || u == fold(p.prompt)
}

// CompletedID is the id of an exchange whose own id holds its prompt
// stored alone (no turn of the agent's: a SessionEnd hook, or an add of a
// transcript later resumed, stored it before the reply was written, or
// before a half-written last line): id + "~" + the first 12 hex digits of
// the SHA-256 of the stored blob. It names the prompt, not the reply, so
// every later reading of the completed exchange finds it present there
// (by its first user turn) instead of storing each version.
func CompletedID(id string, storedAlone []byte) string { return DerivedID(id, storedAlone) }

// classify says which items are new, present or forgotten, in main and in
// seen (the keys an add found new before, to which it adds the items it
// finds new): items are taken in order, as if each were added after the
// ones before it. An item whose path holds a blob, or whose key an item
// before it claimed, is compared with that exchange:
//   - the same blob (no blob read) or the same first user turn: present,
//     unless that exchange is the prompt alone and the item holds the
//     reply: then the item goes to CompletedID, where it is compared again;
//   - another exchange: the item goes to DerivedID, which names its
//     content: whatever is there is it.
//
// Each step moves an item on (own id → completed id → derived id), so a
// few look-ups classify every item. An item's key, path, ex.ID and blob
// are its id's. classify resumes from an item's stage (storeItems' retry
// of an item whose path was taken under the lock). It returns the trees of
// its first look.
func (m *Memory) classify(items []*prepared, seen claims) ([]state, *gitstore.Looked, error) {
	st := make([]state, len(items))
	pending := make([]int, len(items))
	for i := range items {
		pending[i] = i
	}
	var first *gitstore.Looked
	for _, p := range items {
		p.claimed = false
	}
	for len(pending) > 0 {
		paths := make([]string, len(pending))
		for j, i := range pending {
			paths[j] = items[i].path
		}
		ids, looked, err := m.Repo.StoredLooked(paths)
		if err != nil {
			return nil, nil, fmt.Errorf("look up stored exchanges: %w", err)
		}
		if first == nil {
			first = looked
		}
		// An exchange once forgotten is never stored again (re-import,
		// hook). An item whose id a tombstone names is refused even when it
		// differs from the forgotten one: a tombstone keeps no text to
		// compare, and a reader or redaction change must not bring
		// forgotten text back.
		dead, err := m.Repo.Tombstoned(paths)
		if err != nil {
			return nil, nil, fmt.Errorf("look up forgotten exchanges: %w", err)
		}
		// The same blob: present, no blob read.
		same := make([]bool, len(pending))
		parallel(len(pending), func(j int) {
			if p := items[pending[j]]; !ids[j].IsZero() && p.stage != contentID {
				same[j] = gitstore.BlobID(p.blob) == ids[j]
			}
		})
		var next []int
		for j, i := range pending {
			p := items[i]
			var c claim
			fromClaim := false
			switch {
			case dead[j]:
				st[i] = stForgotten
				continue
			case !ids[j].IsZero() && (p.stage == contentID || same[j]):
				st[i] = stPresent
				continue
			case !ids[j].IsZero():
				stored, err := m.Repo.Blob(ids[j])
				if err != nil {
					return nil, nil, fmt.Errorf("read stored exchange %s: %w", p.key, err)
				}
				old, err := exchange.Parse(stored)
				if err != nil {
					p.derive(contentID, nil) // unreadable: never taken for this one
					next = append(next, i)
					continue
				}
				c = claim{first: rawFirstUser(old), replied: replied(old), blob: stored}
			case seen.has(p.key):
				if p.stage == contentID {
					st[i], p.claimed = stPresent, true
					continue
				}
				c, fromClaim = seen[p.key], true
			default:
				st[i] = stNew
				seen[p.key] = claimOf(p)
				continue
			}
			switch {
			case !sameFirst(c.first, p):
				p.derive(contentID, nil)
			case c.replied || !replied(p.ex):
				st[i], p.claimed = stPresent, fromClaim
				continue
			case p.stage == ownID:
				p.derive(completedID, c.blob)
			default:
				// A prompt alone at its completed id: not made so.
				p.derive(contentID, nil)
			}
			next = append(next, i)
		}
		pending = next
	}
	return st, first, nil
}

// derive moves p to the id of stage to (CompletedID of the blob stored
// alone, or DerivedID of p as read with its own id).
func (p *prepared) derive(to stage, alone []byte) {
	if p.stage == ownID {
		p.ownKey, p.ownBlob, p.ownExID = p.key, p.blob, p.ex.ID
	}
	id := DerivedID(p.ownKey, p.ownBlob)
	p.alone = plumbing.ZeroHash
	if to == completedID {
		id = CompletedID(p.ownKey, alone)
		p.alone = gitstore.BlobID(alone)
	}
	p.stage = to
	p.ex.ID, p.key, p.path = id, id, exchange.BlobPath(id)
	p.blob = p.ex.Canonical()
}

// restart moves an item at a completed or derived id back to its own id,
// for classify to compare it from there again: a completed id holds only
// while its own id holds the prompt alone it names (storeItems, after the
// append found it did not), and an item settled against a claim is settled
// again against main (recheckClaimed).
func (p *prepared) restart() {
	if p.stage == ownID {
		return
	}
	p.stage, p.alone = ownID, plumbing.ZeroHash
	p.key, p.blob = p.ownKey, p.ownBlob
	p.ex.ID, p.path = p.ownExID, exchange.BlobPath(p.ownKey)
}

// mergeKey orders two exchanges a sync finds at one path (gitstore's
// RecordKey): the SHA-256 of the first user turn (whitespace folded), then
// 0 for an exchange that holds a turn of the agent's, 1 for a prompt stored
// alone. So of one prompt stored alone on one machine and with its reply on
// another, every machine keeps the reply (by the blob id alone the prompt
// won half the time, and the reply left main and search); of two other
// exchanges, one wins on every machine, as before. A blob that is not an
// exchange has no key and wins over those that are (it stays as it is).
func mergeKey(blob []byte) []byte {
	ex, err := exchange.Parse(blob)
	if err != nil {
		return nil
	}
	k := sha256.Sum256([]byte(firstUser(ex)))
	alone := byte(1)
	if replied(ex) {
		alone = 0
	}
	return append(k[:], alone)
}
