// Package ui is how ccm shows things to people: byte counts, numbers and
// durations formatted one way, the progress bar of long batch and store
// operations, and tables that fit the terminal. Commands decide whether
// their output is a terminal; ui only formats and draws. It imports nothing
// of ccm.
package ui
