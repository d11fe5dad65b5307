package settings

// Hint says what a value of the kind looks like, for a message about a
// value that is missing or wrong; "" for a string, which may be anything.
func (k Kind) Hint() string {
	switch k {
	case Duration:
		return "give a duration such as 30s or 5m"
	case Int:
		return "give a whole number such as 3"
	case Bool:
		return "it is a switch: give it alone, or as --name=true or --name=false"
	case Float:
		return "give a number such as 0.7"
	}
	return ""
}
