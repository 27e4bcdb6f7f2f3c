package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres"
)

// counters are the database's cumulative counters that a unit of work
// moves.
type counters struct {
	stmts, xact, rows, wal int64
}

// coster reads the counters of one database (name, at dsn) from a
// connection to another database of the server (monitor), so its own reads
// move none of them.
type coster struct {
	conn *pgx.Conn
	dsn  string
	name string
}

func newCoster(ctx context.Context, monitor, dsn, name string) (*coster, error) {
	conn, err := pgx.Connect(ctx, monitor)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("pg_stat_statements (the server must preload it): %w", err)
	}
	return &coster{conn: conn, dsn: dsn, name: name}, nil
}

// take reads the counters. Statements are pg_stat_statements' calls in
// the database (BEGIN and COMMIT included).
func (c *coster) take(ctx context.Context) (counters, error) {
	var s counters
	err := c.conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted,
		pg_current_wal_lsn() - '0/0'::pg_lsn FROM pg_stat_database WHERE datname = $1`, c.name).Scan(&s.xact, &s.rows, &s.wal)
	if err != nil {
		return s, err
	}
	err = c.conn.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`, c.name).Scan(&s.stmts)
	return s, err
}

// cost is what one unit of a measured piece of work cost the database.
type cost struct {
	stmts, xact, rows, wal float64
	wall                   time.Duration
}

// settle reads the counters until two reads a flush interval apart
// agree: a backend reports its counters at most once a second, and when it
// exits.
func (c *coster) settle(ctx context.Context) (counters, error) {
	prev, err := c.take(ctx)
	if err != nil {
		return prev, err
	}
	for range 30 {
		time.Sleep(1100 * time.Millisecond) // polling the server's counters
		cur, err := c.take(ctx)
		if err != nil || cur == prev {
			return cur, err
		}
		prev = cur
	}
	return prev, nil
}

// measureCost runs fn on a fresh store of the database (closed after, so
// its backends report their counters) and returns the counters' moves
// divided by units.
func (c *coster) measureCost(ctx context.Context, units float64, fn func(db *postgres.DB) error) (cost, error) {
	before, err := c.settle(ctx)
	if err != nil {
		return cost{}, err
	}
	db, err := postgres.Open(ctx, c.dsn, &postgres.Options{NodeID: "bench"})
	if err != nil {
		return cost{}, err
	}
	start := time.Now()
	err = fn(db)
	elapsed := time.Since(start)
	db.Close()
	if err != nil {
		return cost{}, err
	}
	after, err := c.settle(ctx)
	if err != nil {
		return cost{}, err
	}
	return cost{
		stmts: float64(after.stmts-before.stmts) / units,
		xact:  float64(after.xact-before.xact) / units,
		rows:  float64(after.rows-before.rows) / units,
		wal:   float64(after.wal-before.wal) / units,
		wall:  time.Duration(float64(elapsed) / units),
	}, nil
}

func (k cost) row(name string, extra string) string {
	return fmt.Sprintf("| %s | %.1f | %.1f | %.1f | %.0f | %s | %s |", name, k.stmts, k.xact, k.rows, k.wal, extra, ms(k.wall))
}

const costHeader = "| unit | statements | transactions | rows written | WAL bytes | WAL bytes beyond the audio | wall time per unit |\n|---|---|---|---|---|---|---|"

// preRecordedJob runs one pre-recorded job through its whole life as the
// daemon does: audio stored, job created, claimed, finished with a
// callback owed, callback claimed and sent, job read.
func preRecordedJob(db *postgres.DB, id string, audio []byte) error {
	if _, err := db.WriteBlob("job-"+id, bytes.NewReader(audio), 0); err != nil {
		return err
	}
	j := doneJob(id, time.Now())
	res := j.Result
	j.Status, j.Result = store.StatusQueued, nil
	if err := db.CreateJob(j); err != nil {
		return err
	}
	c, err := db.ClaimNext(store.KindPreRecorded)
	if err != nil {
		return err
	}
	if _, err := db.UpdateJob(c.ID, func(j *store.Job) ([]*store.Delivery, error) {
		j.Status, j.Result, j.CompletedAt = store.StatusDone, res, time.Now()
		return []*store.Delivery{{URL: "http://127.0.0.1:9/cb", Body: res}}, nil
	}); err != nil {
		return err
	}
	if err := sendDeliveries(db); err != nil {
		return err
	}
	_, err = db.Job(c.ID)
	return err
}

// sendDeliveries claims the due callbacks and deletes them, as the outbox
// does after a 2xx.
func sendDeliveries(db *postgres.DB) error {
	ds, err := db.ClaimDeliveries(time.Now(), 10)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if err := db.DeleteDelivery(d.ID); err != nil {
			return err
		}
	}
	return nil
}

