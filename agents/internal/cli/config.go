package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"fulcrum/agents/internal/apiclient"
)

// Config is the configuration file: where the API is and the token that
// signs in to it. It holds a secret, so it is written with mode 0600.
type Config struct {
	URL   string `json:"url,omitempty"`
	Token string `json:"token,omitempty"`
	// TokenID is the token's id in /api/v1/tokens/, so logout can revoke it.
	TokenID int `json:"token_id,omitempty"`
	// AuthScheme is set only for an API older than named tokens ("Token").
	AuthScheme string `json:"auth_scheme,omitempty"`
	Username   string `json:"username,omitempty"`
	// Insecure skips TLS verification (set by login --insecure).
	Insecure bool `json:"insecure,omitempty"`
}

// configPath is --config, else $XDG_CONFIG_HOME/fulcrum/config.yaml, else ~/.config/fulcrum/config.yaml.
func (a *app) configPath() (string, error) {
	if a.flags.config != "" && a.restricted {
		return "", refusedf("--config: the configuration is ~/.config/fulcrum/config.yaml")
	}
	if a.flags.config != "" {
		return a.flags.config, nil
	}
	if dir := a.env.Getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, "fulcrum", "config.yaml"), nil
	}
	if home := a.env.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "fulcrum", "config.yaml"), nil
	}
	return "", errors.New("no configuration folder: set XDG_CONFIG_HOME or HOME (or pass --config)")
}

// loadConfig reads the configuration file; a missing one is an empty configuration.
func (a *app) loadConfig() (Config, string, error) {
	var cfg Config
	path, err := a.configPath()
	if err != nil {
		return cfg, "", err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, path, nil
	}
	if err != nil {
		return cfg, path, err
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return cfg, path, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, path, nil
}

// saveConfig writes the configuration file atomically with mode 0600 (its folder 0700).
func saveConfig(path string, cfg Config) error {
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// settings are the URL, token and scheme in force: flags over environment over the file.
func (a *app) settings(cfg Config) (url, token, scheme string) {
	url = firstNonEmpty(a.flags.url, a.env.Getenv("FULCRUM_URL"), cfg.URL)
	token = firstNonEmpty(a.flags.token, a.env.Getenv("FULCRUM_TOKEN"))
	scheme = apiclient.Scheme
	if token == "" {
		token = cfg.Token
		if cfg.AuthScheme != "" {
			scheme = cfg.AuthScheme
		}
	}
	return url, token, scheme
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
