package storetest_test

import (
	"os"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/postgres/pgtest"
	"github.com/earshot-dev/earshot/store/storetest"
)

// pg is the package's throwaway PostgreSQL server, started by TestMain.
var pg *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &pg)) }

// TestConformance runs the same cases against both backends.
func TestConformance(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		storetest.Run(t, func(t testing.TB) store.Store { return storetest.Open(t) })
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.Run(t, func(t testing.TB) store.Store { return storetest.OpenPostgres(t, pg) })
	})
}