// liveCall runs one live call of the given length through its store life
// as the daemon does: placed on this node, attached (processing), its
// recording appended every second (recording_sync's default), then the
// rest appended, the header patched and the result stored as done. With
// finalsPerMinute > 0 a callback per final transcript is queued, claimed
// and sent as it comes.
func liveCall(db *postgres.DB, id string, seconds, bytesPerSecond, finalsPerMinute int) error {
	j := &store.Job{ID: id, Account: "acme", Kind: store.KindLive, Status: store.StatusQueued, CreatedAt: time.Now(),
		Params: []byte(`{"encoding":"wav/ulaw","sample_rate":8000,"bit_depth":8,"channels":1}`), Blob: "live-" + id + ".wav",
		PostSessionMetadata: map[string]any{}}
	if _, err := db.PlaceLive(j, store.Node{LiveCapacity: 100000}, false, 6*time.Second); err != nil {
		return err
	}
	if _, err := db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
		j.Status = store.StatusProcessing
		return nil, nil
	}); err != nil {
		return err
	}
	f := media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
	second := bytes.Repeat([]byte{0x7f, 0xff}, bytesPerSecond/2)
	size, err := db.AppendBlob(j.Blob, 0, media.AppendWAVHeader(nil, f, -1))
	if err != nil {
		return err
	}
	final := bytes.Repeat([]byte("x"), 600) // a transcript message of about ten words
	for s := range seconds {
		if size, err = db.AppendBlob(j.Blob, size, second); err != nil {
			return err
		}
		if finalsPerMinute > 0 && (s+1)%(60/finalsPerMinute) == 0 {
			if err := db.EnqueueDelivery(&store.Delivery{JobID: id, Account: "acme", URL: "http://127.0.0.1:9/cb", Body: final}); err != nil {
				return err
			}
			if err := sendDeliveries(db); err != nil {
				return err
			}
		}
	}
	if err := db.PatchBlobHead(j.Blob, media.AppendWAVHeader(nil, f, size-44)); err != nil {
		return err
	}
	res := doneJob(id, j.CreatedAt).Result
	_, err = db.UpdateJob(id, func(j *store.Job) ([]*store.Delivery, error) {
		j.Status, j.Result, j.CompletedAt = store.StatusDone, res, time.Now()
		return nil, nil
	})
	return err
}

// nodeMinute is one node's background work for a minute: a heartbeat,
// the adoption and orphan checks every 2 s, and a lease round every 10 s
// (job_lease 30s).
func nodeMinute(db *postgres.DB) error {
	for i := range 30 {
		if err := db.Heartbeat(store.Node{AdvertiseURL: "http://n1:8080", LiveCapacity: 8, LiveFree: 8}); err != nil {
			return err
		}
		if _, err := db.OwnLive(); err != nil {
			return err
		}
		if _, err := db.TakeOrphanLive(6 * time.Second); err != nil {
			return err
		}
		if i%5 == 0 {
			if _, err := db.RenewLeases(); err != nil {
				return err
			}
			if _, err := db.ReclaimExpired(); err != nil {
				return err
			}
		}
	}
	return nil
}

// costs measures and prints what pre-recorded jobs, live call-minutes and
// a node's idle minute cost PostgreSQL.
func costs(ctx context.Context, monitor, dsn, name string, audioSeconds, liveMinutes, liveBytesPerSecond int) error {
	c, err := newCoster(ctx, monitor, dsn, name)
	if err != nil {
		return err
	}
	defer c.conn.Close(ctx)
	const jobs, calls = 50, 10
	audio := bytes.Repeat([]byte{1, 2, 3, 4}, audioSeconds*32000/4)
	job, err := c.measureCost(ctx, jobs, func(db *postgres.DB) error {
		for i := range jobs {
			if err := preRecordedJob(db, fmt.Sprintf("life-%03d", i), audio); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	minutes := float64(calls * liveMinutes)
	live, err := c.measureCost(ctx, minutes, func(db *postgres.DB) error {
		for i := range calls {
			if err := liveCall(db, fmt.Sprintf("call-%03d", i), liveMinutes*60, liveBytesPerSecond, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	liveCB, err := c.measureCost(ctx, minutes, func(db *postgres.DB) error {
		for i := range calls {
			if err := liveCall(db, fmt.Sprintf("callcb-%03d", i), liveMinutes*60, liveBytesPerSecond, 12); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	node, err := c.measureCost(ctx, 5, func(db *postgres.DB) error {
		for range 5 {
			if err := nodeMinute(db); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("PostgreSQL per unit of work (statements from pg_stat_statements, BEGIN/COMMIT included; transactions, rows and WAL from pg_stat_database), "+
		"means of %d pre-recorded jobs of %d s of 16 kHz audio (%d KiB), %d live calls of %d min of G.711 (%d B/s), 5 node-minutes:\n\n",
		jobs, audioSeconds, len(audio)>>10, calls, liveMinutes, liveBytesPerSecond)
	fmt.Println(costHeader)
	fmt.Println(job.row("pre-recorded job (stored, created, claimed, done with a callback, callback sent, read)", fmt.Sprintf("%.0f", job.wal-float64(len(audio)))))
	perMin := float64(liveBytesPerSecond * 60)
	fmt.Println(live.row("live call-minute (placed, attached, audio appended every 1 s, ended with its result)", fmt.Sprintf("%.0f", live.wal-perMin)))
	fmt.Println(liveCB.row("live call-minute with a callback per final transcript (12 a minute)", fmt.Sprintf("%.0f", liveCB.wal-perMin)))
	fmt.Println(node.row("node-minute, idle (heartbeats, adoption and orphan checks every 2 s, lease rounds every 10 s)", "-"))
	return nil
}
