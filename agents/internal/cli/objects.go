package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"fulcrum/agents/internal/apiclient"
)

// kindCommand is `fulcrum KIND` with list, show, create, update, delete and edit.
func (a *app) kindCommand(k *kind) *cobra.Command {
	cmd := &cobra.Command{
		Use:     k.name,
		Aliases: k.aliases,
		Short:   k.short,
		Args:    cobra.ArbitraryArgs,
		RunE:    helpOrUnknown,
	}
	if k.singleton {
		cmd.AddCommand(a.showCommand(k), a.updateCommand(k), a.editCommand(k))
		return cmd
	}
	cmd.AddCommand(a.listCommand(k), a.showCommand(k))
	if !k.noCreate {
		cmd.AddCommand(a.createCommand(k))
	}
	if !k.noUpdate {
		cmd.AddCommand(a.updateCommand(k), a.editCommand(k))
	}
	if !k.noDelete {
		cmd.AddCommand(a.deleteCommand(k))
	}
	cmd.AddCommand(a.extraCommands(k)...)
	return cmd
}

// helpOrUnknown runs a command that only groups others: help, or a usage
// error for a word that is none of them.
func helpOrUnknown(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return cmd.Help()
}

// refArg is how the help names an object argument of a kind.
func refArg(k *kind) string {
	return strings.ToUpper(strings.Join(k.keyLabels(), "/"))
}

