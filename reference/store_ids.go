package reference

import (
	"github.com/ds4context/adapterkit/contract"
	"github.com/ds4context/adapterkit/internal/idtable"
)

// idSet is a set of ids (message ids, tool call ids) in the order they
// were added, each with its position in that order. The list shares the
// ids' strings with the messages, and the index over it costs 4 to 8
// bytes an id (idtable), where a Go map costs several times that. A nil
// idSet is empty.
type idSet struct {
	list []string
	t    *idtable.Table
}

func newIDSet(n int) *idSet { return &idSet{list: make([]string, 0, n), t: idtable.New(n)} }

func (s *idSet) at(i int32) string { return s.list[i] }

// find returns the position of id, or -1.
func (s *idSet) find(id string) int32 {
	if s == nil {
		return -1
	}
	return s.t.Find(id, s.at)
}

func (s *idSet) has(id string) bool { return s.find(id) >= 0 }

// add adds id at the end unless it is there, and reports whether it was
// added.
func (s *idSet) add(id string) bool {
	if _, found := s.t.Insert(id, int32(len(s.list)), s.at); found {
		return false
	}
	s.list = append(s.list, id)
	return true
}

func (s *idSet) len() int {
	if s == nil {
		return 0
	}
	return len(s.list)
}

// merge adds the ids of small to big, after big's, and returns big; or
// returns small when big is empty.
func merge(big, small *idSet) *idSet {
	if big.len() == 0 {
		return small
	}
	for _, id := range small.list {
		big.add(id)
	}
	return big
}

// indexOf returns the message ids and tool call ids of msgs. In a history
// whose ids are unique, a message id's position is its message's index.
func indexOf(n int, message func(int) (id string, blocks []contract.Block)) (ids, calls *idSet) {
	ids, calls = newIDSet(n), newIDSet(0)
	for i := range n {
		id, blocks := message(i)
		ids.add(id)
		for _, b := range blocks {
			if call, ok := b.(*contract.ToolCallBlock); ok {
				calls.add(call.ID)
			}
		}
	}
	return ids, calls
}

// indexOfMessages is indexOf of msgs.
func indexOfMessages(msgs []contract.Message) (ids, calls *idSet) {
	return indexOf(len(msgs), func(i int) (string, []contract.Block) { return msgs[i].ID, msgs[i].Blocks })
}
