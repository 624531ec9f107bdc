package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep elapsed: %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context: %v, want context.Canceled", err)
	}
	if time.Since(start) > time.Second {
		t.Error("Sleep did not return when its context ended")
	}
}

func TestFake(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := NewFake(start)
	f.Advance(2 * time.Second)
	if err := f.Sleep(context.Background(), 8*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Now(), start.Add(10*time.Second); !got.Equal(want) {
		t.Errorf("Now() = %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context: %v, want context.Canceled", err)
	}
	if got := f.Slept(); len(got) != 1 || got[0] != 8*time.Second || !f.Now().Equal(start.Add(10*time.Second)) {
		t.Errorf("Slept() = %v at %v, want [8s] and no time passed for the cancelled sleep", got, f.Now())
	}
}
