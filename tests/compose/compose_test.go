// Package compose checks docker-compose.yml with the Compose specification's own loader
// (compose-go, as used by `docker compose`), since no Docker engine runs here.
package compose

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

const repo = "../.."

func load(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(repo, "docker-compose.yml")},
		cli.WithWorkingDirectory(repo),
		cli.WithEnv([]string{"FULCRUM_SECRET_KEY=test-only"}),
	)
	if err != nil {
		t.Fatal(err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return project
}

func TestComposeFileIsValid(t *testing.T) {
	project := load(t)
	want := []string{"agent", "api", "console", "postgres"}
	if got := project.ServiceNames(); !slices.Equal(sorted(got), want) {
		t.Fatalf("services = %v, want %v", got, want)
	}
}

func TestAgentHasHostNetworkAndNetAdmin(t *testing.T) {
	agent, err := load(t).GetService("agent")
	if err != nil {
		t.Fatal(err)
	}
	if agent.NetworkMode != "host" {
		t.Errorf("agent network_mode = %q, want host", agent.NetworkMode)
	}
	if !slices.Contains(agent.CapAdd, "NET_ADMIN") {
		t.Errorf("agent cap_add = %v, want NET_ADMIN", agent.CapAdd)
	}
}

func TestEveryBuildHasItsDockerfile(t *testing.T) {
	for _, service := range load(t).Services {
		if service.Build == nil {
			continue
		}
		path := filepath.Join(service.Build.Context, service.Build.Dockerfile)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("service %s: %v", service.Name, err)
		}
	}
}

func TestSecretKeyIsRequired(t *testing.T) {
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(repo, "docker-compose.yml")},
		cli.WithWorkingDirectory(repo),
		cli.WithEnv([]string{"FULCRUM_SECRET_KEY="}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := opts.LoadProject(context.Background()); err == nil {
		t.Fatal("loading without FULCRUM_SECRET_KEY succeeded; the API would start without a secret")
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
