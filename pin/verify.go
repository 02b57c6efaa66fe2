package pin

import "errors"

// A Report is what Verify found.
type Report struct {
	// Events is the number of events in the chain.
	Events int64
	// Servers is the number of servers whose records verify, those
	// awaiting their first approval included.
	Servers int
	// Faults lists everything that makes a pin untrustworthy. The store is
	// sound when it is empty.
	Faults []Fault
	// Notes lists harmless leftovers of interrupted writes, which the next
	// change repairs.
	Notes []string
}

// A Fault is one integrity failure. ID is empty for the store as a whole.
type Fault struct {
	ID     string
	Reason string
}

// OK reports whether Verify found no fault.
func (r Report) OK() bool { return len(r.Faults) == 0 }

// Verify checks the event chain and every record file against it. Faults
// go in the report; the error is for a store that could not be read at all.
func (s *Store) Verify() (Report, error) {
	v, err := s.open(false)
	var te *TamperError
	if errors.As(err, &te) {
		// The store's lock file is not a regular file.
		return Report{Faults: []Fault{{Reason: te.Reason}}}, nil
	}
	if err != nil {
		return Report{}, err
	}
	defer v.close()
	rep := Report{Events: v.ch.n}
	if v.chainErr != nil {
		rep.Faults = append(rep.Faults, Fault{Reason: v.chainErr.Error()})
	}
	if v.ch.torn {
		rep.Notes = append(rep.Notes, "events.jsonl ends in an incomplete line (an interrupted write); it is not part of the chain")
	}
	ids, err := v.ids()
	if err != nil {
		return Report{}, err
	}
	if !v.ch.exists && v.chainErr == nil && len(ids) > 0 {
		rep.Faults = append(rep.Faults, Fault{Reason: "events.jsonl is missing but record files exist"})
	}
	for _, id := range ids {
		if v.chainErr != nil {
			rep.Faults = append(rep.Faults, Fault{ID: id, Reason: "cannot be checked against a broken event chain"})
			continue
		}
		r, err := v.record(id)
		switch {
		case errors.As(err, &te):
			rep.Faults = append(rep.Faults, Fault{ID: id, Reason: te.Reason})
		case err != nil:
			return Report{}, err
		case r != nil:
			rep.Servers++
		}
	}
	return rep, nil
}
