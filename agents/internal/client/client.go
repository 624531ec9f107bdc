// Package client speaks the node-agent protocol of the Fulcrum API: a
// long-poll for the desired revision, a report of the apply outcome, the
// node's status (its networks, the IPVS schedulers in force, its VRRP
// states), its VRRP state changes and its telemetry (traffic and member
// health).
//
// The requests go through the client generated from api/openapi.yaml
// (internal/apiclient): its paths and parameters are the schema's. What this
// package adds is the agent's side: its types, the limits it cuts to, the
// deadlines and the pinned certificate.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"fulcrum/agents/internal/apiclient"
)

// MaxMessageLen bounds the report message; the API stores at most about this
// many characters, and HAProxy's error output can be much longer.
const MaxMessageLen = 4000

// MaxEventsPerCall is how many events one SendEvents call may carry (the
// API's limit).
const MaxEventsPerCall = 100

// MaxReasonLen bounds an event's reason, as the API stores it.
const MaxReasonLen = 500

// pollMargin is added to the long-poll wait to form the HTTP timeout, so that
// a server holding the request for the full wait never looks like a timeout.
const pollMargin = 15 * time.Second

const jsonType = "application/json"

// ErrUnauthorized is returned when the API rejects the node token (401).
var ErrUnauthorized = errors.New("api rejected the node token (401)")

// State is the outcome of applying a revision, as reported to the API.
type State string

// Report states understood by the API.
const (
	StateApplied State = "applied"
	StateFailed  State = "failed"
)

// Bundle is one published revision for this node: the rendered files keyed
// by their relative file name.
type Bundle struct {
	// Revision is the revision number, increasing with each publication.
	Revision int64 `json:"revision"`
	// Node is the node name the files were rendered for.
	Node string `json:"node"`
	// Files maps relative file names (e.g. "haproxy.cfg") to full content.
	Files map[string]string `json:"files"`
	// ConfirmBy is when the revision must be confirmed by (the API's
	// clock), while it awaits confirmation; nil otherwise.
	ConfirmBy *time.Time `json:"confirm_by,omitempty"`
}

// Poll is what the agent asks of the long-poll.
type Poll struct {
	// Known is the revision the node runs, 0 if none.
	Known int64
	// Wait is how long the API may hold the request when nothing is new;
	// it is sent in whole seconds.
	Wait time.Duration
	// Awaiting says the node holds Known as awaiting confirmation: the API
	// then also answers at once, with Known's bundle and no ConfirmBy,
	// when it no longer awaits.
	Awaiting bool
}

// Report tells the API how applying a revision went.
type Report struct {
	// Revision is the revision the report is about.
	Revision int64 `json:"revision"`
	// State is applied or failed.
	State State `json:"state"`
	// Message explains the outcome, e.g. HAProxy's error output.
	Message string `json:"message"`
}

// NodeStatus is what the node tells the API about itself, apart from
// apply outcomes.
type NodeStatus struct {
	// Networks lists every global address of the interfaces in the
	// daemons' network namespace, with its prefix length, e.g.
	// "10.0.0.1/24" or "fd00::1/64".
	Networks []string `json:"networks"`
	// IPVS has one entry per virtual server of keepalived.d/ipvs.json.
	IPVS []IPVSStatus `json:"ipvs"`
	// Members has the live figures of every member of a
	// dynamic-least-load pool.
	Members []MemberStatus `json:"members"`
	// VRRP has the node's state in each of its HA groups.
	VRRP []VRRPStatus `json:"vrrp"`
	// Management is the appliance's state for the cluster's management VIP
	// (fulcrum-management's, named as VRRP states are: master, backup, fault,
	// stopped); empty when it has none.
	Management string `json:"management,omitempty"`
}

// VRRPStatus is the node's VRRP state in one HA group.
type VRRPStatus struct {
	// Group is the HA group's name.
	Group string `json:"group"`
	// State is master, backup, fault, stopped or unknown.
	State string `json:"state"`
	// Priority is the priority keepalived last reported, or the
	// configured one.
	Priority int `json:"priority"`
	// Since is when the node entered State, as far as the agent knows;
	// null when unknown.
	Since *time.Time `json:"since"`
}

