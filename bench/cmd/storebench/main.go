// Command storebench measures the two store backends side by side on this
// machine: the embedded bbolt store and the PostgreSQL store (a throwaway
// PostgreSQL server started here, as the tests start one, with fsync on as
// in production). For each it times the calls behind the API's hot paths
// (GET a job, list a page, create a job, claim a job, authenticate a key)
// and, for PostgreSQL, counts what a pre-recorded job over its whole life,
// a live call-minute and a node's idle minute cost the database:
// statements (pg_stat_statements), transactions, rows written and WAL
// bytes (the numbers docs/deployment.md's sizing table multiplies).
//
//	go run ./bench/cmd/storebench [-n 2000] [-audio-seconds 60] [-live-minutes 2] [-live-bytes-per-second 8000]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
)

func main() {
	n := flag.Int("n", 2000, "operations per measurement")
	audioSeconds := flag.Int("audio-seconds", 60, "seconds of 16 kHz 16-bit audio per job in the lifecycle count")
	liveMinutes := flag.Int("live-minutes", 2, "minutes per live call in the call-minute count")
	liveBytesPerSecond := flag.Int("live-bytes-per-second", 8000, "recorded bytes per second of a live call (8000: G.711, as SIP records)")
	flag.Parse()
	srv, err := pgtest.StartDurable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storebench:", err)
		os.Exit(1)
	}
	// An interrupted run still stops its server.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		srv.Stop()
		os.Exit(1)
	}()
	err = run(srv, *n, *audioSeconds, *liveMinutes, *liveBytesPerSecond)
	srv.Stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storebench:", err)
		os.Exit(1)
	}
}

func run(srv *pgtest.Server, n, audioSeconds, liveMinutes, liveBytesPerSecond int) error {
	ctx := context.Background()
	name, err := srv.CreateDatabase(ctx)
	if err != nil {
		return err
	}
	pg, err := postgres.Open(ctx, srv.DSN(name), &postgres.Options{NodeID: "bench"})
	if err != nil {
		return err
	}
	defer pg.Close()
	dir, err := os.MkdirTemp("", "storebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bb, err := bolt.Open(dir, nil) // fsync on, as the daemon runs
	if err != nil {
		return err
	}
	defer bb.Close()

	fmt.Println("| operation | bbolt ops/s | bbolt p50 | bbolt p99 | postgres ops/s | postgres p50 | postgres p99 |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, op := range ops(n) {
		var cells []string
		for _, s := range []store.Store{bb, pg} {
			if err := op.setup(s); err != nil {
				return fmt.Errorf("%s setup: %w", op.name, err)
			}
			r, err := measure(op.clients, n, func(i int) error { return op.run(s, i) })
			if err != nil {
				return fmt.Errorf("%s: %w", op.name, err)
			}
			cells = append(cells, fmt.Sprintf("%.0f", r.rate), ms(r.p50), ms(r.p99))
		}
		fmt.Printf("| %s | %s |\n", op.name, strings.Join(cells, " | "))
	}
	fmt.Println()
	pg.Close() // its idle backends would report their counters into the costs below
	return costs(ctx, srv.DSN("postgres"), srv.DSN(name), name, audioSeconds, liveMinutes, liveBytesPerSecond)
}

type op struct {
	name    string
	clients int
	setup   func(s store.Store) error
	run     func(s store.Store, i int) error
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ops(n int) []op {
	var secret string
	nop := func(store.Store) error { return nil }
	return []op{
		{"CreateJob (POST /v2/pre-recorded, 1 client)", 1, nop, func(s store.Store, i int) error {
			j := doneJob(fmt.Sprintf("c-%06d", i), t0.Add(time.Duration(i)*time.Millisecond))
			j.Status = store.StatusQueued
			j.Result = nil
			return s.CreateJob(j)
		}},
		{"ClaimNext (a worker's claim, 1 client)", 1, nop, func(s store.Store, i int) error {
			_, err := s.ClaimNextAfter(store.KindPreRecorded, "")
			return err
		}},
		{"UpdateJob to done with result and callback (1 client)", 1, nop, func(s store.Store, i int) error {
			_, err := s.UpdateJob(fmt.Sprintf("c-%06d", i), func(j *store.Job) ([]*store.Delivery, error) {
				d := doneJob(j.ID, j.CreatedAt)
				j.Status, j.Result, j.CompletedAt = store.StatusDone, d.Result, d.CompletedAt
				return []*store.Delivery{{URL: "http://127.0.0.1:9/cb", Body: d.Result}}, nil
			})
			return err
		}},
		{"Job (GET /v2/pre-recorded/{id}, 8 clients)", 8, nop, func(s store.Store, i int) error {
			_, err := s.Job(fmt.Sprintf("c-%06d", i%n))
			return err
		}},
		{"ListJobs page of 20 (GET /v2/pre-recorded, 8 clients)", 8, nop, func(s store.Store, i int) error {
			_, err := s.ListJobs(store.ListQuery{Account: "acme", Kind: store.KindPreRecorded, Limit: 20, Offset: i % 100})
			return err
		}},
		{"Authenticate (every request, 8 clients)", 8, func(s store.Store) error {
			var err error
			secret, _, err = s.CreateKey("acme", store.KeyGrant{})
			return err
		}, func(s store.Store, i int) error {
			_, err := s.Authenticate(secret)
			return err
		}},
	}
}

// doneJob is a finished 60 s job with a result of 20 utterances.
func doneJob(id string, created time.Time) *store.Job {
	name, dur, ch := "call.wav", 61.2, 1
	j := &store.Job{ID: id, Account: "acme", Kind: store.KindPreRecorded, Status: store.StatusDone, CreatedAt: created,
		CompletedAt: created.Add(20 * time.Second), CustomMetadata: map[string]any{"team": "blue"},
		Params: json.RawMessage(`{"audio_url":"https://example.com/a.wav","language_config":{"languages":["en"]}}`),
		File:   &store.File{ID: "f-" + id, Filename: &name, AudioDuration: &dur, Channels: &ch}, Blob: "job-" + id,
		PostSessionMetadata: map[string]any{}}
	var utts []map[string]any
	for i := range 20 {
		utts = append(utts, map[string]any{"start": float64(i) * 3, "end": float64(i)*3 + 2.5, "confidence": 0.8,
			"channel": 0, "text": "this is a sentence of about ten words spoken here"})
	}
	j.Result, _ = json.Marshal(map[string]any{"transcription": map[string]any{"utterances": utts}})
	return j
}

type result struct {
	rate     float64
	p50, p99 time.Duration
}

// measure runs fn(0..n-1) over clients goroutines and returns the rate and
// latency percentiles.
func measure(clients, n int, fn func(i int) error) (result, error) {
	lat := make([]time.Duration, n)
	var mu sync.Mutex
	var firstErr error
	next := 0
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				t := time.Now()
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return result{}, firstErr
	}
	slices.Sort(lat)
	return result{rate: float64(n) / elapsed.Seconds(), p50: lat[n/2], p99: lat[n*99/100]}, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
