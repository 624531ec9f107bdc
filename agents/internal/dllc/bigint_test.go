package dllc

import "math/big"

// bigInt wraps math/big for the reference comparison in tests.
type bigInt struct{ v big.Int }

func (b *bigInt) mul(x uint64, w uint32) *bigInt {
	b.v.Mul(new(big.Int).SetUint64(x), new(big.Int).SetUint64(uint64(w)))
	return b
}

func (b *bigInt) cmp(o *bigInt) int { return b.v.Cmp(&o.v) }
