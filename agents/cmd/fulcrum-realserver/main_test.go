package main

import (
	"bytes"
	"strings"
	"testing"

	"fulcrum/agents/internal/realserver"
)

// refusingHost fails the test on any use: usage errors must be caught before
// the host is touched.
type refusingHost struct {
	realserver.Host
	t *testing.T
}

func (h refusingHost) Identity() (realserver.Identity, error) {
	h.t.Fatal("the host was used")
	return realserver.Identity{}, nil
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args       []string
		wantCode   int
		wantStderr string
		wantStdout string
	}{
		{args: nil, wantCode: 2, wantStderr: "Usage:\n  fulcrum-realserver add"},
		{args: []string{"help"}, wantCode: 0, wantStdout: "Exit status: 0 ok, 1 failure, 2 usage error."},
		{args: []string{"--help"}, wantCode: 0, wantStdout: "Usage:"},
		{args: []string{"frobnicate"}, wantCode: 2, wantStderr: `unknown command "frobnicate"`},
		{args: []string{"add", "192.0.2.10"}, wantCode: 2, wantStderr: "mode is required: dr or tun"},
		{args: []string{"add", "--mode", "nat", "192.0.2.10"}, wantCode: 2, wantStderr: `unknown mode "nat": want dr or tun`},
		{args: []string{"add", "--mode", "dr"}, wantCode: 2, wantStderr: "no VIP given"},
		{args: []string{"add", "--mode", "dr", "192.0.2.10", "192.0.2.300"}, wantCode: 2, wantStderr: `VIP "192.0.2.300" is not an IP address`},
		{args: []string{"add", "--mode=dr", "192.0.2.10/32"}, wantCode: 2, wantStderr: "without a prefix length"},
		{args: []string{"add", "--mode", "dr", "192.0.2.10", "--bogus"}, wantCode: 2, wantStderr: "flag provided but not defined: -bogus"},
		{args: []string{"add", "-h"}, wantCode: 0, wantStderr: "Usage: fulcrum-realserver add --mode dr|tun"},
		{args: []string{"remove"}, wantCode: 2, wantStderr: "no VIP given"},
		{args: []string{"remove", "127.0.0.1"}, wantCode: 2, wantStderr: "is a loopback address"},
		{args: []string{"status", "extra"}, wantCode: 2, wantStderr: "unexpected arguments: [extra]"},
		{args: []string{"status", "-o", "yaml"}, wantCode: 2, wantStderr: `-o "yaml": want text or json`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr, refusingHost{t: t})
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantStderr)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout.String(), tt.wantStdout)
			}
		})
	}
}
