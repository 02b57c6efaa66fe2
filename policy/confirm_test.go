package policy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestElicitationCapability(t *testing.T) {
	t.Parallel()
	if !HasElicitation([]string{"roots", "elicitation"}) || HasElicitation([]string{"roots", "sampling"}) || HasElicitation(nil) {
		t.Error("HasElicitation")
	}
	for caps, want := range map[string]bool{
		`{"elicitation":{}}`:                    true,
		`{"elicitation":{"form":{}}}`:           true,
		`{"elicitation":{"form":{},"url":{}}}`:  true,
		`{"elicitation":{"url":{}}}`:            false,
		`{"roots":{}}`:                          false,
		`{"Elicitation":{}}`:                    false,
		`{"elicitation":{},"ELICITATION":null}`: false,
		`{"elicitation":true}`:                  false,
		`not json`:                              false,
		``:                                      false,
	} {
		if got := ElicitationFormSupported([]byte(caps)); got != want {
			t.Errorf("ElicitationFormSupported(%s) = %v", caps, got)
		}
	}
}

func confirmSession(t *testing.T) (*Session, Verdict) {
	t.Helper()
	ss := NewChecker(mustParse(t, `{"version": 1, "defaults": {"confirm_destructive": true}}`), Options{}).Session(stdioServer("memory"))
	v := ss.BeforeToolCall(context.Background(), toolRaw(t, `{"name":"delete_entities\u202e","description":"SECRET-MARKER-DESCRIPTION","annotations":{"destructiveHint":true}}`))
	if v.Decision != RequireConfirmation {
		t.Fatalf("%+v", v)
	}
	return ss, v
}

// TestConfirmationRequestShape: the elicitation/create params the gate
// sends: mcpseal's words with safe names, and a one-boolean form that
// defaults to no.
func TestConfirmationRequestShape(t *testing.T) {
	t.Parallel()
	ss, v := confirmSession(t)
	params := ss.ConfirmationParams(v)
	var p struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Type    string `json:"type"`
				Default *bool  `json:"default"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Message, "delete_entities_") || !strings.Contains(p.Message, nameID("memory")) || strings.Contains(p.Message, "\u202e") || strings.Contains(p.Message, "SECRET-MARKER") {
		t.Errorf("message %q", p.Message)
	}
	c := p.RequestedSchema.Properties["confirm"]
	if p.RequestedSchema.Type != "object" || c.Type != "boolean" || c.Default == nil || *c.Default || len(p.RequestedSchema.Required) != 1 || len(p.RequestedSchema.Properties) != 1 {
		t.Errorf("requestedSchema %+v", p.RequestedSchema)
	}
}

// TestOnlyAnExplicitYesProceeds: accept with confirm true proceeds;
// everything else — decline, cancel, an accept of the default, an accept
// without content, a case variant, garbage — refuses with a hint.
func TestOnlyAnExplicitYesProceeds(t *testing.T) {
	t.Parallel()
	ss, v := confirmSession(t)
	tests := map[string]string{
		`{"action":"accept","content":{"confirm":true}}`:                    "",
		`{"action":"accept","content":{"confirm":true},"_meta":{}}`:         "",
		`{"action":"decline"}`:                                              ReasonConfirmDeclined,
		`{"action":"cancel"}`:                                               ReasonConfirmCancelled,
		`{"action":"accept","content":{"confirm":false}}`:                   ReasonConfirmInvalid,
		`{"action":"accept"}`:                                               ReasonConfirmInvalid,
		`{"action":"accept","content":{"confirm":"true"}}`:                  ReasonConfirmInvalid,
		`{"action":"accept","content":{"confirm":true,"Confirm":false}}`:    ReasonConfirmInvalid,
		`{"action":"accept","Action":"decline","content":{"confirm":true}}`: ReasonConfirmInvalid,
		`{"action":"accept","action":"decline","content":{"confirm":true}}`: ReasonConfirmInvalid,
		`{"action":"ACCEPT","content":{"confirm":true}}`:                    ReasonConfirmInvalid,
		`[]`: ReasonConfirmInvalid,
	}
	for result, want := range tests {
		got := ss.Confirmed(v, []byte(result))
		switch {
		case want == "" && (!got.Proceeds() || got.Code != CodeConfirmAccepted):
			t.Errorf("%s: %+v, want it to proceed", result, got)
		case want != "" && (got.Refusal == nil || got.Refusal.Reason != want || got.Refusal.Kind != KindConfirm || got.Refusal.Hint == ""):
			t.Errorf("%s: %+v, want %s", result, got.Refusal, want)
		}
	}
}

func TestClientWithoutElicitationIsRefused(t *testing.T) {
	t.Parallel()
	ss, v := confirmSession(t)
	for _, reason := range []string{ReasonConfirmUnavailable, ReasonConfirmTimeout, "bogus"} {
		got := ss.NotConfirmed(v, reason)
		r := got.Refusal
		if r == nil || r.Stage != StageBeforeToolCall || r.Tool != "delete_entities_" || !strings.Contains(r.Hint, `"confirm": false`) {
			t.Errorf("%s: %+v", reason, r)
		}
		if reason == "bogus" && r.Reason != ReasonConfirmInvalid {
			t.Errorf("an unknown reason became %q", r.Reason)
		}
	}
}
