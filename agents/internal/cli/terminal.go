package cli

// The terminal side of the shell: line editing with history on a terminal in
// raw mode (golang.org/x/term), and Ctrl-C, which cancels a command's context.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"
)

// Terminal is the terminal the interactive shell edits lines on.
type Terminal struct {
	// In is the keyboard, Out where the prompt and the line typed are echoed.
	In  io.Reader
	Out io.Writer
	// Raw puts the terminal in raw mode (no echo, no signal keys) and returns
	// how to put it back; lines are read in raw mode, commands run in the other.
	Raw func() (restore func() error, err error)
	// Size is the terminal's width and height.
	Size func() (width, height int, err error)
}

// StdTerminal is the terminal of in (keys) and out (prompt), or nil when either
// is not one (the shell then reads plain lines).
func StdTerminal(in, out *os.File) *Terminal {
	inFd, outFd := int(in.Fd()), int(out.Fd())
	if !term.IsTerminal(inFd) || !term.IsTerminal(outFd) {
		return nil
	}
	return &Terminal{
		In:  in,
		Out: out,
		Raw: func() (func() error, error) {
			state, err := term.MakeRaw(inFd)
			if err != nil {
				return nil, err
			}
			return func() error { return term.Restore(inFd, state) }, nil
		},
		Size: func() (int, int, error) { return term.GetSize(outFd) },
	}
}

// lineEditor reads lines with editing, history and completion.
type lineEditor struct {
	terminal *Terminal
	prompt   string
	complete func(line string, pos int, key rune) (string, int, bool)
	keys     *ctrlCCounter
	editor   *term.Terminal
}

func newLineEditor(t *Terminal, prompt string, complete func(string, int, rune) (string, int, bool)) *lineEditor {
	e := &lineEditor{terminal: t, prompt: prompt, complete: complete, keys: &ctrlCCounter{r: t.In}}
	e.editor = e.newEditor(nil)
	return e
}

// newEditor is a fresh x/term line editor keeping history.
func (e *lineEditor) newEditor(history term.History) *term.Terminal {
	editor := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{e.keys, e.terminal.Out}, e.prompt)
	editor.AutoCompleteCallback = e.complete
	if history != nil {
		editor.History = history
	}
	return editor
}

// readLine reads one line: errInterrupted for Ctrl-C (the line is dropped),
// io.EOF for Ctrl-D on an empty line or the end of the input, ctx's error when
// it ends first (the terminal is put back all the same).
func (e *lineEditor) readLine(ctx context.Context) (string, error) {
	restore, err := e.terminal.Raw()
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	if width, height, err := e.terminal.Size(); err == nil {
		_ = e.editor.SetSize(width, height)
	}
	line, err := readOrCancel(ctx, e.editor.ReadLine)
	if restoreErr := restore(); restoreErr != nil && err == nil {
		err = fmt.Errorf("terminal: %w", restoreErr)
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(e.terminal.Out)
	case errors.Is(err, io.EOF):
		if e.keys.take() {
			// x/term ends the line on Ctrl-C as on Ctrl-D and keeps its text:
			// a new editor starts an empty line, with the same history.
			fmt.Fprintln(e.terminal.Out, "^C")
			e.editor = e.newEditor(e.editor.History)
			return "", errInterrupted
		}
		fmt.Fprintln(e.terminal.Out)
	}
	return line, err
}

// ctrlCCounter counts the Ctrl-C keys read and not yet accounted for.
type ctrlCCounter struct {
	r       io.Reader
	pending int
}

func (c *ctrlCCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.pending += bytes.Count(p[:n], []byte{0x03})
	return n, err
}

// take accounts for one Ctrl-C; false when none was read.
func (c *ctrlCCounter) take() bool {
	if c.pending == 0 {
		return false
	}
	c.pending--
	return true
}

// interruptWatch cancels one run's context at the first Ctrl-C (SIGINT), until stopped.
type interruptWatch struct {
	once     sync.Once
	done     chan struct{}
	finished chan struct{}
}

func watchInterrupts(interrupts <-chan os.Signal, cancel context.CancelFunc) *interruptWatch {
	w := &interruptWatch{done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		select {
		case <-interrupts: // a nil channel never delivers
			cancel()
		case <-w.done:
		}
	}()
	return w
}

// stop ends the watch; when it returns, the watch takes no more interrupts.
func (w *interruptWatch) stop() {
	w.once.Do(func() { close(w.done) })
	<-w.finished
}

// drainInterrupts forgets the interrupts delivered while no command ran.
func drainInterrupts(interrupts <-chan os.Signal) {
	for {
		select {
		case <-interrupts:
		default:
			return
		}
	}
}
