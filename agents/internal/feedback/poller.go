package feedback

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"fulcrum/agents/internal/bundle"
)

// Poller reads the members' loads from fulcrum-loadd's JSON endpoint and
// smooths them: each new reading moves the load a share Alpha of the way
// towards it (an exponentially weighted moving average), so that one
// noisy sample does not swing every new connection.
type Poller struct {
	// Client makes the requests; its Timeout bounds each one.
	Client *http.Client
	// Alpha is the weight of a new reading, in (0, 1].
	Alpha float64

	mu       sync.Mutex
	readings map[string]*Reading // by URL
}

// Reading is what the Poller knows of one member's load.
type Reading struct {
	// Milli is the smoothed load in milli-loads.
	Milli int64
	// At is when the last good answer arrived; zero if none ever did.
	At time.Time
	// Err says why the last request failed; empty when it worked.
	Err string
}

// loadAnswer is the part of fulcrum-loadd's GET /v1/load the agent uses.
type loadAnswer struct {
	LoadMilli *int64 `json:"load_milli"`
	Error     string `json:"error"`
}

// Poll asks every target at once and waits for all answers (or the
// Client's timeout).
func (p *Poller) Poll(ctx context.Context, targets []bundle.Feedback, now func() time.Time) {
	urls := map[string]bool{}
	for _, t := range targets {
		urls[t.URL()] = true
	}
	var wg sync.WaitGroup
	for url := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			milli, err := p.get(ctx, url)
			p.record(url, milli, err, now())
		}()
	}
	wg.Wait()
}

// Reading returns what is known of the target's load.
func (p *Poller) Reading(t bundle.Feedback) (Reading, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.readings[t.URL()]
	if !ok {
		return Reading{}, false
	}
	return *r, true
}

func (p *Poller) get(ctx context.Context, url string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := p.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return 0, err
	}
	var a loadAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return 0, fmt.Errorf("HTTP %d, not a load: %w", resp.StatusCode, err)
	}
	switch {
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("HTTP %d: %s", resp.StatusCode, a.Error)
	case a.LoadMilli == nil || *a.LoadMilli < 0:
		return 0, fmt.Errorf("answer without a load_milli")
	}
	return *a.LoadMilli, nil
}

func (p *Poller) record(url string, milli int64, err error, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readings == nil {
		p.readings = map[string]*Reading{}
	}
	r := p.readings[url]
	if r == nil {
		r = &Reading{}
		p.readings[url] = r
	}
	if err != nil {
		r.Err = err.Error()
		return
	}
	if r.At.IsZero() {
		r.Milli = milli
	} else {
		r.Milli += int64(p.Alpha * float64(milli-r.Milli))
	}
	r.At, r.Err = now, ""
}

// forget drops the readings of targets no longer listed.
func (p *Poller) forget(targets []bundle.Feedback) {
	keep := map[string]bool{}
	for _, t := range targets {
		keep[t.URL()] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for url := range p.readings {
		if !keep[url] {
			delete(p.readings, url)
		}
	}
}
