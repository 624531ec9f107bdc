package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"fulcrum/agents/internal/apiclient"
)

// issuedToken is the sign-in answer: {id, name, token, role, expires_at}, or
// only {token} from an API older than named tokens.
type issuedToken struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	Token     string `json:"token"`
	Role      string `json:"role"`
	ExpiresAt string `json:"expires_at"`
}

// me is the signed-in person (GET /api/v1/auth/me/).
type me struct {
	Username    string `json:"username"`
	Role        string `json:"role"`
	IsSuperuser bool   `json:"is_superuser"`
}

func (m me) role() string {
	if m.Role != "" {
		return m.Role
	}
	if m.IsSuperuser {
		return "admin"
	}
	return "-"
}

func (a *app) sessionCommands() []*cobra.Command {
	return []*cobra.Command{a.loginCommand(), a.logoutCommand(), a.whoamiCommand()}
}

type loginOptions struct {
	username      string
	passwordStdin bool
	tokenName     string
	expiresInDays int
}

func (a *app) loginCommand() *cobra.Command {
	var opts loginOptions
	cmd := &cobra.Command{
		Use:   "login [--url URL] [--username USER] [--password-stdin]",
		Short: "Sign in: get an API token and keep it in the configuration file",
		Long: "Sign in with a username and password. The password is asked without echo, or read\n" +
			"from the first line of standard input with --password-stdin. The API issues a named\n" +
			"token (see 'fulcrum token list'); it and the URL are kept in the configuration file\n" +
			"(mode 0600) for the next commands.",
		Example: "  fulcrum login --url https://fulcrum.example:8443\n" +
			"  echo \"$PASSWORD\" | fulcrum login --url http://127.0.0.1:8000 -u admin --password-stdin",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.login(cmd.Context(), opts) },
	}
	cmd.Flags().StringVarP(&opts.username, "username", "u", "", "username (asked when not given)")
	cmd.Flags().BoolVar(&opts.passwordStdin, "password-stdin", false, "read the password from standard input")
	cmd.Flags().StringVar(&opts.tokenName, "token-name", "", "name of the token (default fulcrum-cli.HOST)")
	cmd.Flags().IntVar(&opts.expiresInDays, "expires-in-days", 0, "the token expires after this many days (default: the API's)")
	return cmd
}

func (a *app) login(ctx context.Context, opts loginOptions) error {
	cfg, path, err := a.loadConfig()
	if err != nil {
		return err
	}
	target := firstNonEmpty(a.flags.url, a.env.Getenv("FULCRUM_URL"), cfg.URL)
	if target == "" {
		return usagef("which API? give --url URL (e.g. https://fulcrum.example:8443)")
	}
	stdin := bufio.NewReader(a.env.Stdin)
	username, password, err := a.credentials(stdin, opts, cfg)
	if err != nil {
		return err
	}
	anonymous, err := a.newClient(target, "", "", cfg.Insecure)
	if err != nil {
		return err
	}
	request := map[string]any{"username": username, "password": password, "name": firstNonEmpty(opts.tokenName, defaultTokenName())}
	if opts.expiresInDays > 0 {
		request["expires_in_days"] = opts.expiresInDays
	}
	var issued issuedToken
	resp, err := anonymous.AuthTokenCreateWithBody(ctx, jsonType, bytes.NewReader(marshalRaw(request)))
	if err := apiclient.Decode(resp, err, &issued); err != nil {
		return err
	}
	if issued.Token == "" {
		return errors.New("the API's sign-in answer holds no token")
	}
	scheme := apiclient.Scheme
	if issued.ID == 0 {
		scheme = apiclient.LegacyScheme
	}
	who, err := a.whoami(ctx, target, issued.Token, scheme, cfg.Insecure)
	if err != nil {
		return err
	}
	cfg = Config{URL: target, Token: issued.Token, TokenID: issued.ID, Username: who.Username, Insecure: cfg.Insecure || a.flags.insecure}
	if scheme != apiclient.Scheme {
		cfg.AuthScheme = scheme
	}
	if err := saveConfig(path, cfg); err != nil {
		return err
	}
	a.say("Signed in to %s as %s (role %s).", target, who.Username, who.role())
	if issued.ExpiresAt != "" {
		a.say("Token %q expires %s.", issued.Name, issued.ExpiresAt)
	}
	return nil
}

