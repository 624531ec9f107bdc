package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Scheme is the Authorization scheme of people's and scripts' API tokens
// (`Authorization: Bearer <token>`).
const Scheme = "Bearer"

// LegacyScheme is the scheme of an API whose sign-in answers only {token}
// (before named tokens): such tokens are sent as `Token <key>`.
const LegacyScheme = "Token"

// Options configure New.
type Options struct {
	// Scheme and Token make the Authorization header; no header without a token.
	Scheme string
	Token  string
	// UserAgent names the caller, e.g. "fulcrum-cli/1.2".
	UserAgent string
	// Timeout bounds each request (0: none).
	Timeout time.Duration
	// Insecure skips TLS certificate verification (an appliance's self-signed certificate).
	Insecure bool
}

// New returns a generated client for the API at server (e.g. "https://lb:8443").
func New(server string, opts Options) (*Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if opts.Insecure {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for by the user
	}
	httpClient := &http.Client{Transport: transport, Timeout: opts.Timeout}
	return NewClient(strings.TrimRight(server, "/"), WithHTTPClient(httpClient), WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			if opts.Token != "" {
				scheme := opts.Scheme
				if scheme == "" {
					scheme = Scheme
				}
				req.Header.Set("Authorization", scheme+" "+opts.Token)
			}
			if opts.UserAgent != "" {
				req.Header.Set("User-Agent", opts.UserAgent)
			}
			req.Header.Set("Accept", "application/json")
			return nil
		}))
}

// IfMatch is a request editor that sends the version the caller read, so the
// API refuses the change (409) when someone changed the object since.
func IfMatch(version int) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("If-Match", strconv.Quote(strconv.Itoa(version)))
		return nil
	}
}

// IfMatchParam is the If-Match value of the generated *Params structs.
func IfMatchParam(version int) *string {
	v := strconv.Quote(strconv.Itoa(version))
	return &v
}

// TransportError is a request that got no HTTP answer: the API could not be
// reached (refused, no route, DNS, TLS, timeout).
type TransportError struct{ Err error }

func (e *TransportError) Error() string { return "cannot reach the API: " + e.Err.Error() }

func (e *TransportError) Unwrap() error { return e.Err }

// Problem is one message the API gave about one field (Path empty: the whole request).
type Problem struct {
	Path    string
	Message string
}

// APIError is an HTTP answer of 400 or more, read into one shape whatever
// the API sent: {"detail": ...}, {"detail", "problems": [{path, message}]},
// {field: [messages]} (nested for nested fields), a conflict's {"detail",
// "version"}, or a body that is not JSON at all.
type APIError struct {
	Status   int
	Detail   string
	Problems []Problem
	// Version is the object's current version, when a conflict (409) says it.
	Version *int
	Body    []byte
}

func (e *APIError) Error() string {
	lines := []string{e.Summary()}
	for _, p := range e.Problems {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}

// Summary is the first line: the API's detail, or the HTTP status when it gave none.
func (e *APIError) Summary() string {
	status := fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	if e.Detail == "" {
		return status
	}
	return e.Detail + " (" + status + ")"
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Read returns the body of a successful answer, or the error the request
// came to: *TransportError when there was no answer, *APIError for a status
// of 400 and more. It closes the body.
func Read(resp *http.Response, err error) ([]byte, error) {
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) || errors.Is(err, context.DeadlineExceeded) {
			return nil, &TransportError{Err: err}
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &TransportError{Err: err}
	}
	if resp.StatusCode >= 400 {
		return nil, ParseError(resp.StatusCode, body)
	}
	return body, nil
}

// Decode reads a successful answer's JSON into v (nil: the body is dropped); see Read.
func Decode(resp *http.Response, err error, v any) error {
	body, err := Read(resp, err)
	if err != nil || v == nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the API's answer is not what was expected: %w", err)
	}
	return nil
}

// ParseError reads an error answer's body into an APIError.
func ParseError(status int, body []byte) *APIError {
	e := &APIError{Status: status, Body: body}
	var decoded any
	if err := json.Unmarshal(body, &decoded); err != nil {
		e.Detail = firstLine(string(body))
		return e
	}
	switch v := decoded.(type) {
	case map[string]any:
		e.readObject(v)
	default:
		e.Problems = flatten("", v)
	}
	return e
}

func (e *APIError) readObject(v map[string]any) {
	if detail, ok := v["detail"].(string); ok {
		e.Detail = detail
	}
	for _, key := range []string{"version", "current_version"} {
		if n, ok := v[key].(float64); ok && e.Status == http.StatusConflict {
			version := int(n)
			e.Version = &version
		}
	}
	if problems, ok := v["problems"].([]any); ok {
		for _, item := range problems {
			if p, ok := item.(map[string]any); ok {
				path, _ := p["path"].(string)
				message, _ := p["message"].(string)
				e.Problems = append(e.Problems, Problem{Path: path, Message: message})
			}
		}
	}
	keys := make([]string, 0, len(v))
	for key := range v {
		switch key {
		case "detail", "problems", "version", "current_version":
		default:
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		path := key
		if key == "non_field_errors" {
			path = ""
		}
		e.Problems = append(e.Problems, flatten(path, v[key])...)
	}
}

// flatten turns DRF's nested error values into one problem per message:
// {"conditions": [{}, {"value": ["bad"]}]} gives conditions[1].value: bad.
func flatten(path string, v any) []Problem {
	switch v := v.(type) {
	case string:
		return []Problem{{Path: path, Message: v}}
	case []any:
		var out []Problem
		for i, item := range v {
			if _, isText := item.(string); isText {
				out = append(out, flatten(path, item)...)
				continue
			}
			out = append(out, flatten(fmt.Sprintf("%s[%d]", path, i), item)...)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(v))
		for key := range v {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		var out []Problem
		for _, key := range keys {
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if key == "non_field_errors" {
				sub = path
			}
			out = append(out, flatten(sub, v[key])...)
		}
		return out
	case nil:
		return nil
	default:
		return []Problem{{Path: path, Message: fmt.Sprint(v)}}
	}
}

func firstLine(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return text
}
