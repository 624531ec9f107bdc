package apiclient

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseError(t *testing.T) {
	version := 3
	tests := []struct {
		name   string
		status int
		body   string
		want   *APIError
	}{
		{"detail", 401, `{"detail": "Invalid token."}`, &APIError{Status: 401, Detail: "Invalid token."}},
		{"fields", 400, `{"port": ["Too big."], "address": ["Not an address.", "Empty."]}`, &APIError{Status: 400, Problems: []Problem{
			{"address", "Not an address."}, {"address", "Empty."}, {"port", "Too big."}}}},
		{"nested", 400, `{"conditions": [{}, {"value": ["Bad regex."]}], "non_field_errors": ["Clash."]}`, &APIError{Status: 400, Problems: []Problem{
			{"conditions[1].value", "Bad regex."}, {"", "Clash."}}}},
		{"problems", 400, `{"detail": "Not published.", "problems": [{"path": "pools/web", "message": "no members"}]}`,
			&APIError{Status: 400, Detail: "Not published.", Problems: []Problem{{"pools/web", "no members"}}}},
		{"conflict", 409, `{"detail": "Changed.", "version": 3}`, &APIError{Status: 409, Detail: "Changed.", Version: &version}},
		{"list", 400, `["Bad."]`, &APIError{Status: 400, Problems: []Problem{{"", "Bad."}}}},
		{"html", 502, "<html>\nBad gateway</html>", &APIError{Status: 502, Detail: "<html>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseError(tt.status, []byte(tt.body))
			tt.want.Body = []byte(tt.body)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseError (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAPIErrorText(t *testing.T) {
	e := ParseError(400, []byte(`{"port": ["Too big."]}`))
	if got, want := e.Error(), "400 Bad Request\nport: Too big."; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
