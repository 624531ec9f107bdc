package loadd

import (
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"time"

	"fulcrum/agents/internal/dllc"
)

// Report is the body of GET /v1/load.
type Report struct {
	// LoadMilli is the load in milli-loads (1000 = one fully busy server).
	LoadMilli int64 `json:"load_milli"`
	// Load is LoadMilli / 1000.
	Load float64 `json:"load"`
	// Busy and Waiting are the load's two parts (rounded to 0.001).
	Busy    float64 `json:"busy"`
	Waiting float64 `json:"waiting"`
	// AgentPercent is what the agent-check answers: dllc.AgentPercent.
	AgentPercent int `json:"agent_percent"`
	// Source is the source's kind: system, cgroup, file or command.
	Source string `json:"source"`
	// WindowMS is the window's length in milliseconds.
	WindowMS int64 `json:"window_ms"`
	// MeasuredAt is when the newest sample was taken (RFC 3339, UTC, with
	// nanoseconds).
	MeasuredAt string `json:"measured_at"`
}

// NewReport describes load as measured by meter.
func NewReport(l Load, meter *Meter) Report {
	return Report{
		LoadMilli:    l.Milli,
		Load:         float64(l.Milli) / dllc.FullLoad,
		Busy:         round3(l.Busy),
		Waiting:      round3(l.Waiting),
		AgentPercent: dllc.AgentPercent(l.Milli),
		Source:       meter.Source().Kind(),
		WindowMS:     meter.Window().Milliseconds(),
		MeasuredAt:   l.MeasuredAt.UTC().Format(time.RFC3339Nano),
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// NewHandler serves GET /v1/load (a Report, or 503 with {"error": "..."}
// while the load is unknown) and GET /healthz ("ok": the process runs),
// 404 for other paths, 405 for other methods, 403 for clients outside allow.
func NewHandler(meter *Meter, allow *Allowlist, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/load", func(w http.ResponseWriter, r *http.Request) {
		l, err := meter.Current(time.Now())
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, NewReport(l, meter))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	refusals := newRefusalLog(logger, "http")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ap, _ := netip.ParseAddrPort(r.RemoteAddr)
		if !allow.Allows(ap.Addr()) {
			refusals.note(time.Now(), ap.Addr())
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// NewHTTPServer wraps handler in a server with timeouts fit for a small
// endpoint exposed to the network.
func NewHTTPServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
	}
}
