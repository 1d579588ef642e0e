// Package upstream lets the conformance checks judge an adapter built on
// the TypeScript kit's privacy engine without exporting that engine: the
// Go kit's engine keeps one rule the TypeScript kit's lacks (SPEC §8, Go
// kit only: a member name holding an opening marker outside a closed pair
// raises the marker-structure floor), and a check that finds an adapter
// keeping the contract's other rules exactly shows that difference as a
// limit instead of failing it. Package privacy sets WithoutNameFloor when
// it is initialised.
package upstream

// WithoutNameFloor returns, for a *privacy.Engine, an engine (a
// *privacy.Engine) of the same configuration whose marker-structure floor
// counts string values only, as the TypeScript kit's does; everything else
// it does exactly as the engine it is given. It is set by package privacy.
var WithoutNameFloor func(engine any) any
