package settings

// Samples are values of a row as a user would type them, for the tests
// generated from the rows: every layer must take the Good ones and refuse
// the Bad ones alike, and a row marked widening must be refused Wide over
// the command line's Over ("" for the row's default).
type Samples struct {
	Good, Bad  []string
	Wide, Over string
}

// samples is what a row adds to its kind's samples.
type samples struct {
	good, bad  []string
	wide, over string
}

// Samples are the row's own samples, else its kind's.
func (r Row) Samples() Samples {
	s := Samples{Good: r.samples.good, Bad: r.samples.bad, Wide: r.samples.wide, Over: r.samples.over}
	var good, bad []string
	switch {
	case len(r.Choices) > 0:
		good, bad = r.Choices, []string{"nope"}
	case r.Kind == Bool:
		good, bad = []string{"true", "false"}, []string{"maybe"}
	case r.Kind == Int:
		good, bad = []string{"3"}, []string{"x", "-5"}
	case r.Kind == Float:
		good, bad = []string{"0.5"}, []string{"x", "-1"}
	case r.Kind == Duration:
		good, bad = []string{"90s"}, []string{"soon", "-1s"}
	case r.Kind == List:
		good = []string{"item"}
	default:
		good = []string{"text"}
	}
	if s.Good == nil {
		s.Good = good
	}
	s.Bad = append(bad[:len(bad):len(bad)], s.Bad...)
	if s.Wide == "" && r.widen != nil && r.Kind == Bool {
		s.Wide = "true"
	}
	return s
}
