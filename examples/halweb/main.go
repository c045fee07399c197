// Command halweb is halscope, halshow and halmeter in a browser: it
// attaches to a running HAL host (examples/halrun, examples/halhost) from
// its own process and serves a live triggered scope, the HAL tree and a
// watch list to a web page:
//
//	halweb [-http ADDR [-remote]] [-allow-set] [-sampler N] [-rate HZ] [-rtapi.instance N]
//
// It reads the host through the one read-only view (hal.OpenView of the
// host's data and stats segments) and changes it only through the host's
// command socket (package halctl), as examples/halcmd does, so the host's
// rules and its who-may check apply. It never runs in the host.
//
// The scope reads a sampler at thread rate. By default halweb does what
// LinuxCNC's halscope does with scope_rt: over the command socket it
// loads a sampler with one pin per traced pin (up to 8; cfg= their
// types), adds its function to the chosen thread and links the chosen
// pins to it; traces of other types reload it (unloadrt sampler, loadrt
// sampler), other pins of the same types only relink it. At exit it
// removes the function and the links it made and unloads the sampler.
// One a killed halweb left idle is taken over.
// -sampler N reads the host's own sampler channel N as its .hal file
// wired it, and changes nothing.
//
// halweb listens on 127.0.0.1:7681 (-http). Every request needs the
// token it makes at start and writes to -token-file (mode 0640, of the
// host's group -rtapi.shm-group): open http://ADDR/?token=TOKEN once; the
// page keeps it in a SameSite cookie. Another address than a loopback one
// needs -remote as well. setp and sets from the page need -allow-set; each
// is logged with the client's address (docs/HALWEB.md, docs/SECURITY.md).
//
// halweb gives way to everything else on the machine: once attached, its
// threads run SCHED_IDLE, one at a time (GOMAXPROCS 1 unless $GOMAXPROCS
// is set; -idle=false keeps its normal priority, for a page that stays
// responsive on a busy machine), and off the CPUs the host's real-time
// threads are pinned to (if any others are left to it).
// It reads the host's view only while a page watches or asks, and writes
// to each page at most 16 KiB per system call (docs/HALWEB.md, "Cost on
// the host").
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/gortapi/gortapi/examples/internal/cli"
	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal"
	"github.com/gortapi/gortapi/rtapi/hal/halctl"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/shm"
)

type config struct {
	addr       string
	remote     bool
	allowSet   bool
	idle       bool
	tokenFile  string
	rate       int
	samplerCh  int
	depth      int
	maxClients int
	wait       time.Duration
	dataKey    uint
	statsKey   uint
	shmDir     string
	group      string
	instance   int
}

func main() { os.Exit(command(os.Args[1:], os.Stdout, os.Stderr)) }

// command runs halweb with args until Ctrl-C or SIGTERM: its exit status
// (HACKING.md, "Examples: one command-line style").
func command(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("halweb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cli.Usage(fs, "[-http ADDR [-remote]] [-allow-set] [-sampler N] [-rate HZ] [-rtapi.instance N]", "")
	opts := rtapi.RegisterShmFlags(fs)
	fs.StringVar(&c.addr, "http", "127.0.0.1:7681", "serve the page on this address")
	fs.BoolVar(&c.remote, "remote", false, "allow an -http address that is not a loopback one")
	fs.BoolVar(&c.allowSet, "allow-set", false, "let the page setp and sets (each change is logged)")
	fs.BoolVar(&c.idle, "idle", true, "run SCHED_IDLE and one thread at a time, giving way to everything else (-idle=false: a page that stays responsive on a busy machine)")
	fs.StringVar(&c.tokenFile, "token-file", "", "write the access token here (default DIR/halweb-INSTANCE.token, DIR the host's socket directory)")
	fs.IntVar(&c.rate, "rate", 20, "watch-list updates per second, 10 to 30")
	fs.IntVar(&c.samplerCh, "sampler", -1, "read the host's own sampler channel N as wired, changing nothing (-1: load halweb's own)")
	fs.IntVar(&c.depth, "depth", DefaultDepth, "depth of the sampler halweb loads")
	fs.IntVar(&c.maxClients, "max-clients", DefaultMaxClients, "live page connections at once")
	fs.DurationVar(&c.wait, "wait", 0, "how long to wait for the host to appear at start")
	cli.KeyVar(fs, &c.dataKey, "data-key", halctl.DefaultDataKey, "shared-memory `key` of the host's data segment")
	cli.KeyVar(fs, &c.statsKey, "stats-key", halctl.DefaultStatsKey, "shared-memory `key` of the host's thread statistics")
	fs.StringVar(&c.shmDir, "shm-dir", "", "directory of the host's segments and socket, its -shm-dir")
	fs.StringVar(&c.group, "group", "", "the same as -rtapi.shm-group")
	err := cli.Parse(fs, args)
	if err == nil {
		opts.ShmGroup = cmp.Or(opts.ShmGroup, c.group)
		c.instance, c.group, err = cli.Resolve(*opts)
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx, stdout, stderr, c)
		stop()
	}
	return cli.Exit("halweb", stderr, err)
}

