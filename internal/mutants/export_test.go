package mutants

// SetBetweenReads replaces what a snapshot-revision-read-before-messages
// snapshot runs between its two reads, and returns a function restoring it.
func SetBetweenReads(f func()) (restore func()) {
	was := betweenReads
	betweenReads = f
	return func() { betweenReads = was }
}

// SetBetweenSetAndRead replaces what a completions-share-the-active-provider
// completion runs between setting the active provider and reading it, and
// returns a function restoring it.
func SetBetweenSetAndRead(f func()) (restore func()) {
	was := betweenSetAndRead
	betweenSetAndRead = f
	return func() { betweenSetAndRead = was }
}
