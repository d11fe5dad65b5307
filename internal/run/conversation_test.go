package run

import "testing"

// FuzzParseConversation: any transcript bytes give a conversation with a
// history, or an error; never a panic.
func FuzzParseConversation(f *testing.F) {
	f.Add([]byte(`{"type":"run.started","provider":"openai","settings":{"tools":["read_file"]}}` + "\n" +
		`{"type":"run.finished","history":[{"role":"user","content":"x"}]}` + "\n"))
	f.Add([]byte(`{"type":"run.started"}` + "\n" + `{"type":"run.finished"}`))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseConversation(data)
		if err == nil && len(p.History) == 0 {
			t.Fatalf("accepted a conversation without history: %q", data)
		}
	})
}
