package siem

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpseal/mcpseal/audit"
)

// Webhook headers.
const (
	HeaderSignature = "X-Mcpseal-Signature"
	HeaderBatch     = "X-Mcpseal-Batch"
)

// Webhook bounds: a batch is answered within sendTimeout or retried; what
// the receiver says back is not read beyond maxWebhookResponse.
const (
	sendTimeout        = 10 * time.Second
	maxWebhookResponse = 64 << 10
)

type webhook struct {
	name string
	url  string
	hmac []byte
	ed   ed25519.PrivateKey
	hc   *http.Client
}

func newWebhook(c SinkConfig) *webhook {
	tr := &http.Transport{
		Proxy:                 nil, // the receiver is reached directly, never through an environment's proxy
		DialContext:           (&net.Dialer{Timeout: sendTimeout}).DialContext,
		TLSHandshakeTimeout:   sendTimeout,
		ResponseHeaderTimeout: sendTimeout,
		MaxIdleConns:          2,
		IdleConnTimeout:       time.Minute,
	}
	return &webhook{name: c.Name, url: c.URL, hmac: c.HMACKey, ed: c.Ed25519Key,
		hc: &http.Client{Transport: tr, Timeout: sendTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Sign returns the signature header value for body.
func sign(body, hmacKey []byte, ed ed25519.PrivateKey) string {
	if ed != nil {
		return "ed25519=" + base64.StdEncoding.EncodeToString(ed25519.Sign(ed, body))
	}
	m := hmac.New(sha256.New, hmacKey)
	m.Write(body)
	return "hmac-sha256=" + hex.EncodeToString(m.Sum(nil))
}

func (w *webhook) send(ctx context.Context, lines []audit.Line) error {
	body := encodeBatch(w.name, lines)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mcpseal")
	req.Header.Set(HeaderBatch, strconv.FormatInt(lines[0].Seq, 10)+"-"+strconv.FormatInt(lines[len(lines)-1].Seq, 10))
	req.Header.Set(HeaderSignature, sign(body, w.hmac, w.ed))
	resp, err := w.hc.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxWebhookResponse))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook: HTTP status %d", resp.StatusCode)
	}
	return nil
}

func (w *webhook) close() { w.hc.CloseIdleConnections() }

// resendOnReconnect: an HTTP answer acknowledges its batch.
func (w *webhook) resendOnReconnect() int64 { return 0 }
