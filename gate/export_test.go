package gate

// PhaseName names the session's phase, for tests that check which phases
// a script reaches.
func (s *Session) PhaseName() string {
	return [...]string{"idle", "handshake", "listing", "open", "closed"}[s.phase]
}

// NamesTheGate and InputRequestsLookAlike are the look-alike checks, for
// their fuzz target.
var (
	NamesTheGate           = namesTheGate
	InputRequestsLookAlike = inputRequestsLookAlike
)

// FoldsToNothing reports whether the look-alike fold reads no letter in r.
func FoldsToNothing(r rune) bool {
	if r < 0x80 {
		return foldASCII(byte(r)) == 0
	}
	return len(appendFolded(nil, r)) == 0
}
