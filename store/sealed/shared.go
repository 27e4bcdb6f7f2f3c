package sealed

import "fmt"

// A keyring shared by the nodes of a cluster (store/postgres's Keyring)
// changes under a Store: another node may start a rotation, so data keys
// appear wrapped by a key this node was not configured with, and new ones
// must be wrapped by the rotation's key. kek and primaryKEK follow the
// keyring's rotation; on a keyring one process owns (FileKeyring) the
// rotation is this Store's own and they change nothing.

// kek returns the key-encryption key id: a configured one, else the key
// of the keyring's rotation in progress named id, loaded from the file
// the rotation names (the same path on every node); nil when neither.
func (s *Store) kek(id string) *KEK {
	s.keysMu.RLock()
	k := s.keks[id]
	s.keysMu.RUnlock()
	if k != nil {
		return k
	}
	r := s.ring.Rotation()
	if r == nil {
		return nil
	}
	file := ""
	switch id {
	case r.To:
		file = r.ToFile
	case r.From:
		file = r.FromFile
	default:
		return nil
	}
	k, err := s.adopt(id, file)
	if err != nil {
		return nil
	}
	return k
}

// adopt loads the key file and keeps its key when it is the key id.
func (s *Store) adopt(id, file string) (*KEK, error) {
	k, err := LoadKeyFile(file)
	if err != nil {
		return nil, err
	}
	if k.ID() != id {
		return nil, fmt.Errorf("sealed: %s holds key %s, not key %s", file, k.ID(), id)
	}
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	if have := s.keks[id]; have != nil {
		return have, nil
	}
	s.keks[id] = k
	return k, nil
}

// primaryKEK returns the key that wraps new data keys: the rotation's new
// key while the keyring records one (once this node has it), else the
// configured one.
func (s *Store) primaryKEK() *KEK {
	s.keysMu.RLock()
	p := s.primary
	s.keysMu.RUnlock()
	r := s.ring.Rotation()
	if r == nil || r.To == p.ID() {
		return p
	}
	k := s.kek(r.To)
	if k == nil {
		return p // the rotation's key file is not on this node: kept under p, re-wrapped by the rotation's pass
	}
	s.keysMu.Lock()
	s.primary = k
	s.keysMu.Unlock()
	return k
}