// checkConfig refuses settings halweb will not serve with.
func checkConfig(c config) error {
	if c.rate < 10 || c.rate > 30 {
		return cli.Usagef("-rate %d: want 10 to 30", c.rate)
	}
	if c.samplerCh < -1 || c.samplerCh >= sampler.MaxChannels {
		return cli.Usagef("-sampler %d: want -1 to %d", c.samplerCh, sampler.MaxChannels-1)
	}
	if c.depth < 16 || c.depth > MaxDepth {
		return cli.Usagef("-depth %d: want 16 to %d", c.depth, MaxDepth)
	}
	if c.maxClients < 1 || c.maxClients > 256 {
		return cli.Usagef("-max-clients %d: want 1 to 256", c.maxClients)
	}
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil {
		return cli.Usagef("-http %q: %v", c.addr, err)
	}
	if !isLoopback(host) && !c.remote {
		return cli.Usagef("-http %q is not a loopback address: add -remote to serve other machines (they need the token)", c.addr)
	}
	return nil
}

// isLoopback reports whether host (of an -http address) only reaches
// this machine: localhost or a loopback IP. "" (every address) is not.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func run(ctx context.Context, stdout, stderr io.Writer, c config) error {
	if err := checkConfig(c); err != nil {
		return err
	}
	logger := log.New(stderr, "halweb: ", log.LstdFlags)
	view, err := openViewWaiting(ctx, c)
	if err != nil || view == nil {
		return err
	}
	defer view.Close()
	if c.idle {
		if err := background(); err != nil {
			logger.Printf("cannot run SCHED_IDLE: %v; it runs at its normal priority", err)
		}
	}
	if cpus, err := keepOff(view.HostPID()); err != nil {
		logger.Printf("cannot keep off the host's real-time CPUs: %v", err)
	} else if cpus != nil {
		logger.Printf("runs on CPUs %v, off those the host's real-time threads are pinned to", cpus)
	}
	ctl, err := halctl.DialInstance(c.shmDir, c.instance, halctl.Options{Group: c.group})
	if err != nil {
		return fmt.Errorf("no HAL host of instance %d (is halrun running?): %w", c.instance, err)
	}
	defer ctl.Close()

	tokenFile := c.tokenFile
	if tokenFile == "" {
		dir := c.shmDir
		if dir == "" {
			dir = filepath.Dir(halctl.SocketPath("", c.instance))
		}
		tokenFile = filepath.Join(dir, "halweb-"+strconv.Itoa(c.instance)+".token")
	}
	token, err := NewToken()
	if err != nil {
		return err
	}
	if err := WriteToken(tokenFile, token, c.group); err != nil {
		return err
	}
	defer os.Remove(tokenFile)

	so := shm.Options{Dir: c.shmDir, Instance: c.instance, Group: c.group}
	srv, err := NewServer(Options{
		View:       view,
		Control:    ctl,
		Attach:     func(ch int) (SampleSource, error) { return sampler.Attach(so, ch) },
		Token:      token,
		AllowSet:   c.allowSet,
		Rate:       c.rate,
		SamplerCh:  c.samplerCh,
		Depth:      c.depth,
		MaxClients: c.maxClients,
		Log:        logger,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		srv.Close()
		return err
	}
	fmt.Fprintf(stdout, "halweb: serving http://%s/ (token in %s)\n", ln.Addr(), tokenFile)
	err = srv.Serve(ctx, ln)
	if cerr := srv.Close(); err == nil {
		err = cerr
	}
	return err
}

// openViewWaiting opens the host's view, retrying for up to c.wait while
// it does not exist yet. It returns nil, nil when ctx ends first.
func openViewWaiting(ctx context.Context, c config) (*hal.View, error) {
	deadline := time.Now().Add(c.wait)
	for {
		v, err := hal.OpenView(hal.ViewOptions{DataKey: uint32(c.dataKey), StatsKey: uint32(c.statsKey),
			Instance: c.instance, Dir: c.shmDir, Group: c.group})
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, shm.ErrNotInitialised) || !time.Now().Before(deadline) {
			return nil, fmt.Errorf("no HAL host of instance %d (is halrun running?): %w", c.instance, err)
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}
