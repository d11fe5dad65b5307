package cart

// Item is one line of a cart.
type Item struct {
	Name     string
	Price    float64 // per unit, in euros
	Quantity int
}

// Discount is a percentage taken off the whole cart.
type Discount struct {
	Code    string
	Percent float64 // 10 means 10 %
}

// Subtotal is the cart's price before any discount.
func Subtotal(items []Item) float64 {
	var sum float64
	for _, it := range items {
		sum += it.Price * float64(it.Quantity)
	}
	return sum
}

// Total applies the discount to the subtotal.
func Total(items []Item, d *Discount) float64 {
	total := Subtotal(items)
	if d != nil {
		total -= d.Percent
	}
	return total
}
