package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"fulcrum/agents/internal/apiclient"
)

// revision is the part of a revision answer the CLI reads.
type revision struct {
	ID        int    `json:"id"`
	Number    int    `json:"number"`
	Message   string `json:"message"`
	Author    string `json:"author"`
	CreatedAt string `json:"created_at"`
	Live      bool   `json:"live"`
	Nodes     []struct {
		Node    string `json:"node"`
		State   string `json:"state"`
		Message string `json:"message"`
	} `json:"nodes"`
	// Set by the API when the revision must be confirmed (apply --confirm).
	ConfirmBy    *string `json:"confirm_by"`
	ConfirmState string  `json:"confirm_state"`
}

func (a *app) revisionCommands() []*cobra.Command {
	return []*cobra.Command{
		a.applyCommand(), a.confirmCommand(), a.rollbackCommand(), a.diffCommand(), a.pendingCommand(), a.revisionsCommand(),
	}
}

func (a *app) applyCommand() *cobra.Command {
	var message string
	var confirm, waitFor time.Duration
	var wait, force bool
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Apply the current objects to every node as a new revision",
		Long: "Publish the objects as they are now as a new revision; every node's agent applies it.\n" +
			"With nothing pending ('fulcrum pending'), nothing is published: the API's message goes\n" +
			"to stderr and the exit code is 0, so a script may apply whether or not it changed\n" +
			"something; --force publishes the same configuration again.\n" +
			"With --confirm, the revision must be confirmed ('fulcrum confirm') within that time or it\n" +
			"is rolled back (a change that may cut you off). With --wait, wait for every node to\n" +
			"report; exit 1 when one failed.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			request := map[string]any{"message": message}
			if confirm > 0 {
				request["confirm_within_s"] = int(confirm.Round(time.Second).Seconds())
			}
			if force {
				request["force"] = true
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.RevisionsCreateWithBody(cmd.Context(), jsonType, bytes.NewReader(marshalRaw(request))))
			if refusal, ok := nothingToApply(err); ok {
				fmt.Fprintf(a.env.Stderr, "%s (nothing published; 'fulcrum apply --force' publishes it again)\n", refusal.Detail)
				return nil
			}
			if err != nil {
				return err
			}
			var rev revision
			if err := json.Unmarshal(body, &rev); err != nil {
				return err
			}
			if wait {
				if body, rev, err = a.waitForNodes(cmd.Context(), rev, waitFor); err != nil {
					return err
				}
			}
			if a.flags.output != "table" {
				if err := a.writeData(body); err != nil {
					return err
				}
			} else {
				a.printRevision(rev, confirm)
			}
			return nodesFailed(rev, wait)
		},
	}
	cmd.Flags().StringVarP(&message, "message", "m", "", "what this revision changes, for the history")
	cmd.Flags().DurationVar(&confirm, "confirm", 0, "roll back unless confirmed within this time, e.g. 5m")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every node has applied it (or failed)")
	cmd.Flags().BoolVar(&force, "force", false, "publish even when nothing changed since the last revision")
	cmd.Flags().DurationVar(&waitFor, "wait-timeout", 2*time.Minute, "how long --wait waits")
	return cmd
}

// nothingToApply tells the API's refusal of an apply that had nothing pending (409
// nothing_to_apply) from the other errors, conflicts included.
func nothingToApply(err error) (apiclient.NothingToApply, bool) {
	var refusal apiclient.NothingToApply
	var api *apiclient.APIError
	if !errors.As(err, &api) || api.Status != http.StatusConflict || json.Unmarshal(api.Body, &refusal) != nil {
		return refusal, false
	}
	return refusal, refusal.Code == apiclient.ApplyRefusalEnumNothingToApply
}

func (a *app) printRevision(rev revision, confirm time.Duration) {
	a.say("Revision %d published%s.", rev.Number, quoted(rev.Message))
	for _, n := range rev.Nodes {
		line := fmt.Sprintf("  %-16s %s", n.Node, n.State)
		if n.Message != "" && n.State == "failed" {
			line += ": " + n.Message
		}
		a.say("%s", line)
	}
	if confirm > 0 {
		a.say("Confirm it within %s with 'fulcrum confirm %d', or it is rolled back.", confirm, rev.Number)
	}
}

