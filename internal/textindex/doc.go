// Package textindex is a compact inverted index of words over documents
// kept elsewhere: it answers which documents hold every word of a query,
// and the caller reads those documents back to confirm phrases, regular
// expressions and to cut snippets. It imports nothing of ccm.
//
// Words are maximal runs of letters, digits, marks and '_' (ASCII and
// Unicode), lowercased. A word is kept as a 40-bit hash, never as text, so
// the index holds no readable words; two words whose hashes collide only
// make a few documents candidates that the caller's check rejects.
//
// An index is a set of immutable segment files. A segment holds, per
// word hash, the ascending list of its documents (delta varints), a
// dictionary of hashes in blocks of 128, and a fixed-size table of
// document metadata (where the document is, when, of which kind). A
// Builder collects the postings of many documents in one slice of
// (hash, doc) pairs that a radix sort orders in five passes: no map is
// touched per word, which keeps indexing near the speed of reading.
package textindex
