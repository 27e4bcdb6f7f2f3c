package admin

import (
	"fmt"

	"github.com/earshot-dev/earshot/store"
)

// Source is the audit entries' source of what the admin socket or the CLI
// on the store did: someone with the data directory's owner's rights.
const Source = "admin-socket"

// auditOp appends the audit entry of req, answered by resp, to db: a key
// created or revoked. Other operations (lists, backups) are not audited.
// The append is synchronous (these are rare); its failure is returned for
// Response.Warning and never undoes the operation.
func auditOp(db store.Store, req Request, resp Response) error {
	if resp.Error != "" {
		return nil
	}
	e := store.AuditEntry{Source: Source}
	switch req.Op {
	case OpCreateKey:
		e.Action, e.Account = store.AuditKeyCreate, req.Account
		if resp.Key != nil {
			e.Object = resp.Key.ID
		}
	case OpRevokeKey:
		e.Action, e.Object = store.AuditKeyRevoke, req.ID
	default:
		return nil
	}
	if err := db.AppendAudit(&e); err != nil {
		return fmt.Errorf("audit entry not stored: %w", err)
	}
	return nil
}
