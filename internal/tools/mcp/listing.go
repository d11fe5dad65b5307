package mcp

// Listing is one MCP server as `ask mcp list` shows it. Values of env and
// headers are never shown, only their names: they hold credentials.
type Listing struct {
	Name      string       `json:"name"`
	Source    string       `json:"source"`
	Transport string       `json:"transport"` // stdio; http, sse, or http+sse (tries both)
	Command   []string     `json:"command,omitempty"`
	URL       string       `json:"url,omitempty"`
	Env       []string     `json:"env,omitempty"`
	Headers   []string     `json:"headers,omitempty"`
	Sandbox   bool         `json:"sandbox"`
	Disabled  bool         `json:"disabled"`
	Tools     []ListedTool `json:"tools,omitempty"`
	Error     string       `json:"error,omitempty"`
	// SignIn is a remote server's OAuth sign-in: "signed in", "login
	// needed" (ask mcp login NAME), "client credentials"; "" for none.
	SignIn string `json:"sign_in,omitempty"`
	// AuthFailed is set when the server refused its credentials.
	AuthFailed bool `json:"-"`
}

// ListedTool is a server's tool: its name on the server, the name the model
// is offered, and its description.
type ListedTool struct {
	Name        string `json:"name"`
	Declared    string `json:"declared"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"read_only"`
}
