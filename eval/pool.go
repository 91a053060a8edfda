package eval

// Pool merges sets into one: a developer keeps one memory across all their
// projects, not one per project, and a query must find its answer among
// everything else they did. Exchange ids, sessions and query ids are
// namespaced "<folder>/…" (LongMemEval's filler sessions repeat across its
// folders: without it, 221 ids would name two exchanges); each query keeps
// its own folder's relevant ids and its folder for the per-set report.
func Pool(name string, sets []Set) Set {
	p := Set{Name: name}
	for _, s := range sets {
		p.Pooled = append(p.Pooled, s.Name)
		ns := s.Name + "/"
		for _, ex := range s.Exchanges {
			c := *ex // build clones it again before Add
			if c.ID != "" {
				c.ID = ns + c.ID
			}
			if c.Session != "" {
				c.Session = ns + c.Session
			}
			p.Exchanges = append(p.Exchanges, &c)
		}
		for _, q := range s.Queries {
			q.QID = ns + q.QID
			rel := make([]string, len(q.Relevant))
			for i, id := range q.Relevant {
				rel[i] = ns + id
			}
			q.Relevant = rel
			stale := make([]string, len(q.Stale))
			for i, id := range q.Stale {
				stale[i] = ns + id
			}
			q.Stale = stale
			if q.Set == "" {
				q.Set = s.Name
			}
			p.Queries = append(p.Queries, q)
		}
	}
	return p
}
