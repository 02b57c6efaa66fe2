package policy

import (
	"encoding/json"
	"slices"

	"github.com/mcpseal/mcpseal/canon"
)

// This file is how a person is asked. The gate sends the client an MCP
// elicitation/create request (protocol 2025-06-18 and later) whose form
// has one required boolean, "confirm", defaulting to false:
//
//	{"message": "mcpseal: allow tool delete_entities of server memory (3f9a0c1d2b4e5f60) to run once? ...",
//	 "requestedSchema": {"type": "object",
//	   "properties": {"confirm": {"type": "boolean", "title": "Allow this one call", "default": false}},
//	   "required": ["confirm"]}}
//
// Only {"action": "accept", "content": {"confirm": true}} proceeds: a
// client that accepts a form it did not show gets the default, false. Decline,
// cancel, an accept without confirm true, an error response, no answer
// within confirm_timeout, or a client without the elicitation capability
// (form mode) refuses, with a hint that says how the host can allow the
// call without asking.

// ElicitationMethod is the method of the request that asks a person.
const ElicitationMethod = "elicitation/create"

// confirmField is the form's one field.
const confirmField = "confirm"

// maxElicitationResult bounds the client's answer the gate hands to
// Confirmed: a form with one boolean is tiny.
const maxElicitationResult = 64 << 10

// HasElicitation reports whether a client declared the elicitation
// capability, from the names of its capabilities (the keys of the
// capabilities object of initialize, or of a 2026-07-28 request's
// clientCapabilities).
func HasElicitation(capabilityNames []string) bool {
	return slices.Contains(capabilityNames, "elicitation")
}

// ElicitationFormSupported reports whether the raw capabilities object
// declares form-mode elicitation: an "elicitation" object that is empty
// (2025-06-18, and form by default since) or has a "form" member. An
// elicitation capability with only "url" cannot show a form.
func ElicitationFormSupported(capabilities []byte) bool {
	c, err := canon.Transform(capabilities)
	if err != nil {
		return false
	}
	top, err := topMembers(c, "elicitation")
	if err != nil || top["elicitation"] == nil {
		return false
	}
	el, err := topMembers(top["elicitation"], "form", "url")
	if err != nil {
		return false
	}
	_, form := el["form"]
	_, url := el["url"]
	return form || !url
}

// ConfirmationParams returns the params of the elicitation/create request
// for v, a RequireConfirmation verdict.
func (ss *Session) ConfirmationParams(v Verdict) []byte {
	var subject string
	switch v.Stage {
	case StageBeforeToolCall:
		subject = "mcpseal: allow tool " + v.Tool + " of server " + ss.server.Label + " (" + ss.server.ID + ") to run once?"
	case StageAfterConnect:
		subject = "mcpseal: allow the session with server " + ss.server.Label + " (" + ss.server.ID + ") to go on?"
	default:
		subject = "mcpseal: allow mcpseal to connect to server " + ss.server.Label + " (" + ss.server.ID + ")?"
	}
	var why string
	switch v.Code {
	case CodeConfirmPolicy:
		why = "The host policy asks before every call of this tool."
	case CodeConfirmDestructive:
		why = "Its pinned annotations do not mark it read-only: it may change or delete data, or reach beyond this machine."
		if v.Drifted {
			why = "Its pinned or its current annotations do not mark it read-only, or it was never pinned: it may change or delete data, or reach beyond this machine."
		}
	case CodeConfirmSubject:
		why = "The host policy asks before your calls of this tool."
	default:
		why = "Preflight provider " + v.Provider + " requires a person's confirmation."
	}
	if v.Drifted {
		why += "\nThe server's contract differs from the approved one (its pin or the team lock), and the change has not been reviewed (posture monitor)."
	}
	params := map[string]any{
		"message": subject + "\n" + why + "\nOnly an explicit yes lets it through.",
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				confirmField: map[string]any{"type": "boolean", "title": "Allow this one call", "default": false},
			},
			"required": []string{confirmField},
		},
	}
	b, err := json.Marshal(params)
	if err != nil {
		panic(err) // only strings, booleans and maps: Marshal cannot fail
	}
	return b
}

// Confirmed turns the client's elicitation result (the response's raw
// result member) into the stage's outcome: Allow with CodeConfirmAccepted
// on an explicit yes, else a KindConfirm refusal.
func (ss *Session) Confirmed(v Verdict, result []byte) Verdict {
	reason := ConfirmationAnswer(result)
	if reason == "" {
		v.Decision, v.Code, v.Refusal = Allow, CodeConfirmAccepted, nil
		return v
	}
	return ss.NotConfirmed(v, reason)
}

// ConfirmationAnswer returns "" for an explicit yes — exactly
// {"action": "accept", "content": {"confirm": true}}, read one way only —
// else the reason the answer is not one (ReasonConfirmDeclined,
// ReasonConfirmCancelled, ReasonConfirmInvalid). A nil result (an error
// response) is ReasonConfirmInvalid.
func ConfirmationAnswer(result []byte) string {
	if len(result) > maxElicitationResult {
		return ReasonConfirmInvalid
	}
	c, err := canon.Transform(result)
	if err != nil {
		return ReasonConfirmInvalid
	}
	m, err := topMembers(c, "action", "content")
	if err != nil {
		return ReasonConfirmInvalid
	}
	switch string(m["action"]) {
	case `"decline"`:
		return ReasonConfirmDeclined
	case `"cancel"`:
		return ReasonConfirmCancelled
	case `"accept"`:
		content, err := topMembers(m["content"], confirmField)
		if err != nil || string(content[confirmField]) != "true" {
			return ReasonConfirmInvalid
		}
		return ""
	}
	return ReasonConfirmInvalid
}

// NotConfirmed is the outcome when no person said yes: reason is
// ReasonConfirmUnavailable (the client cannot ask), ReasonConfirmTimeout
// (no answer within ConfirmTimeout), ReasonConfirmInvalid (an error
// response, or an answer that is not a yes), ReasonConfirmDeclined or
// ReasonConfirmCancelled.
func (ss *Session) NotConfirmed(v Verdict, reason string) Verdict {
	what := "the call of tool " + v.Tool
	switch v.Stage {
	case StageAfterConnect:
		what = "the session"
	case StageBeforeConnect:
		what = "the connection"
	}
	var why string
	switch reason {
	case ReasonConfirmUnavailable:
		why = "needs a person's confirmation and the client cannot ask (no elicitation capability)"
	case ReasonConfirmTimeout:
		why = "needs a person's confirmation and none came within " + ss.sp.ConfirmTimeout().String()
	case ReasonConfirmDeclined:
		why = "was declined by the person asked"
	case ReasonConfirmCancelled:
		why = "was dismissed by the person asked"
	default:
		reason = ReasonConfirmInvalid
		why = "needs a person's explicit yes and the client's answer was not one"
	}
	var hint string
	switch v.Code {
	case CodeConfirmPolicy, CodeConfirmDestructive:
		hint = "to allow it without asking, set \"confirm\": false for this tool in the host policy"
	case CodeConfirmSubject:
		hint = "the tool's \"confirm_subjects\" in the host policy names a subject class of this caller"
	default:
		hint = "preflight provider " + v.Provider + " requires confirmation; change its decision or the server's providers in the host policy"
	}
	r := &Refusal{Kind: KindConfirm, Reason: reason, Stage: v.Stage, Tool: v.Tool, Provider: v.Provider, Receipt: v.Receipt,
		Why:  "mcpseal: " + what + " of server " + ss.server.Label + " " + why + "; refused",
		Hint: hint}
	return refused(v.Stage, r)
}
