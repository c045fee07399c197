// Command benchclient is bench.sh's stand-in for a page on another
// machine (issue 43's cost): what the page asks of halweb, with nothing
// rendered, so that only halweb's own cost lands on the host's CPUs.
//
//	benchclient -addr 127.0.0.1:7943 -token T -watch pos-cmd,pos-fb,torque
//	benchclient -drain -rtapi.instance 43
//
// The first opens halweb's WebSocket, sends the watch list, reads every
// message and drops it, and gets /api/tree once a second, as the page
// does. -drain instead reads sampler channel 0's ring every 10 ms and
// drops the samples, as halweb's scope reads it: the sampler's cost
// without halweb. On SIGTERM or Ctrl-C it prints what it read and exits 0.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/gortapi/gortapi/rtapi"
	"github.com/gortapi/gortapi/rtapi/hal/sampler"
	"github.com/gortapi/gortapi/rtapi/ipc"
	"github.com/gortapi/gortapi/rtapi/shm"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7681", "halweb's address")
	token := flag.String("token", "", "halweb's token")
	watch := flag.String("watch", "", "comma-separated watch list")
	drain := flag.Bool("drain", false, "drain sampler channel 0's ring instead")
	opts := rtapi.RegisterShmFlags(flag.CommandLine)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *drain {
		err = drainRing(ctx, shm.Options{Instance: opts.Instance, Group: opts.ShmGroup})
	} else {
		err = readStream(ctx, *addr, *token, *watch)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchclient:", err)
		os.Exit(1)
	}
}

// readStream reads halweb's WebSocket until ctx ends.
func readStream(ctx context.Context, addr, token, watch string) error {
	hdr := http.Header{"Authorization": {"Bearer " + token}}
	conn, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(-1) // a capture's rows come in one message
	names := []string{}
	if watch != "" {
		names = strings.Split(watch, ",")
	}
	msg, _ := json.Marshal(map[string]any{"type": "watch", "names": names})
	if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
		return err
	}
	go func() { // the page's tree refresh
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/api/tree", nil)
			req.Header = hdr
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	var n, bytes int64
	for {
		_, r, err := conn.Reader(ctx)
		if err == nil {
			var k int64
			k, err = io.Copy(io.Discard, r)
			n, bytes = n+1, bytes+k
		}
		if err != nil {
			if ctx.Err() != nil {
				fmt.Printf("client: %d messages, %d bytes\n", n, bytes)
				return nil
			}
			return err
		}
	}
}

// drainRing reads sampler channel 0 every 10 ms until ctx ends.
func drainRing(ctx context.Context, o shm.Options) error {
	rd, err := sampler.Attach(o, 0)
	if err != nil {
		return err
	}
	defer rd.Close()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var n int64
	for {
		select {
		case <-ctx.Done():
			fmt.Printf("client: %d samples\n", n)
			return nil
		case <-tick.C:
		}
		for range 1 << 16 {
			_, err := rd.TryNext()
			if errors.Is(err, ipc.ErrEmpty) {
				break
			}
			if err != nil && !errors.Is(err, sampler.ErrCorrupt) {
				return err
			}
			n++
		}
	}
}
