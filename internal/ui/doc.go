// Package ui is how ccm shows things to people: byte counts (decimal
// units, 1 KB = 1,000 bytes), numbers and durations formatted one way
// (Bytes, Count, Age), the progress bar of long batch and store operations
// (Bar), and tables that fit the terminal (Table). Commands decide whether
// their output is a terminal; ui only formats and draws. It imports nothing
// of ccm.
package ui