func quoted(message string) string {
	if message == "" {
		return ""
	}
	return fmt.Sprintf(": %q", message)
}

func nodesFailed(rev revision, checked bool) error {
	if !checked {
		return nil
	}
	var failed []string
	for _, n := range rev.Nodes {
		if n.State == "failed" {
			failed = append(failed, n.Node)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("revision %d failed on %s", rev.Number, strings.Join(failed, ", "))
	}
	return nil
}

// waitForNodes polls a revision until no node is pending.
func (a *app) waitForNodes(ctx context.Context, rev revision, limit time.Duration) ([]byte, revision, error) {
	c, err := a.client()
	if err != nil {
		return nil, rev, err
	}
	deadline := time.Now().Add(limit)
	for {
		body, err := apiclient.Read(c.RevisionsRetrieve(ctx, rev.ID))
		if err != nil {
			return nil, rev, err
		}
		var current revision
		if err := json.Unmarshal(body, &current); err != nil {
			return nil, rev, err
		}
		if !anyPending(current) {
			return body, current, nil
		}
		if time.Now().After(deadline) {
			return nil, current, fmt.Errorf("nodes still pending on revision %d after %s", rev.Number, limit)
		}
		select {
		case <-ctx.Done():
			return nil, current, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func anyPending(rev revision) bool {
	for _, n := range rev.Nodes {
		if n.State == "pending" {
			return true
		}
	}
	return false
}

// revisionByNumber finds a revision by the number people use (the API's URLs take its id).
func (a *app) revisionByNumber(ctx context.Context, ref string) (revision, error) {
	number, err := strconv.Atoi(strings.TrimPrefix(ref, "r"))
	if err != nil || number < 1 {
		return revision{}, usagef("revision %q: give its number, e.g. 7", ref)
	}
	revs, err := a.revisions(ctx, 0)
	if err != nil {
		return revision{}, err
	}
	for _, rev := range revs {
		if rev.Number == number {
			return rev, nil
		}
	}
	return revision{}, &notFoundError{fmt.Sprintf("no revision %d", number)}
}

// newestRevision is the revision applied last.
func (a *app) newestRevision(ctx context.Context) (revision, error) {
	revs, err := a.revisions(ctx, 1)
	if err != nil {
		return revision{}, err
	}
	if len(revs) == 0 {
		return revision{}, &notFoundError{"no revision yet: 'fulcrum apply' makes the first"}
	}
	return revs[0], nil
}

// revisions lists revisions newest first: at most limit (0: all).
func (a *app) revisions(ctx context.Context, limit int) ([]revision, error) {
	revs, _, err := a.revisionPages(ctx, limit)
	return revs, err
}

// revisionPages reads revisions newest first, decoded and as the API sent them.
func (a *app) revisionPages(ctx context.Context, limit int) ([]revision, []json.RawMessage, error) {
	c, err := a.client()
	if err != nil {
		return nil, nil, err
	}
	var revs []revision
	var raws []json.RawMessage
	for offset := 0; ; {
		size := pageSize
		if limit > 0 && limit-len(revs) < size {
			size = limit - len(revs)
		}
		var p page
		resp, err := c.RevisionsList(ctx, &apiclient.RevisionsListParams{Limit: &size, Offset: &offset})
		if err := apiclient.Decode(resp, err, &p); err != nil {
			return nil, nil, err
		}
		for _, raw := range p.Results {
			var rev revision
			if err := json.Unmarshal(raw, &rev); err != nil {
				return nil, nil, err
			}
			revs = append(revs, rev)
		}
		raws = append(raws, p.Results...)
		offset += len(p.Results)
		if len(p.Results) == 0 || offset >= p.Count || (limit > 0 && len(revs) >= limit) {
			return revs, raws, nil
		}
	}
}

func (a *app) confirmCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "confirm [REV]",
		Short: "Confirm a revision applied with --confirm (default: the newest awaiting), so it is kept",
		Args:  rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rev, err := a.awaitingRevision(cmd.Context(), args)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.RevisionsConfirmCreate(cmd.Context(), rev.ID))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(body)
			}
			a.say("Revision %d confirmed.", rev.Number)
			return nil
		},
	}
}

