package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestKindsAreTheSchemas checks that api/openapi.yaml has every call the CLI makes of each
// kind at its path (rest and single build them from the path alone).
func TestKindsAreTheSchemas(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	text, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "..", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name string `json:"name"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := yaml.Unmarshal(text, &schema); err != nil {
		t.Fatal(err)
	}
	has := func(path, method string, params ...string) {
		t.Helper()
		operation, ok := schema.Paths["/"+path][method]
		if !ok {
			t.Errorf("the API has no %s /%s", method, path)
			return
		}
		names := map[string]bool{}
		for _, p := range operation.Parameters {
			names[p.Name] = true
		}
		for _, p := range params {
			if !names[p] {
				t.Errorf("%s /%s takes no %s", method, path, p)
			}
		}
	}
	for _, k := range kinds {
		if k.singleton {
			has(k.path, "get")
			has(k.path, "patch", "If-Match")
			continue
		}
		has(k.path, "get", "limit", "offset")
		has(k.path+"{id}/", "get")
		if !k.noCreate {
			has(k.path, "post")
		}
		if !k.noUpdate {
			has(k.path+"{id}/", "patch", "If-Match")
		}
		if !k.noDelete {
			has(k.path+"{id}/", "delete")
		}
	}
	if len(kinds) < 12 {
		t.Fatalf("only %d kinds", len(kinds))
	}
}
