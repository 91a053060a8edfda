// Package distill turns an exchange into a card: a one- or two-sentence core,
// one specific detail, 1–3 rooms and the files touched. Cards are the routing
// index of the memory; the verbatim exchange stays beside them, so a card
// needs to be findable and honest rather than complete.
//
// Two distillers live here: Heuristic, the offline default (extractive, so the
// participants' own words survive by construction), and OpenAI, which asks any
// OpenAI-compatible endpoint and validates the answer against the exchange,
// falling back to Heuristic when the model cannot be trusted.
package distill

import (
	"context"
	"fmt"

	"github.com/gitmem/git-mem/exchange"
)

// Distiller writes the card of one exchange. Name is recorded in the
// commit's Distiller trailer, so it carries a version.
type Distiller interface {
	Name() string
	Distill(ctx context.Context, ex *exchange.Exchange) (exchange.Card, error)
}

// HeuristicName is the Distiller trailer of heuristic cards.
const HeuristicName = "heuristic/3"

// Heuristic is the offline default distiller: deterministic, fast, no
// network, and extractive. The zero value is ready to use and safe for
// concurrent use.
type Heuristic struct{}

// Name implements Distiller.
func (Heuristic) Name() string { return HeuristicName }

// Distill implements Distiller. It never fails on odd input: an exchange with
// nothing to extract gets a short honest card saying so.
func (h Heuristic) Distill(ctx context.Context, ex *exchange.Exchange) (card exchange.Card, err error) {
	if err := ctx.Err(); err != nil {
		return exchange.Card{}, err
	}
	// A bug in text heuristics must not stop a hook or an import: report it
	// as an error so the caller can record and skip the exchange.
	defer func() {
		if r := recover(); r != nil {
			id := ""
			if ex != nil {
				id = ex.ID
			}
			card, err = exchange.Card{}, fmt.Errorf("heuristic distiller: internal error on exchange %q: %v", id, r)
		}
	}()
	return heuristicCard(ex), nil
}
