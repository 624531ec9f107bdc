package ipvs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"fulcrum/agents/internal/bundle"
	"fulcrum/agents/internal/clock"
)

// Status is the outcome of the latest reconcile for one service of
// ipvs.json.
type Status struct {
	// Key is the service's key from ipvs.json.
	Key string
	// Name is the service's name from ipvs.json.
	Name string
	// Wanted is the scheduler ipvs.json asks for.
	Wanted string
	// InForce is the kernel's scheduler, "" when the kernel has no such
	// service.
	InForce string
	// Message says why InForce is not Wanted; empty when it is.
	Message string
}

// Reconciler makes the kernel use the wanted scheduler of every service
// of the live ipvs.json. It is safe for concurrent use: keepalived's
// manager calls Reconcile after each (re)load while Run calls it every
// second.
type Reconciler struct {
	// Kernel is the IPVS table of the daemons' namespace.
	Kernel Kernel
	// Wanted returns the services of the live ipvs.json; none when there is
	// no such file. FileWanted reads one.
	Wanted func() ([]bundle.IPVSService, error)
	// Logger receives one line per scheduler set, and per refusal or
	// error when it differs from the previous one; nil means
	// slog.Default().
	Logger *slog.Logger

	mu       sync.Mutex
	statuses []Status
	lastErr  string            // the last listing error logged
	refusals map[string]string // key -> the refusal last logged
}

// FileWanted returns a Wanted function reading path (the live
// keepalived.d/ipvs.json); a missing file means no services.
func FileWanted(path string) func() ([]bundle.IPVSService, error) {
	return func() ([]bundle.IPVSService, error) {
		text, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		v, err := bundle.ParseIPVS(string(text))
		return v.Services, err
	}
}

// Run reconciles every interval until ctx ends.
func (r *Reconciler) Run(ctx context.Context, interval time.Duration) {
	for {
		r.Reconcile(ctx)
		if clock.Sleep(ctx, interval) != nil {
			return
		}
	}
}

// Reconcile lists the kernel's services and sets the wanted scheduler on
// each listed service that has another. A scheduler the kernel refuses
// leaves keepalived's in force; it is tried again at the next call. The
// outcome is kept for Statuses.
func (r *Reconciler) Reconcile(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	wanted, err := r.Wanted()
	if err != nil {
		r.noteError(fmt.Errorf("read wanted schedulers: %w", err))
		r.statuses = nil
		return
	}
	if len(wanted) == 0 {
		// Nothing to do: do not even open netlink (a host without IPVS).
		r.noteError(nil)
		r.statuses = nil
		return
	}
	services, err := r.Kernel.Services(ctx)
	if err != nil {
		r.noteError(err)
		r.statuses = unknown(wanted, err)
		return
	}
	r.noteError(nil)
	r.statuses = r.apply(ctx, wanted, services)
}

// Statuses returns the outcome of the latest Reconcile, in ipvs.json
// order.
func (r *Reconciler) Statuses() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.statuses)
}

// apply sets the wanted schedulers and returns the statuses.
func (r *Reconciler) apply(ctx context.Context, wanted []bundle.IPVSService, services []Service) []Status {
	byID := make(map[ServiceID]Service, len(services))
	for _, s := range services {
		byID[s.ServiceID] = s
	}
	statuses := make([]Status, 0, len(wanted))
	for _, w := range wanted {
		st := Status{Key: w.Key, Name: w.Name, Wanted: w.Scheduler}
		svc, ok := byID[IDOf(w)]
		switch {
		case !ok:
			st.Message = "the kernel has no such service (yet): keepalived has not created it"
		case svc.Scheduler == w.Scheduler:
			st.InForce = svc.Scheduler
		default:
			st.InForce, st.Message = r.set(ctx, w.Key, svc, w.Scheduler)
		}
		if st.Message == "" || !ok {
			delete(r.refusals, w.Key)
		}
		statuses = append(statuses, st)
	}
	return statuses
}

// set asks the kernel to schedule svc with sched and returns the
// scheduler in force afterwards and, on a refusal, why.
func (r *Reconciler) set(ctx context.Context, key string, svc Service, sched string) (string, string) {
	err := r.Kernel.SetScheduler(ctx, svc, sched)
	if err == nil {
		r.logger().Info("ipvs: scheduler set", "service", key, "id", svc.ServiceID.String(),
			"scheduler", sched, "was", svc.Scheduler)
		return sched, ""
	}
	msg := fmt.Sprintf("kernel refused scheduler %s: %s; %s stays in force", sched, describe(err, sched), svc.Scheduler)
	if r.refusals[key] != msg {
		r.logger().Warn("ipvs: "+msg, "service", key, "id", svc.ServiceID.String())
		if r.refusals == nil {
			r.refusals = map[string]string{}
		}
		r.refusals[key] = msg
	}
	return svc.Scheduler, msg
}

// describe explains the usual refusals.
func describe(err error, sched string) string {
	switch {
	case errors.Is(err, unix.ENOENT):
		return fmt.Sprintf("no such scheduler (the kernel found no module ip_vs_%s)", sched)
	case errors.Is(err, unix.ESRCH):
		return "the service went away"
	}
	return err.Error()
}

// noteError logs err when it differs from the previous one, and once when
// the errors stop.
func (r *Reconciler) noteError(err error) {
	text := ""
	if err != nil {
		text = err.Error()
	}
	if text == r.lastErr {
		return
	}
	if err != nil {
		r.logger().Warn("ipvs: reconcile failed; retrying every cycle", "err", err)
	} else if r.lastErr != "" {
		r.logger().Info("ipvs: reconcile works again")
	}
	r.lastErr = text
}

// unknown is the status of every wanted service when the kernel could not
// be read.
func unknown(wanted []bundle.IPVSService, err error) []Status {
	statuses := make([]Status, 0, len(wanted))
	for _, w := range wanted {
		statuses = append(statuses, Status{Key: w.Key, Name: w.Name, Wanted: w.Scheduler, Message: "cannot read the kernel's IPVS table: " + err.Error()})
	}
	return statuses
}

func (r *Reconciler) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