// Event is a change of the node's VRRP state in one HA group.
type Event struct {
	// At is when the agent learnt of the change.
	At time.Time `json:"at"`
	// Group is the HA group's name.
	Group string `json:"group"`
	// OldState and NewState are master, backup, fault, stopped or
	// unknown.
	OldState string `json:"old_state"`
	NewState string `json:"new_state"`
	// Priority is the node's priority in the group.
	Priority int `json:"priority"`
	// Reason says why, as far as the agent can tell.
	Reason string `json:"reason"`
}

// DaemonEvent is HAProxy or keepalived found stopped between applies by
// the agent's supervisor, and what it did about it.
type DaemonEvent struct {
	// At is when the agent found it stopped.
	At time.Time `json:"at"`
	// Daemon is haproxy or keepalived.
	Daemon string `json:"daemon"`
	// Outcome is restarted or restart-failed.
	Outcome string `json:"outcome"`
	// Detail says from which revision it started again, or why it could
	// not.
	Detail string `json:"detail"`
}

// Daemon event outcomes understood by the API.
const (
	DaemonRestarted     = "restarted"
	DaemonRestartFailed = "restart-failed"
)

// MemberStatus is the live state of one member of a dynamic-least-load
// pool on this node.
type MemberStatus struct {
	// Pool and Member name it in the API.
	Pool   string `json:"pool"`
	Member string `json:"member"`
	// Layer is "ipvs" or "haproxy".
	Layer string `json:"layer"`
	// LoadMilli is the smoothed load (1000 = one fully busy server) and
	// LoadAt when it was last read; null when never read.
	LoadMilli *int64     `json:"load_milli"`
	LoadAt    *time.Time `json:"load_at"`
	// Connections and Weight are what the scheduler sees now; null when
	// unknown (IPVS: active + inactive connections).
	Connections *int `json:"connections"`
	Weight      *int `json:"weight"`
	// Feed is how the load reaches the scheduler: "ip_vs_dllc", "wlc
	// weights" (the module is missing) or "haproxy agent-check"; empty when
	// it does not.
	Feed string `json:"feed"`
	// Message says what is wrong, if anything.
	Message string `json:"message"`
}

// IPVSStatus is the scheduler of one IPVS virtual server.
type IPVSStatus struct {
	// Key is the service's key from ipvs.json.
	Key string `json:"key"`
	// Name is the virtual service's name from ipvs.json.
	Name string `json:"name"`
	// SchedulerWanted is the scheduler ipvs.json asks for.
	SchedulerWanted string `json:"scheduler_wanted"`
	// SchedulerInForce is the kernel's, "" when the kernel has no such
	// service.
	SchedulerInForce string `json:"scheduler_in_force"`
	// Message says why the two differ; empty when they do not.
	Message string `json:"message"`
}

// Telemetry is what the node's daemons counted during one interval: each
// virtual service's and each pool member's traffic, and each member's
// health.
type Telemetry struct {
	// IntervalS is how many seconds the counts cover (1 to 300).
	IntervalS int `json:"interval_s"`
	// ReadAt is when the counts were read, the interval's end; the API
	// graphs them there rather than when they arrive.
	ReadAt time.Time `json:"read_at,omitzero"`
	// Services has one entry per virtual service on this node.
	Services []ServiceTelemetry `json:"services"`
	// Members has one entry per pool member on this node.
	Members []MemberTelemetry `json:"members"`
}

// Traffic are the figures of a service or member: Connections is the
// current count, the others count what happened during the interval.
type Traffic struct {
	Connections int64 `json:"connections"`
	Requests    int64 `json:"requests"`
	Errors      int64 `json:"errors"`
	BytesIn     int64 `json:"bytes_in"`
	BytesOut    int64 `json:"bytes_out"`
}

// ServiceTelemetry is one virtual service's traffic.
type ServiceTelemetry struct {
	// Service is the virtual service's name.
	Service string `json:"service"`
	Traffic
}

// MemberTelemetry is one pool member's traffic and health.
type MemberTelemetry struct {
	// Pool and Member name it in the API.
	Pool   string `json:"pool"`
	Member string `json:"member"`
	Traffic
	Health Health `json:"health"`
}

// Health is a member's health as the node's daemon sees it.
type Health struct {
	// Status is up, down, drain, maint or unchecked.
	Status string `json:"status"`
	// Check is the daemon's word for the last check's outcome, e.g.
	// "L4CON" (at most MaxCheckLen characters); empty when none.
	Check string `json:"check"`
	// Detail explains it (at most MaxDetailLen characters).
	Detail string `json:"detail"`
	// Code is the last check's status code (e.g. HTTP 503), LatencyMS
	// how long it took; nil when unknown.
	Code      *int `json:"code"`
	LatencyMS *int `json:"latency_ms"`
}