// completeNames completes object names from the API (nothing when it cannot be reached).
func (a *app) completeNames(k *kind, many bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if k.singleton || (len(args) > 0 && !many) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		n := a.namer(ctx)
		list, err := n.items(k.name)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		out := make([]string, 0, len(list))
		for _, it := range list {
			out = append(out, n.display(k, it.obj))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

func (a *app) listCommand(k *kind) *cobra.Command {
	use := "list"
	parent := ""
	if len(k.key) == 2 {
		parent = k.key[0]
		use += " [" + strings.ToUpper(k.keyLabels()[0]) + "]"
	}
	return &cobra.Command{
		Use:     use,
		Aliases: []string{"ls"},
		Short:   "List " + k.plural,
		Args:    rangeArgs(0, boolInt(parent != "")),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			n := a.namer(ctx)
			items, err := n.items(k.name)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				target := kindByName(k.refs[parent])
				owner, err := a.resolve(ctx, target, args[0])
				if err != nil {
					return err
				}
				items = filterItems(items, func(o obj) bool { return format(o[parent]) == format(owner.obj["id"]) })
			}
			return a.printItems(k, items, n)
		},
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func filterItems(items []item, keep func(obj) bool) []item {
	var out []item
	for _, it := range items {
		if keep(it.obj) {
			out = append(out, it)
		}
	}
	return out
}

func (a *app) showCommand(k *kind) *cobra.Command {
	if k.singleton {
		return &cobra.Command{
			Use: "show", Short: "Show the " + k.name + " settings", Args: noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				it, err := a.getItem(cmd.Context(), k, 0)
				if err != nil {
					return err
				}
				return a.printItem(it)
			},
		}
	}
	return &cobra.Command{
		Use:               "show " + refArg(k) + "...",
		Aliases:           []string{"get"},
		Short:             "Show " + k.plural + " (YAML for people; -o json for scripts)",
		Args:              rangeArgs(1, -1),
		ValidArgsFunction: a.completeNames(k, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			for i, ref := range args {
				it, err := a.resolve(cmd.Context(), k, ref)
				if err != nil {
					return err
				}
				if it, err = a.getItem(cmd.Context(), k, idOf(it.obj)); err != nil {
					return err
				}
				if i > 0 && a.flags.output != "json" {
					fmt.Fprintln(a.env.Stdout, "---")
				}
				if err := a.printItem(it); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func addBodyFlags(cmd *cobra.Command, in *bodyInput) {
	cmd.Flags().StringVarP(&in.file, "file", "f", "", "YAML or JSON file with the fields (- reads standard input)")
	cmd.Flags().StringArrayVar(&in.sets, "set", nil, "field=value (value read as JSON when it parses, else a string; a.b=v for nested fields); repeatable")
	_ = cmd.MarkFlagFilename("file", "yaml", "yml", "json")
}

func (a *app) createCommand(k *kind) *cobra.Command {
	var in bodyInput
	cmd := &cobra.Command{
		Use:   "create [" + refArg(k) + "]",
		Short: "Create " + k.plural + " from -f FILE and/or --set field=value",
		Long: "Create " + k.plural + ". The fields come from -f FILE (one object, a list, or several\n" +
			"YAML documents: each one is created, in order) and --set field=value. " + refArg(k) + " sets the\n" +
			"naming field(s). Where the API wants another object's id, its name works too.",
		Example: createExample(k),
		Args:    rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			docs, err := in.documents(a.env.Stdin)
			if err != nil {
				return err
			}
			for _, doc := range docs {
				if len(args) == 1 {
					if err := setKey(k, doc, args[0]); err != nil {
						return err
					}
				}
				if err := a.createOne(cmd.Context(), k, doc); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addBodyFlags(cmd, &in)
	return cmd
}

func createExample(k *kind) string {
	switch k.name {
	case "pool":
		return "  fulcrum pool create web --set algorithm=round-robin\n  fulcrum pool create -f pools.yaml"
	case "member":
		return "  fulcrum member create web/s1 --set address=10.0.0.11 --set port=80\n  fulcrum member create -f members.yaml"
	case "virtual-service":
		return "  fulcrum virtual-service create web --set vip=192.0.2.10 --set port=80 --set default_pool=web"
	}
	return ""
}

// setKey sets an object's naming fields from "a/b".
func setKey(k *kind, doc obj, ref string) error {
	parts := strings.SplitN(ref, "/", len(k.key))
	if len(parts) != len(k.key) {
		return usagef("%q: give %s", ref, refArg(k))
	}
	for i, field := range k.key {
		doc[field] = parts[i]
	}
	return nil
}

func (a *app) createOne(ctx context.Context, k *kind, doc obj) error {
	if err := a.resolveRefs(ctx, k, doc); err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	body, err := apiclient.Read(k.ops.create(ctx, c, bytes.NewReader(marshalRaw(doc))))
	if err != nil {
		return err
	}
	it, err := decodeItem(body)
	if err != nil {
		return err
	}
	a.forget(k)
	if a.flags.output != "table" {
		return a.printItem(it)
	}
	a.say("Created %s %s (id %s).", k.name, a.namer(ctx).display(k, it.obj), format(it.obj["id"]))
	if secret, ok := it.obj["token"].(string); ok && secret != "" {
		a.say("Token (shown only now, keep it safe): %s", secret)
		if a.flags.quiet {
			fmt.Fprintln(a.env.Stdout, secret)
		}
	}
	if code, ok := it.obj["code"].(string); ok && code != "" {
		a.say("Join code (shown only now; it works once, until %s): %s", format(it.obj["expires_at"]), code)
		a.say("At the new appliance's first boot, choose to join a cluster and give this appliance's address and the code.")
		if a.flags.quiet {
			fmt.Fprintln(a.env.Stdout, code)
		}
	}
	return nil
}

// forget drops a kind's cached list after a change.
func (a *app) forget(k *kind) {
	if a.names != nil {
		delete(a.names.lists, k.name)
	}
}

func (a *app) updateCommand(k *kind) *cobra.Command {
	var in bodyInput
	var version int
	use := "update " + refArg(k)
	args := exactArgs(1)
	if k.singleton {
		use, args = "update", noArgs
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Change fields of a " + k.name + " (-f FILE and/or --set field=value)",
		Long: "Change the fields given by -f FILE and --set field=value; others stay as they are.\n" +
			"The change is sent with the version read (If-Match): when someone changed the object\n" +
			"since, nothing changes and the exit code is 4. A file's own \"version\" (from show -o yaml)\n" +
			"counts as the version read, as does --if-version.",
		Args:              args,
		ValidArgsFunction: a.completeNames(k, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			docs, err := in.documents(a.env.Stdin)
			if err != nil {
				return err
			}
			if len(docs) != 1 {
				return usagef("update takes one object, the file has %d", len(docs))
			}
			if len(docs[0]) == 0 {
				return usagef("nothing to change: give -f FILE or --set field=value")
			}
			ref := ""
			if len(args) == 1 {
				ref = args[0]
			}
			return a.updateOne(cmd.Context(), k, ref, docs[0], version)
		},
	}
	addBodyFlags(cmd, &in)
	cmd.Flags().IntVar(&version, "if-version", 0, "change only if the object's version is still this one")
	return cmd
}

// updateOne patches one object with the version it was read at.
func (a *app) updateOne(ctx context.Context, k *kind, ref string, doc obj, ifVersion int) error {
	current, err := a.resolve(ctx, k, ref)
	if err != nil {
		return err
	}
	version := versionOf(current.obj)
	if ifVersion > 0 {
		version = ifVersion
	}
	if v, ok := doc["version"]; ok {
		if version = versionOf(obj{"version": v}); version == 0 {
			return usagef("version %v: must be a positive number", v)
		}
		delete(doc, "version")
	}
	if err := a.resolveRefs(ctx, k, doc); err != nil {
		return err
	}
	return a.patch(ctx, k, current, doc, version)
}

func (a *app) patch(ctx context.Context, k *kind, current item, doc obj, version int) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	var ifMatch *string
	if version > 0 {
		ifMatch = apiclient.IfMatchParam(version)
	}
	body, err := apiclient.Read(k.ops.update(ctx, c, idOf(current.obj), ifMatch, bytes.NewReader(marshalRaw(doc))))
	if err != nil {
		return err
	}
	it, err := decodeItem(body)
	if err != nil {
		return err
	}
	a.forget(k)
	if a.flags.output != "table" {
		return a.printItem(it)
	}
	if k.singleton {
		a.say("Updated %s (version %s).", k.name, format(it.obj["version"]))
	} else {
		a.say("Updated %s %s (version %s).", k.name, a.namer(ctx).display(k, it.obj), format(it.obj["version"]))
	}
	return nil
}

func (a *app) deleteCommand(k *kind) *cobra.Command {
	var version int
	cmd := &cobra.Command{
		Use:               "delete " + refArg(k) + "...",
		Aliases:           []string{"rm"},
		Short:             "Delete " + k.plural + " (sent with the version read: 409 when changed since)",
		Args:              rangeArgs(1, -1),
		ValidArgsFunction: a.completeNames(k, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			if version > 0 && len(args) > 1 {
				return usagef("--if-version takes one object")
			}
			for _, ref := range args {
				if err := a.deleteOne(cmd.Context(), k, ref, version); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&version, "if-version", 0, "delete only if the object's version is still this one")
	return cmd
}

func (a *app) deleteOne(ctx context.Context, k *kind, ref string, ifVersion int) error {
	current, err := a.resolve(ctx, k, ref)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	version := versionOf(current.obj)
	if ifVersion > 0 {
		version = ifVersion
	}
	var ifMatch *string
	if version > 0 {
		ifMatch = apiclient.IfMatchParam(version)
	}
	if _, err := apiclient.Read(k.ops.remove(ctx, c, idOf(current.obj), ifMatch)); err != nil {
		return err
	}
	a.say("Deleted %s %s.", k.name, a.namer(ctx).display(k, current.obj))
	return nil
}

func (a *app) editCommand(k *kind) *cobra.Command {
	use, args := "edit "+refArg(k), exactArgs(1)
	if k.singleton {
		use, args = "edit", noArgs
	}
	return &cobra.Command{
		Use:   use,
		Short: "Edit a " + k.name + " in $VISUAL or $EDITOR, then send the fields changed",
		Long: "Open the object as YAML in $VISUAL, $EDITOR or vi; when the editor exits, the fields\n" +
			"changed are sent with the version read (exit 4 when someone changed it meanwhile).",
		Args:              args,
		ValidArgsFunction: a.completeNames(k, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref := ""
			if len(args) == 1 {
				ref = args[0]
			}
			return a.edit(cmd.Context(), k, ref)
		},
	}
}

func (a *app) edit(ctx context.Context, k *kind, ref string) error {
	current, err := a.resolve(ctx, k, ref)
	if err == nil && !k.singleton {
		current, err = a.getItem(ctx, k, idOf(current.obj))
	}
	if err != nil {
		return err
	}
	text, err := toYAML(current.raw)
	if err != nil {
		return err
	}
	edited, err := a.runEditor(k, text)
	if err != nil {
		return err
	}
	docs, err := parseDocuments(edited)
	if err != nil || len(docs) != 1 {
		return usagef("the edited text is not one object: %v", err)
	}
	changes := changedFields(current.obj, docs[0])
	if len(changes) == 0 {
		a.say("No change made.")
		return nil
	}
	if err := a.resolveRefs(ctx, k, changes); err != nil {
		return err
	}
	return a.patch(ctx, k, current, changes, versionOf(current.obj))
}

// changedFields are the top-level fields of edited that differ from before.
func changedFields(before, edited obj) obj {
	changes := obj{}
	keys := make([]string, 0, len(edited))
	for key := range edited {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if key == "version" {
			continue
		}
		if !reflect.DeepEqual(normalize(before[key]), normalize(edited[key])) {
			changes[key] = edited[key]
		}
	}
	return changes
}

// normalize makes two decodings of the same JSON value compare equal.
func normalize(v any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

func (a *app) runEditor(k *kind, text []byte) ([]byte, error) {
	editor := firstNonEmpty(a.env.Getenv("VISUAL"), a.env.Getenv("EDITOR"), "vi")
	dir, err := os.MkdirTemp("", "fulcrum-edit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, k.name+".yaml")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		return nil, err
	}
	run := exec.Command("/bin/sh", "-c", editor+` "$1"`, "sh", path)
	run.Stdin, run.Stdout, run.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := run.Run(); err != nil {
		return nil, fmt.Errorf("editor %q: %w", editor, err)
	}
	return os.ReadFile(path)
}