// awaitingRevision is the revision named by args[0], or the newest awaiting
// confirmation (the newest when none is).
func (a *app) awaitingRevision(ctx context.Context, args []string) (revision, error) {
	if len(args) > 0 {
		return a.revisionByNumber(ctx, args[0])
	}
	revs, err := a.revisions(ctx, 20)
	if err != nil {
		return revision{}, err
	}
	for _, rev := range revs {
		if rev.ConfirmState == "awaiting" {
			return rev, nil
		}
	}
	return a.revisionArg(ctx, args)
}

// revisionArg is the revision named by args[0], or the newest.
func (a *app) revisionArg(ctx context.Context, args []string) (revision, error) {
	if len(args) == 0 {
		return a.newestRevision(ctx)
	}
	return a.revisionByNumber(ctx, args[0])
}

func (a *app) rollbackCommand() *cobra.Command {
	var message string
	cmd := &cobra.Command{
		Use:   "rollback REV",
		Short: "Make the objects what they were in revision REV and apply them as a new revision",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rev, err := a.revisionByNumber(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			var request apiclient.RevisionRollbackRequest
			if message != "" {
				request.Message = &message
			}
			body, err := apiclient.Read(c.RevisionsRollbackCreate(cmd.Context(), rev.ID, request))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(body)
			}
			var made revision
			_ = json.Unmarshal(body, &made)
			if made.Number > 0 {
				a.say("Rolled back to revision %d as revision %d.", rev.Number, made.Number)
			} else {
				a.say("Rolled back to revision %d.", rev.Number)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&message, "message", "m", "", "message of the new revision")
	return cmd
}

func (a *app) diffCommand() *cobra.Command {
	var from int
	var files bool
	cmd := &cobra.Command{
		Use:   "diff [REV]",
		Short: "What revision REV (default: the newest) changed since the one before, or since --from",
		Long: "Show what a revision changed: the objects, field by field, and with --files every\n" +
			"node's rendered configuration files as unified diffs. 'fulcrum pending' shows what is\n" +
			"not applied yet.",
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rev, err := a.revisionArg(cmd.Context(), args)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			params := &apiclient.RevisionsDiffRetrieveParams{}
			if from > 0 {
				params.From = &from
			}
			body, err := apiclient.Read(c.RevisionsDiffRetrieve(cmd.Context(), rev.ID, params))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(body)
			}
			var diff apiclient.RevisionDiff
			if err := json.Unmarshal(body, &diff); err != nil {
				return err
			}
			a.printDiff(diff, files)
			return nil
		},
	}
	cmd.Flags().IntVar(&from, "from", 0, "compare with this revision number instead of the one before")
	cmd.Flags().BoolVar(&files, "files", false, "also show every node's rendered files as unified diffs")
	return cmd
}

func (a *app) printDiff(diff apiclient.RevisionDiff, files bool) {
	since := "nothing"
	if diff.FromRevision != nil {
		since = fmt.Sprintf("revision %d", *diff.FromRevision)
	}
	fmt.Fprintf(a.env.Stdout, "Revision %d since %s:\n", diff.ToRevision, since)
	a.printObjectChanges(diff.Objects)
	for _, problem := range diff.Problems {
		fmt.Fprintf(a.env.Stdout, "! %s\n", problem)
	}
	if !files {
		if len(diff.Files) > 0 {
			fmt.Fprintf(a.env.Stdout, "(%d rendered file(s) changed: --files shows them)\n", len(diff.Files))
		}
		return
	}
	for _, f := range diff.Files {
		fmt.Fprintf(a.env.Stdout, "\n=== %s: %s (%s)\n%s", f.Node, f.File, f.Change, f.Diff)
		if !strings.HasSuffix(f.Diff, "\n") {
			fmt.Fprintln(a.env.Stdout)
		}
	}
}

