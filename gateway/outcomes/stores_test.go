package outcomes_test

import (
	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/gateway/outcomes/sqlstore"
)

// init lends sqlstore's openers to the package's own tests, which cannot
// import sqlstore (it imports outcomes): the Writer and the handlers are
// tested over the real SQLite and PostgreSQL stores.
func init() {
	outcomes.OpenSQLite = sqlstore.OpenSQLite
	outcomes.OpenPostgres = sqlstore.OpenPostgres
}