// Health statuses understood by the API.
const (
	HealthUp        = "up"
	HealthDown      = "down"
	HealthDrain     = "drain"
	HealthMaint     = "maint"
	HealthUnchecked = "unchecked"
)

// Telemetry limits of the API.
const (
	// MaxTelemetryItems bounds each list of a Telemetry.
	MaxTelemetryItems = 10000
	// MaxCheckLen and MaxDetailLen bound a Health's texts.
	MaxCheckLen  = 32
	MaxDetailLen = 1000
)

// StatusError is an unexpected HTTP answer from the API.
type StatusError struct {
	// Op is the call that failed ("desired", "report", "status",
	// "events" or "telemetry").
	Op string
	// Status is the HTTP status code.
	Status int
	// Body is the start of the response body.
	Body string
}

// Error implements error.
func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: unexpected HTTP %d: %s", e.Op, e.Status, e.Body)
}

// Client calls the agent endpoints of one Fulcrum API.
type Client struct {
	base *url.URL
	api  *apiclient.Client
}

// New returns a client for the API at baseURL (for example
// "https://fulcrum.example:8443") authenticating with the node token.
func New(baseURL, token string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("api url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("api url %q: want http(s)://host[:port]", baseURL)
	}
	if token == "" {
		return nil, errors.New("empty node token")
	}
	// No client-wide timeout: each call sets its own deadline, since the
	// long-poll legitimately lasts as long as the wait it asks for.
	api, err := apiclient.NewClient(u.String(), apiclient.WithHTTPClient(&http.Client{}),
		apiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Node "+token)
			req.Header.Set("Accept", "application/json")
			return nil
		}))
	if err != nil {
		return nil, fmt.Errorf("api url: %w", err)
	}
	return &Client{base: u, api: api}, nil
}

// Pin makes the client trust exactly one certificate (PEM): the API's TLS
// certificate must be that one, byte for byte, whatever it names and whoever
// signed it. The appliances of a cluster share one self-signed console
// certificate, which a joining appliance pinned at its first boot; the
// address it is reached at (the management VIP, an appliance's own) does not
// matter.
func (c *Client) Pin(certPEM []byte) error {
	if c.base.Scheme != "https" {
		return fmt.Errorf("a pinned certificate needs an https API URL, not %s", c.base.Redacted())
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return errors.New("pinned certificate: no PEM CERTIFICATE block")
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return fmt.Errorf("pinned certificate: %w", err)
	}
	want := block.Bytes
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain and the name are not what is checked: VerifyConnection
		// compares the certificate with the pinned one, on every handshake
		// (resumed ones included).
		InsecureSkipVerify: true, //nolint:gosec // replaced by the exact pin below
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, want) {
				return errors.New("the API's certificate is not the pinned one")
			}
			return nil
		},
	}
	c.api.Client = &http.Client{Transport: transport}
	return nil
}

// Desired long-polls for the newest revision: the server holds the request up
// to p.Wait when nothing is newer than p.Known. It returns (nil, nil) when
// the server answers 204: nothing new.
func (c *Client) Desired(ctx context.Context, p Poll) (*Bundle, error) {
	ctx, cancel := context.WithTimeout(ctx, p.Wait+pollMargin)
	defer cancel()
	known, wait := int(p.Known), int(p.Wait.Seconds())
	params := &apiclient.AgentDesiredRetrieveParams{Known: &known, Wait: &wait}
	if p.Awaiting {
		awaiting := apiclient.AgentDesiredRetrieveParamsAwaiting(1)
		params.Awaiting = &awaiting
	}
	resp, err := c.api.AgentDesiredRetrieve(ctx, params)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	switch resp.StatusCode {
	case http.StatusNoContent:
		return nil, nil
	case http.StatusOK:
		var b Bundle
		if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
			return nil, fmt.Errorf("desired: decode: %w", err)
		}
		return &b, nil
	default:
		return nil, statusError("desired", resp)
	}
}