// tokenNameUnsafe are the characters the API refuses in a name (it allows letters,
// digits, '_', '.' and '-', at most 63).
var tokenNameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func defaultTokenName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	name := "fulcrum-cli." + tokenNameUnsafe.ReplaceAllString(host, "-")
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}

// credentials reads the username (flag, configuration, or asked) and the password.
func (a *app) credentials(stdin *bufio.Reader, opts loginOptions, cfg Config) (string, string, error) {
	username := opts.username
	if username == "" && (opts.passwordStdin || a.env.ReadPassword == nil) {
		username = cfg.Username
	}
	if username == "" {
		if a.env.ReadPassword == nil {
			return "", "", usagef("no terminal to ask the username: give --username")
		}
		fmt.Fprint(a.env.Stderr, "Username: ")
		line, err := readLine(stdin)
		if err != nil {
			return "", "", err
		}
		username = line
	}
	if username == "" {
		return "", "", usagef("no username given")
	}
	if opts.passwordStdin {
		password, err := readLine(stdin)
		if err != nil {
			return "", "", usagef("--password-stdin: %v", err)
		}
		return username, password, nil
	}
	if a.env.ReadPassword == nil {
		return "", "", usagef("no terminal to ask the password: use --password-stdin")
	}
	fmt.Fprintf(a.env.Stderr, "Password for %s: ", username)
	password, err := a.env.ReadPassword()
	fmt.Fprintln(a.env.Stderr)
	if err != nil {
		return "", "", err
	}
	return username, string(password), nil
}

// readLine reads one line without its line ending; an empty input is an error.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" && errors.Is(err, io.EOF) {
		return "", errors.New("nothing to read")
	}
	return line, nil
}

func (a *app) whoami(ctx context.Context, target, token, scheme string, insecure bool) (me, error) {
	var who me
	c, err := a.newClient(target, token, scheme, insecure)
	if err != nil {
		return who, err
	}
	resp, err := c.AuthMeRetrieve(ctx)
	return who, apiclient.Decode(resp, err, &who)
}

func (a *app) logoutCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Revoke the token in the configuration file and forget it",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, path, err := a.loadConfig()
			if err != nil {
				return err
			}
			if cfg.Token == "" {
				a.say("Not signed in.")
				return nil
			}
			if err := a.revoke(cmd.Context(), cfg); err != nil {
				return fmt.Errorf("the token was not revoked (still kept, run logout again): %w", err)
			}
			revoked := cfg.TokenID > 0
			cfg.Token, cfg.TokenID, cfg.AuthScheme = "", 0, ""
			if err := saveConfig(path, cfg); err != nil {
				return err
			}
			if revoked {
				a.say("Signed out of %s; the token is revoked.", cfg.URL)
			} else {
				a.say("Signed out of %s (this API has no named tokens: the token stays valid until an admin removes it).", cfg.URL)
			}
			return nil
		},
	}
}

// revoke revokes the configuration's token; one the API no longer takes counts as revoked.
func (a *app) revoke(ctx context.Context, cfg Config) error {
	scheme := firstNonEmpty(cfg.AuthScheme, apiclient.Scheme)
	c, err := a.newClient(firstNonEmpty(a.flags.url, a.env.Getenv("FULCRUM_URL"), cfg.URL), cfg.Token, scheme, cfg.Insecure)
	if err != nil {
		return err
	}
	if cfg.TokenID > 0 {
		_, err = apiclient.Read(c.TokensDestroy(ctx, cfg.TokenID))
	} else {
		_, err = apiclient.Read(c.AuthLogoutCreate(ctx))
	}
	var api *apiclient.APIError
	if errors.As(err, &api) && (api.Status == http.StatusUnauthorized || api.Status == http.StatusNotFound) {
		return nil
	}
	return err
}

func (a *app) whoamiCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "whoami",
		Short: "Who the token in force signs in as",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.AuthMeRetrieve(cmd.Context()))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(body)
			}
			var who me
			if err := json.Unmarshal(body, &who); err != nil {
				return err
			}
			fmt.Fprintf(a.env.Stdout, "%s (role %s) at %s\n", who.Username, who.role(), strings.TrimRight(c.Server, "/"))
			return nil
		},
	}
}
