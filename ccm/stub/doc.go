// Package stub holds the formats a purge leaves in a transcript for the
// content it moved to the CCM store, which ccm restore reads back.
package stub
