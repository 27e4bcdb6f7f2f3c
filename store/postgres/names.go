package postgres

import "fmt"

// JobIDs calls fn with the id of every job, in ascending byte order: one
// query of ids only (store/sealed's key sweep at a node's start, which
// before made one query per data key).
func (db *DB) JobIDs(fn func(id string)) error {
	return db.eachID("SELECT id FROM jobs ORDER BY id", fn)
}

// UploadIDs calls fn with the id of every upload, in ascending byte order.
func (db *DB) UploadIDs(fn func(id string)) error {
	return db.eachID("SELECT id FROM uploads ORDER BY id", fn)
}

// BlobNames calls fn with the name of every blob, in ascending byte order.
func (db *DB) BlobNames(fn func(name string)) error {
	return db.eachID("SELECT name FROM blobs ORDER BY name", fn)
}

// eachID calls fn with each row of q, a query of one text column.
func (db *DB) eachID(q string, fn func(string)) error {
	ctx, cancel := db.ctx()
	defer cancel()
	rows, err := db.pool.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("store: %s: %w", q, wrap(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("store: %s: %w", q, wrap(err))
		}
		fn(id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: %s: %w", q, wrap(err))
	}
	return nil
}