var changeMarks = map[apiclient.ChangeEnum]string{apiclient.Added: "+", apiclient.Removed: "-", apiclient.Changed: "~"}

func (a *app) printObjectChanges(objects []apiclient.ObjectChange) {
	if len(objects) == 0 {
		fmt.Fprintln(a.env.Stdout, "  no object changed")
		return
	}
	for _, o := range objects {
		mark := changeMarks[o.Change]
		if mark == "" {
			mark = "?"
		}
		fmt.Fprintf(a.env.Stdout, "%s %s\n", mark, o.Path)
		if o.Change != apiclient.Changed {
			continue // an added or removed object's every field would only repeat it
		}
		for _, f := range o.Fields {
			fmt.Fprintf(a.env.Stdout, "    %s: %s -> %s\n", f.Field, jsonText(f.Old), jsonText(f.New))
		}
	}
}

func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func (a *app) pendingCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "pending",
		Short: "Changes to the objects that are not applied yet",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.RevisionsPendingRetrieve(cmd.Context(), &apiclient.RevisionsPendingRetrieveParams{}))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(body)
			}
			var pending apiclient.Pending
			if err := json.Unmarshal(body, &pending); err != nil {
				return err
			}
			base := "no revision yet"
			if pending.BaseRevision != nil {
				base = fmt.Sprintf("revision %d", *pending.BaseRevision)
			}
			if !pending.Pending {
				fmt.Fprintf(a.env.Stdout, "Nothing to apply: the objects are as in %s.\n", base)
				return nil
			}
			fmt.Fprintf(a.env.Stdout, "Not applied yet (since %s; 'fulcrum apply' applies them):\n", base)
			a.printObjectChanges(pending.Objects)
			if pending.Count > 0 { // an API from before the summary sends none
				fmt.Fprintf(a.env.Stdout, "%d objects: %d added, %d changed, %d removed.\n", pending.Count,
					pending.Summary.Added, pending.Summary.Changed, pending.Summary.Removed)
			}
			return nil
		},
	}
}

func (a *app) revisionsCommand() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:     "revisions",
		Aliases: []string{"revision", "history"},
		Short:   "The history of revisions, newest first (show REV for one)",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.listRevisions(cmd.Context(), limit)
		},
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 20, "how many (0: all)")
	cmd.AddCommand(&cobra.Command{
		Use:   "show REV",
		Short: "Show one revision: its nodes' states and the objects it holds",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rev, err := a.revisionByNumber(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.RevisionsRetrieve(cmd.Context(), rev.ID))
			if err != nil {
				return err
			}
			return a.writeData(body)
		},
	})
	return cmd
}

func (a *app) listRevisions(ctx context.Context, limit int) error {
	revs, raws, err := a.revisionPages(ctx, limit)
	if err != nil {
		return err
	}
	if a.flags.output != "table" {
		return a.writeData(marshalRaw(raws))
	}
	if a.flags.quiet {
		for _, rev := range revs {
			fmt.Fprintln(a.env.Stdout, rev.Number)
		}
		return nil
	}
	rows := make([][]string, len(revs))
	for i, rev := range revs {
		rows[i] = []string{strconv.Itoa(rev.Number), age(rev.CreatedAt), format(rev.Author), nodeStates(rev), format(rev.Live), format(rev.Message)}
	}
	return table(a.env.Stdout, []string{"REV", "CREATED", "AUTHOR", "NODES", "LIVE", "MESSAGE"}, rows)
}

// nodeStates sums up a revision's nodes: "2 applied, 1 failed".
func nodeStates(rev revision) string {
	counts := map[string]int{}
	var order []string
	for _, n := range rev.Nodes {
		if counts[n.State] == 0 {
			order = append(order, n.State)
		}
		counts[n.State]++
	}
	parts := make([]string, len(order))
	for i, state := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[state], state)
	}
	return joinOrDash(parts)
}
