package trace

import (
	"cmp"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Defaults of the OTLP exporter specification, and ask's own bounds.
const (
	defaultTimeout = 10 * time.Second
	// defaultDelay is OTEL_BSP_SCHEDULE_DELAY's default: how long ended
	// spans wait to be sent with others.
	defaultDelay = 5 * time.Second
	// maxQueue spans wait at most (OTEL_BSP_MAX_QUEUE_SIZE's default); more
	// are dropped rather than held in memory.
	maxQueue = 2048
	// batchSize ended spans are sent at once without waiting for the delay.
	batchSize = 512
	// defaultValueLimit bounds captured content (a tool's output may be
	// megabytes) when OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT does not.
	defaultValueLimit = 64 << 10
)

// config is what the OTEL_* variables ask for. Two runs with the same
// config share one exporter.
type config struct {
	url         string            // where spans are posted
	grpc        bool              // OTLP/gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc), else OTLP/HTTP
	headers     map[string]string // OTEL_EXPORTER_OTLP_[TRACES_]HEADERS
	timeout     time.Duration
	gzip        bool
	delay       time.Duration
	resource    []kv // service.name first
	sampler     string
	ratio       float64
	capture     bool
	valueLimit  int
	serviceName string
}

// kv is one resource attribute, in order.
type kv struct{ key, value string }

// key identifies the exporter a config needs.
func (c config) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%v|%v|%v|%v|", c.url, c.grpc, c.timeout, c.gzip, c.delay)
	keys := make([]string, 0, len(c.headers))
	for k := range c.headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q,", k, c.headers[k])
	}
	b.WriteByte('|')
	for _, a := range c.resource {
		fmt.Fprintf(&b, "%q=%q,", a.key, a.value)
	}
	return b.String()
}

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint is set, OTEL_TRACES_EXPORTER is not none (nor another exporter
// ask does not have) and the SDK is not disabled. It reads a few variables
// and nothing else: a run that does not trace pays no more.
func Enabled(getenv func(string) string) bool {
	if getenv == nil || strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return false
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "", "otlp":
		return true
	default:
		// A list ("otlp,console") traces when it names otlp.
		for _, e := range strings.Split(exp, ",") {
			if strings.TrimSpace(e) == "otlp" {
				return true
			}
		}
		return false
	}
}

// readConfig reads the OTEL_* variables through getenv, the run's own
// environment (tests run many in one process), never os.Getenv. The
// signal-specific TRACES variables win over the general ones, as the
// specification says.
func readConfig(getenv func(string) string, version string) (config, error) {
	c := config{timeout: defaultTimeout, delay: defaultDelay, sampler: "parentbased_always_on", valueLimit: defaultValueLimit}
	pick := func(name string) string {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return v
		}
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name))
	}
	switch p := pick("PROTOCOL"); p {
	case "", "http/protobuf":
	case "grpc":
		c.grpc = true
	default:
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL is %q: ask sends OTLP as http/protobuf or grpc", p)
	}
	switch {
	case c.grpc:
		// gRPC has one endpoint for every signal: the service's method
		// is the path.
		u := cmp.Or(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")), strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")))
		c.url = strings.TrimRight(u, "/") + grpcExportPath
	case strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != "":
		c.url = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) // used as it is
	case strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "":
		c.url = strings.TrimRight(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), "/") + "/v1/traces" // a base for every signal
	}
	u, err := url.Parse(c.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("the OTLP endpoint %q is not an http(s) URL", c.url)
	}
	c.headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		pairs, err := parsePairs(getenv(name))
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		for _, p := range pairs {
			c.headers[p.key] = p.value
		}
	}
	if v := pick("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return c, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT: %q is not a number of milliseconds", v)
		}
		c.timeout = time.Duration(ms) * time.Millisecond
	}
	c.gzip = strings.EqualFold(pick("COMPRESSION"), "gzip")
	if v := strings.TrimSpace(getenv("OTEL_BSP_SCHEDULE_DELAY")); v != "" {
		if ms, err := strconv.Atoi(v); err == nil && ms >= 0 {
			c.delay = time.Duration(ms) * time.Millisecond
		}
	}

	attrs, err := parsePairs(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return c, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	c.serviceName = "ask"
	for _, a := range attrs {
		if a.key == "service.name" {
			c.serviceName = a.value
		}
	}
	if s := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); s != "" {
		c.serviceName = s
	}
	c.resource = []kv{{"service.name", c.serviceName}}
	if version != "" {
		c.resource = append(c.resource, kv{"service.version", version})
	}
	c.resource = append(c.resource, kv{"telemetry.sdk.name", "ask"}, kv{"telemetry.sdk.language", "go"})
	for _, a := range attrs {
		if a.key != "service.name" && !(a.key == "service.version" && version != "") {
			c.resource = append(c.resource, a)
		}
	}

	if s := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))); s != "" {
		switch s {
		case "always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio":
			c.sampler = s
		default:
			return c, fmt.Errorf("OTEL_TRACES_SAMPLER: %q is not a sampler ask knows", s)
		}
	}
	c.ratio = 1
	if strings.HasSuffix(c.sampler, "traceidratio") {
		if v := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG")); v != "" {
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r < 0 || r > 1 {
				return c, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG: %q is not a ratio between 0 and 1", v)
			}
			c.ratio = r
		}
	}

	c.capture = strings.EqualFold(strings.TrimSpace(getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")), "true")
	for _, name := range []string{"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT"} {
		if n, err := strconv.Atoi(strings.TrimSpace(getenv(name))); err == nil && n > 0 {
			c.valueLimit = n
		}
	}
	return c, nil
}

// parsePairs reads the W3C-baggage-like lists of OTEL_*_HEADERS and
// OTEL_RESOURCE_ATTRIBUTES: "k=v,k2=v2", values percent-encoded.
func parsePairs(s string) ([]kv, error) {
	var out []kv
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			// Not quoted: a header list holds credentials.
			return nil, fmt.Errorf("entry %d is not key=value", len(out)+1)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %s is not percent-encoded", k)
		}
		out = append(out, kv{k, dec})
	}
	return out, nil
}