// Report sends the outcome of applying a revision. Long messages are cut to
// MaxMessageLen characters.
func (c *Client) Report(ctx context.Context, r Report) error {
	ctx, cancel := context.WithTimeout(ctx, pollMargin)
	defer cancel()
	r.Message = Truncate(r.Message, MaxMessageLen)
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	resp, err := c.api.AgentReportsCreateWithBody(ctx, jsonType, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode/100 != 2 {
		return statusError("report", resp)
	}
	return nil
}

// Status sends the node's status. Nil lists are sent as empty ones.
func (c *Client) Status(ctx context.Context, s NodeStatus) error {
	ctx, cancel := context.WithTimeout(ctx, pollMargin)
	defer cancel()
	if s.Networks == nil {
		s.Networks = []string{}
	}
	if s.IPVS == nil {
		s.IPVS = []IPVSStatus{}
	}
	if s.Members == nil {
		s.Members = []MemberStatus{}
	}
	if s.VRRP == nil {
		s.VRRP = []VRRPStatus{}
	}
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	resp, err := c.api.AgentStatusCreateWithBody(ctx, jsonType, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode/100 != 2 {
		return statusError("status", resp)
	}
	return nil
}

// SendEvents sends VRRP state changes, at most MaxEventsPerCall. Long
// reasons are cut to MaxReasonLen characters.
func (c *Client) SendEvents(ctx context.Context, events []Event) error {
	out := make([]Event, len(events))
	for i, e := range events {
		e.Reason = Truncate(e.Reason, MaxReasonLen)
		out[i] = e
	}
	return sendEvents(ctx, "events", c.api.AgentEventsCreateWithBody, out)
}

// SendDaemonEvents sends daemon restarts, at most MaxEventsPerCall. Long
// details are cut to MaxReasonLen characters.
func (c *Client) SendDaemonEvents(ctx context.Context, events []DaemonEvent) error {
	out := make([]DaemonEvent, len(events))
	for i, e := range events {
		e.Detail = Truncate(e.Detail, MaxReasonLen)
		out[i] = e
	}
	return sendEvents(ctx, "daemon events", c.api.AgentDaemonEventsCreateWithBody, out)
}

// post is one of the generated client's POST calls of a JSON body.
type post func(ctx context.Context, contentType string, body io.Reader, reqEditors ...apiclient.RequestEditorFn) (*http.Response, error)

// sendEvents posts {"events": events} through send.
func sendEvents[E any](ctx context.Context, op string, send post, events []E) error {
	if len(events) > MaxEventsPerCall {
		return fmt.Errorf("%s: %d in one call, the api takes at most %d", op, len(events), MaxEventsPerCall)
	}
	ctx, cancel := context.WithTimeout(ctx, pollMargin)
	defer cancel()
	body, err := json.Marshal(struct {
		Events []E `json:"events"`
	}{events})
	if err != nil {
		return err
	}
	resp, err := send(ctx, jsonType, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode/100 != 2 {
		return statusError(op, resp)
	}
	return nil
}

// Telemetry sends one interval's telemetry. Nil lists are sent as empty
// ones; lists longer than MaxTelemetryItems are cut, and health texts to
// what the API stores.
func (c *Client) Telemetry(ctx context.Context, t Telemetry) error {
	ctx, cancel := context.WithTimeout(ctx, pollMargin)
	defer cancel()
	t.Services = append([]ServiceTelemetry{}, t.Services[:min(len(t.Services), MaxTelemetryItems)]...)
	members := make([]MemberTelemetry, 0, min(len(t.Members), MaxTelemetryItems))
	for _, m := range t.Members[:min(len(t.Members), MaxTelemetryItems)] {
		m.Health.Check = cut(m.Health.Check, MaxCheckLen)
		m.Health.Detail = Truncate(m.Health.Detail, MaxDetailLen)
		members = append(members, m)
	}
	t.Members = members
	body, err := json.Marshal(t)
	if err != nil {
		return err
	}
	resp, err := c.api.AgentTelemetryCreateWithBody(ctx, jsonType, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode/100 != 2 {
		return statusError("telemetry", resp)
	}
	return nil
}

func statusError(op string, resp *http.Response) error {
	if resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%s: %w", op, ErrUnauthorized)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return &StatusError{Op: op, Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
}

// drain lets the connection be reused by reading what is left of the body.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// cut cuts s to at most n runes, without a mark.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// Truncate cuts s to at most n runes, marking the cut.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	const mark = "\n[truncated]"
	return string(r[:n-len(mark)]) + mark
}
