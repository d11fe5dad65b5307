module github.com/ask-cli/ask

go 1.26.8

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/tidwall/gjson v1.20.0
	github.com/tidwall/sjson v1.2.5
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
