package batch

// PriceRate is what a request sent through a provider's batch interface
// costs as a share of its listed price: half, for each of the three
// (OpenAI's Batch API, Anthropic's Message Batches, Gemini's Batch Mode;
// the sources are in testdata/PROVENANCE.md, "Batch prices").
func (r *Rounds) PriceRate() float64 { return 0.5 }
