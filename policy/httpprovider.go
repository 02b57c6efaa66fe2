package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// This file is the http provider: the request is POSTed as JSON to the
// pinned URL, and the answer must be a receipt envelope (receipt.go)
// signed by one of the keys pinned for the provider, about this very
// request (stage, subject digest, nonce) and valid now. Redirects are not
// followed; any status but 200, a body over 16 KiB, a timeout, or a
// receipt that fails any check is a refusal. When bearer_env is set, its
// variable's value is sent as "Authorization: Bearer ..." and an unset
// variable is a refusal, never an anonymous request.

type httpProvider struct {
	cfg    *providerConfig
	client *http.Client
	getenv func(string) string
}

func (p *httpProvider) local() bool { return false }

func (p *httpProvider) decide(ctx context.Context, req *Request, now time.Time) (answer, error) {
	body, subject, err := req.body()
	if err != nil {
		return answer{}, failed("the request could not be encoded")
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.url, bytes.NewReader(body))
	if err != nil {
		return answer{}, failed("the request could not be built")
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if p.cfg.bearerEnv != "" {
		token := p.getenv(p.cfg.bearerEnv)
		if token == "" {
			return answer{}, failed("the environment variable " + p.cfg.bearerEnv + " named by bearer_env is not set")
		}
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := p.client.Do(hr)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return answer{}, failed(fmt.Sprintf("no answer within %s", p.cfg.timeout))
		}
		return answer{}, failed("the request failed")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return answer{}, failed(fmt.Sprintf("the provider answered HTTP status %d", resp.StatusCode))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReceiptBytes+1))
	if err != nil {
		return answer{}, failed("the answer could not be read")
	}
	r, ref, err := ParseReceipt(data, p.cfg.keys)
	if err != nil {
		return answer{}, receiptFailure(err)
	}
	expires, err := r.Check(req.Stage, subject, req.Nonce, now)
	if err != nil {
		return answer{}, receiptFailure(err)
	}
	return answer{decision: r.Decision, reason: r.Reason, expires: expires, receipt: ref}, nil
}

func receiptFailure(err error) error {
	var re *ReceiptError
	if errors.As(err, &re) {
		return &providerError{reason: re.Reason, detail: "the receipt was refused"}
	}
	return failed("the receipt could not be checked")
}
