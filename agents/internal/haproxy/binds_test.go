package haproxy

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestListeners(t *testing.T) {
	current := "frontend a\n    bind 10.0.0.1:80\nfrontend b\n    bind [2001:db8::1]:443 ssl crt x.pem\n"
	next := current + "frontend c\n    bind 10.0.0.2:80 transparent\n    bind 10.0.0.1:80\n  # bind 10.9.9.9:1\n"
	want := []Listener{{Address: "10.0.0.2:80", Transparent: true}}
	if diff := cmp.Diff(want, NewListeners(next, current)); diff != "" {
		t.Errorf("new listeners (-want +got):\n%s", diff)
	}
	if got := len(Listeners(next)); got != 3 {
		t.Errorf("%d listeners in next, want 3 (each once)", got)
	}
	for _, l := range Listeners(next) {
		if ParseListener(l.String()) != l {
			t.Errorf("%v does not read back from %q", l, l.String())
		}
	}
}

// TryBinds against the host's own loopback: a port another socket holds
// without SO_REUSEPORT, an address no interface has (unless transparent,
// which needs root, as the agent is), and a free one.
func TestTryBinds(t *testing.T) {
	held, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cases := []Listener{
		{Address: held.Addr().String()},
		{Address: "192.0.2.77:80"},
		{Address: "127.0.0.1:0"},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, Listener{Address: "192.0.2.77:80", Transparent: true})
	}
	refused := TryBinds(context.Background(), cases)
	want := []string{
		"bind " + held.Addr().String() + ": bind: address already in use",
		"bind 192.0.2.77:80: bind: cannot assign requested address",
	}
	if diff := cmp.Diff(want, refused); diff != "" {
		t.Errorf("refused (-want +got):\n%s", diff)
	}
	var out strings.Builder
	if code := BindCheckMain(context.Background(), []string{held.Addr().String(), "127.0.0.1:0"}, &out); code != 1 ||
		!strings.Contains(out.String(), "address already in use") {
		t.Errorf("helper: exit %d, %q", code, out.String())
	}
}
