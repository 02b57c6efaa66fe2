package siem

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/mcpseal/mcpseal/audit"
)

// logsReceiver is a real OTLP logs service (grpc-go) and OTLP/HTTP
// endpoint; it rejects the first batch partially (a partial success),
// keeps every request, and writes them as the Collector's file exporter
// would (OTLP JSON, one a line).
type logsReceiver struct {
	collogspb.UnimplementedLogsServiceServer
	mu       sync.Mutex
	reqs     []*collogspb.ExportLogsServiceRequest
	rejectN  int
	accepted int
}

func (r *logsReceiver) take(req *collogspb.ExportLogsServiceRequest) *collogspb.ExportLogsServiceResponse {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rejectN > 0 {
		r.rejectN--
		return &collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: 1, ErrorMessage: "MARKER-COLLECTOR says no"}}
	}
	r.reqs = append(r.reqs, req)
	return &collogspb.ExportLogsServiceResponse{}
}

func (r *logsReceiver) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	return r.take(req), nil
}

func (r *logsReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 16<<20))
	var m collogspb.ExportLogsServiceRequest
	if req.URL.Path != "/v1/logs" || req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &m) != nil {
		http.Error(w, "not OTLP/HTTP logs", http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(r.take(&m))
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *logsReceiver) fileExport(t *testing.T) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b bytes.Buffer
	for _, req := range r.reqs {
		j, err := protojson.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestOTLPLogsInChainOrder: over OTLP/HTTP and OTLP/gRPC, every event
// arrives once as a log record whose body is the chained line, with its
// position in attributes; a partial success is not taken as delivery; the
// Collector file exporter's copy verifies against the local chain.
func TestOTLPLogsInChainOrder(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(proto, "/", "-"), func(t *testing.T) {
			t.Parallel()
			home, _ := newLog(t, 300)
			recv := &logsReceiver{rejectN: 1}
			var endpoint string
			if proto == "grpc" {
				gs := grpc.NewServer()
				collogspb.RegisterLogsServiceServer(gs, recv)
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				go gs.Serve(l)
				defer gs.Stop()
				endpoint = "http://" + l.Addr().String()
			} else {
				srv := httptest.NewServer(recv)
				defer srv.Close()
				endpoint = srv.URL
			}
			cfg := &Config{SpoolEvents: DefaultSpoolEvents, Sinks: []SinkConfig{{Name: "otel", Type: "otlp", Endpoint: endpoint, Protocol: proto}}}
			ex, err := Start(home, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			if err := ex.Ship(15 * time.Second); err != nil {
				t.Fatal(err)
			}
			recv.mu.Lock()
			var lines [][]byte
			for _, req := range recv.reqs {
				for _, rl := range req.ResourceLogs {
					for _, sl := range rl.ScopeLogs {
						for _, r := range sl.LogRecords {
							line := []byte(r.Body.GetStringValue())
							seq, _ := seqOf(line)
							if r.EventName != "mcpseal.audit" || r.Attributes[0].Key != "mcpseal.audit.seq" || r.Attributes[0].Value.GetIntValue() != seq {
								t.Fatalf("record for event %d: %v", seq, r)
							}
							lines = append(lines, line)
						}
					}
				}
			}
			recv.mu.Unlock()
			if dups := inChainOrder(t, lines, 300); dups != 0 {
				t.Errorf("%d events twice", dups)
			}
			copyLines, err := ParseCopy(recv.fileExport(t))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := audit.CheckStream(home, copyLines)
			if err != nil || !rep.OK() || rep.Events != 300 {
				t.Fatalf("the collector's file copy does not verify: %+v %v", rep, err)
			}
		})
	}
}

func TestRejectedCount(t *testing.T) {
	t.Parallel()
	b, _ := proto.Marshal(&collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: 7, ErrorMessage: "x"}})
	if n := rejected(b); n != 7 {
		t.Fatalf("rejected = %d", n)
	}
	if n := rejected(nil); n != 0 {
		t.Fatalf("empty answer: %d", n)
	}
	if n := rejected([]byte{0xff}); n != -1 {
		t.Fatalf("garbage: %d", n)
	}
}
